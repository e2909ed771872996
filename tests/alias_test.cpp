// tests/alias_test.cpp: the alias and effect analysis (core/alias.h, DESIGN §5).
//
// Programs are built in C++ here, one per rule: views and view chains, `*_copy` view variants,
// `expand_as` precision, `Tensor(a -> *)` lists and their getitems, `Tensor(a!)[]` list writes,
// `out=` kwargs, `_share_alloc_with_arg_idx`, schema-less targets and delegates, ancestors and
// siblings (H10), and the per-root last readers and writers.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/alias.h"
#include "core/placement.h"
#include "core/schema.h"
#include "core/validate.h"
#include "tests/builder.h"
#include "tests/testing.h"

namespace wb {
namespace {

using Names = std::vector<std::string>;

using testing::Builder;
using testing::I;
using testing::L;
using testing::R;

// The analysis with the builtin table plus extra schemas given as text.
struct Analysed {
  Program program;
  AliasInfo info;
  Names roots(const std::string& v) const { return rootNames(info, program.graph, v); }
  Names reads(const std::string& n) const { return readNames(info, program.graph, n); }
  Names writes(const std::string& n) const { return writeNames(info, program.graph, n); }
  NodeId id(const std::string& n) const { return static_cast<NodeId>(program.graph.indexOf(n).value()); }
  bool alias(const std::string& a, const std::string& b) const { return info.mayAliasRoots(id(a), id(b)); }
};

Analysed analyse(Program program, std::vector<std::string> extraSchemas = {}, AliasOptions options = {}) {
  program.schemas = std::move(extraSchemas);
  SchemaTable table = schemasFor(program, builtinSchemas());
  AliasInfo info = analyzeAliases(program, table, options);
  return {std::move(program), std::move(info)};
}

TEST(Alias, PlaceholdersAndFreshResultsAreTheirOwnRoots) {
  Analysed a = analyse(Builder().buffer("b_s", "s").input("x").call("add", "aten::add.Tensor", {R("b_s"), R("x")}).done({"add"}));
  EXPECT_EQ(a.roots("b_s"), Names{"b_s"});
  EXPECT_EQ(a.roots("x"), Names{"x"});
  EXPECT_EQ(a.roots("add"), Names{"add"});
  EXPECT_EQ(a.reads("add"), (Names{"b_s", "x"}));
  EXPECT_TRUE(a.writes("add").empty());
  EXPECT_FALSE(a.alias("add", "b_s"));
  EXPECT_FALSE(a.info.isConservative(a.id("add")));
  // The output node reads what it returns but is no reader for placement purposes.
  EXPECT_EQ(a.reads("output"), Names{"add"});
  EXPECT_EQ(a.info.lastReader(a.id("add")).node, kNoNode);
  EXPECT_EQ(a.info.lastReader(a.id("b_s")).node, a.id("add"));
  EXPECT_EQ(a.info.returned(), std::vector<NodeId>{a.id("add")});
}

TEST(Alias, ARootReadThroughSeveralArgumentsIsReadOnceThroughTheFirst) {
  // mul reads b_s through %v (a view of it) and through b_s itself, and x once: each root once,
  // sorted by root, the first argument through which it is reached kept as the via.
  Analysed a = analyse(Builder()
                           .buffer("b_s", "s")
                           .input("x")
                           .call("v", "aten::view", {R("b_s"), L({I(2), I(2)})})
                           .call("mul", "aten::mul.Tensor", {R("x"), R("v")})
                           .call("add", "aten::add.Tensor", {R("v"), R("b_s")})
                           .done({"mul", "add"}));
  EXPECT_EQ(a.reads("mul"), (Names{"b_s", "x"}));
  EXPECT_EQ(a.reads("add"), Names{"b_s"});
  ASSERT_EQ(a.info.reads(a.id("add")).size(), 1u);
  EXPECT_EQ(a.info.reads(a.id("add"))[0].via, a.id("v"));
  EXPECT_EQ(a.info.lastReader(a.id("b_s")).node, a.id("add"));
  EXPECT_EQ(a.info.lastReader(a.id("b_s")).via, a.id("v"));
  EXPECT_EQ(a.info.lastReader(a.id("x")).node, a.id("mul"));
  EXPECT_EQ(a.roots("add"), Names{"add"});
  EXPECT_TRUE(a.writes("add").empty());
}

TEST(Alias, ViewChainsShareTheBaseRoot) {
  Analysed a = analyse(Builder()
                           .buffer("b_s", "s")
                           .call("view", "aten::view", {R("b_s"), L({I(2), I(2)})})
                           .call("select", "aten::select.int", {R("view"), I(0), I(1)})
                           .call("t", "aten::transpose.int", {R("select"), I(0), I(0)})
                           .call("sum_1", "aten::sum.dim_IntList", {R("t"), L({I(0)})})
                           .done({"sum_1"}));
  EXPECT_EQ(a.roots("view"), Names{"b_s"});
  EXPECT_EQ(a.roots("select"), Names{"b_s"});
  EXPECT_EQ(a.roots("t"), Names{"b_s"});
  EXPECT_EQ(a.roots("sum_1"), Names{"sum_1"});
  EXPECT_EQ(a.reads("sum_1"), Names{"b_s"});
  // The last reader of b_s is sum_1, through %t.
  LastAccess last = a.info.lastReader(a.id("b_s"));
  EXPECT_EQ(last.node, a.id("sum_1"));
  EXPECT_EQ(last.via, a.id("t"));
}

TEST(Alias, CopyViewVariantsAliasTheirSelf) {
  Builder b;
  b.buffer("b_s", "s").input("x");
  b.call("vc", "aten::view_copy", {R("b_s"), L({I(2), I(2)})});
  b.call("sc", "aten::slice_copy.Tensor", {R("vc"), I(0), I(0), I(1)});
  b.call("selc", "aten::select_copy.int", {R("b_s"), I(0), I(0)});
  b.call("pc", "aten::permute_copy", {R("vc"), L({I(1), I(0)})});
  b.call("ec", "aten::expand_copy", {R("x"), L({I(4)})});
  b.call("tc", "aten::t_copy", {R("pc")});
  b.call("uv", "aten::_unsafe_view", {R("b_s"), L({I(4)})});
  b.call("ac", "aten::alias_copy", {R("b_s")});
  b.call("asc", "aten::as_strided_copy", {R("b_s"), L({I(2)}), L({I(1)})});
  b.call("spc", "aten::split_copy.Tensor", {R("b_s"), I(2)});
  b.call("g", "operator.getitem", {R("spc"), I(1)});
  b.call("ub", "aten::unbind_copy.int", {R("x")});
  b.call("g2", "operator.getitem", {R("ub"), I(0)});
  Analysed a = analyse(b.done({"sc", "selc", "ec", "tc", "uv", "ac", "asc", "g", "g2"}));
  for (const char* v : {"vc", "sc", "selc", "pc", "tc", "uv", "ac", "asc", "spc", "g"})
    EXPECT_EQ(a.roots(v), Names{"b_s"}) << v;
  EXPECT_EQ(a.roots("ec"), Names{"x"});
  EXPECT_EQ(a.roots("g2"), Names{"x"});
  EXPECT_TRUE(a.alias("g", "sc"));
  EXPECT_FALSE(a.alias("g2", "sc"));

  // Before ReplaceViewCopyWithViewPass they are copies: fresh roots.
  Analysed before = analyse(a.program, {}, AliasOptions{.copyViewsAlias = false});
  EXPECT_EQ(before.roots("vc"), Names{"vc"});
  EXPECT_EQ(before.roots("g"), Names{"spc"});

  EXPECT_TRUE(isCopyViewVariant("aten::view_copy"));
  EXPECT_TRUE(isCopyViewVariant("aten::squeeze_copy.dim"));
  EXPECT_TRUE(isCopyViewVariant("aten::narrow_copy"));
  EXPECT_FALSE(isCopyViewVariant("aten::copy"));
  EXPECT_FALSE(isCopyViewVariant("aten::_to_copy"));
  EXPECT_FALSE(isCopyViewVariant("aten::lift_fresh_copy"));
  EXPECT_FALSE(isCopyViewVariant("my_ops::view_copy"));
}

// A view (or `*_copy` view) of a constant aliases no storage of the graph: its result is storage
// of its own, or a write through it would be lost (text_program_fuzzer's
// corpus/regressions/crashes/view_copy_of_a_constant_is_storage.txt).
TEST(Alias, ViewsOfAConstantAreTheirOwnRoots) {
  Builder b;
  b.buffer("b_s", "s").input("x");
  b.call("pc", "aten::permute_copy", {Arg::token("b_st.te"), L({I(1), I(0)})});
  b.call("v", "aten::view", {Arg::token("b_st.te"), L({I(4)})});
  b.call("scale", "wbgen::scale_all_", {L({R("pc"), R("v")}), I(2)});
  const Program program = b.done({"pc", "v"});
  for (bool copyViewsAlias : {true, false}) {
    SCOPED_TRACE(copyViewsAlias ? "alias-views" : "copy-views");
    Analysed a = analyse(program, {"wbgen::scale_all_(Tensor(a!)[] self, Scalar s) -> ()"},
                         AliasOptions{.copyViewsAlias = copyViewsAlias});
    EXPECT_EQ(a.roots("pc"), Names{"pc"});
    EXPECT_EQ(a.roots("v"), Names{"v"});
    EXPECT_EQ(a.writes("scale"), (Names{"pc", "v"}));
  }
}

TEST(Alias, OutVariantOfACopyViewAliasesOnlyItsOut) {
  Analysed a = analyse(Builder()
                           .buffer("b_s", "s")
                           .input("x")
                           .callWithKwargs("u", "aten::unbind_copy.int_out", {R("x"), I(0)}, {{"out", L({R("b_s")})}})
                           .done({"x"}));
  EXPECT_EQ(a.writes("u"), Names{"b_s"});
  EXPECT_EQ(a.reads("u"), (Names{"b_s", "x"}));
  EXPECT_TRUE(a.roots("u").empty());  // -> ()
}

TEST(Alias, ExpandAsAliasesItsSelfOnly) {
  // expand_as(Tensor(a) self, Tensor other) -> Tensor(a): the buffer flows into `other`.
  Analysed a = analyse(Builder()
                           .buffer("b_s", "s")
                           .input("x")
                           .call("e", "aten::expand_as", {R("x"), R("b_s")})
                           .done({"e"}));
  EXPECT_EQ(a.roots("e"), Names{"x"});
  EXPECT_FALSE(a.alias("e", "b_s"));
  EXPECT_EQ(a.reads("e"), (Names{"b_s", "x"}));
  EXPECT_TRUE(a.writes("e").empty());
}

TEST(Alias, InPlaceOpsWriteTheirSelfOnly) {
  Analysed a = analyse(Builder()
                           .buffer("b_s", "s")
                           .input("x")
                           .input("i")
                           .call("ip", "aten::index_put_", {R("b_s"), L({R("i")}), R("x")})
                           .call("cp", "aten::copy_", {R("b_s"), R("x")})
                           .call("mf", "aten::masked_fill_.Scalar", {R("x"), R("b_s"), I(0)})
                           .done({"ip"}));
  EXPECT_EQ(a.roots("ip"), Names{"b_s"});
  EXPECT_EQ(a.writes("ip"), Names{"b_s"});
  EXPECT_EQ(a.reads("ip"), (Names{"b_s", "x", "i"}));
  EXPECT_EQ(a.roots("cp"), Names{"b_s"});
  EXPECT_EQ(a.writes("cp"), Names{"b_s"});
  EXPECT_EQ(a.roots("mf"), Names{"x"});  // not the mask
  EXPECT_EQ(a.writes("mf"), Names{"x"});
  EXPECT_TRUE(a.info.isInplaceKind(a.id("ip")));
  EXPECT_EQ(a.info.firstArg(a.id("ip")), a.id("b_s"));
  LastAccess w = a.info.lastWriter(a.id("b_s"));
  EXPECT_EQ(w.node, a.id("cp"));
  EXPECT_EQ(a.info.lastReader(a.id("b_s")).node, a.id("mf"));
}

TEST(Alias, SplitListElementsAliasSelfThroughGetitem) {
  Analysed a = analyse(Builder()
                           .buffer("b_s", "s")
                           .input("x")
                           .call("sp", "aten::split.Tensor", {R("b_s"), I(2)})
                           .call("g0", "operator.getitem", {R("sp"), I(0)})
                           .call("g1", "operator.getitem", {R("sp"), I(1)})
                           .call("ch", "aten::chunk", {R("x"), I(2)})
                           .call("c0", "operator.getitem", {R("ch"), I(0)})
                           .call("r", "aten::relu_", {R("g1")})
                           .done({"g0", "c0", "r"}));
  EXPECT_EQ(a.roots("sp"), Names{"b_s"});
  EXPECT_EQ(a.roots("g0"), Names{"b_s"});
  EXPECT_EQ(a.roots("g1"), Names{"b_s"});
  EXPECT_EQ(a.roots("c0"), Names{"x"});
  // getitem is a projection: it touches no storage.
  EXPECT_TRUE(a.reads("g0").empty());
  EXPECT_TRUE(a.writes("g0").empty());
  // relu_ of one element writes the buffer, hence every sibling element.
  EXPECT_EQ(a.writes("r"), Names{"b_s"});
  EXPECT_TRUE(a.alias("g0", "r"));
  EXPECT_FALSE(a.alias("c0", "r"));
}

TEST(Alias, TupleReturnsGiveEachGetitemItsElement) {
  // _native_batch_norm_legit writes running_mean and running_var; its three results are fresh.
  Analysed a = analyse(Builder()
                           .buffer("b_mean", "mean")
                           .buffer("b_var", "var")
                           .input("x")
                           .call("bn", "aten::_native_batch_norm_legit",
                                 {R("x"), Arg::none(), Arg::none(), R("b_mean"), R("b_var"), Arg::ofBool(true),
                                  Arg::ofFloat(0.1), Arg::ofFloat(1e-5)})
                           .call("g0", "operator.getitem", {R("bn"), I(0)})
                           .call("t", "my_ops::two", {R("x"), R("b_mean")})
                           .call("t0", "operator.getitem", {R("t"), I(0)})
                           .call("t1", "operator.getitem", {R("t"), I(1)})
                           .done({"g0", "t0", "t1"}),
                       {"my_ops::two(Tensor(a) self, Tensor(b!) other) -> (Tensor(b!), Tensor(a))"});
  EXPECT_EQ(a.writes("bn"), (Names{"b_mean", "b_var"}));
  EXPECT_EQ(a.roots("g0"), Names{"bn"});
  EXPECT_EQ(a.roots("t0"), Names{"b_mean"});
  EXPECT_EQ(a.roots("t1"), Names{"x"});
  EXPECT_EQ(a.roots("t"), (Names{"b_mean", "x"}));
  EXPECT_EQ(a.writes("t"), Names{"b_mean"});
  EXPECT_FALSE(a.info.isInplaceKind(a.id("bn")));  // mutable, but not in-place kind
}

TEST(Alias, ListArgumentsAreWrittenElementByElement) {
  Analysed a = analyse(Builder()
                           .buffer("b_s", "s")
                           .input("x")
                           .input("y")
                           .call("v", "aten::add.Tensor", {R("x"), I(1)})
                           .call("view", "aten::view_copy", {R("v"), L({I(4)})})
                           .call("scale", "my_ops::scale_all_", {L({R("view"), R("y")}), I(2)})
                           .call("fe", "aten::_foreach_add_.Scalar", {L({R("b_s")}), I(1)})
                           .call("fl", "aten::_foreach_add.List", {L({R("b_s")}), L({R("x")})})
                           .done({"v"}),
                       {"my_ops::scale_all_(Tensor(a!)[] self, Scalar s) -> ()"});
  EXPECT_EQ(a.writes("scale"), (Names{"y", "v"}));  // sorted by root (node order)
  EXPECT_EQ(a.writes("fe"), Names{"b_s"});
  EXPECT_TRUE(a.writes("fl").empty());
  EXPECT_EQ(a.roots("fl"), Names{"fl"});
  EXPECT_EQ(a.info.lastWriter(a.id("v")).node, a.id("scale"));
  EXPECT_EQ(a.info.lastWriter(a.id("v")).via, a.id("view"));
}

TEST(Alias, OutKwargsAreWritten) {
  Analysed a = analyse(Builder()
                           .buffer("b_s", "s")
                           .input("x")
                           .callWithKwargs("ao", "aten::add.out", {R("x"), R("x")}, {{"out", R("b_s")}})
                           .call("uc", "llama::update_cache", {R("x"), R("b_s"), I(0)})
                           .done({"ao", "uc"}));
  EXPECT_EQ(a.roots("ao"), Names{"b_s"});
  EXPECT_EQ(a.writes("ao"), Names{"b_s"});
  EXPECT_EQ(a.writes("uc"), Names{"b_s"});
  EXPECT_EQ(a.roots("uc"), Names{"uc"});  // update_cache returns a fresh tensor
}

TEST(Alias, ShareAllocResultsLiveInTheirArgumentAndWriteIt) {
  Analysed a = analyse(Builder()
                           .buffer("b_s", "s")
                           .input("x")
                           .call("y", "aten::relu", {R("b_s")}, {}, {{"_share_alloc_with_arg_idx", "0"}})
                           .call("z", "aten::add.Tensor", {R("y"), I(1)})
                           .call("w", "aten::mul.Tensor", {R("x"), R("z")}, {}, {{"_share_alloc_with_arg_idx", "1"}})
                           .done({"z", "w"}));
  EXPECT_EQ(a.roots("y"), Names{"b_s"});
  EXPECT_EQ(a.writes("y"), Names{"b_s"});
  EXPECT_EQ(a.reads("z"), Names{"b_s"});
  EXPECT_EQ(a.roots("w"), Names{"z"});
  EXPECT_EQ(a.writes("w"), Names{"z"});
  EXPECT_EQ(a.info.lastWriter(a.id("b_s")).node, a.id("y"));
}

TEST(Alias, SchemaLessTargetsAreConservative) {
  Analysed a = analyse(Builder()
                           .buffer("b_s", "s")
                           .input("x")
                           .getAttr("lowered_module_0")
                           .call("d", "executorch_call_delegate", {R("lowered_module_0"), R("b_s"), R("x")})
                           .call("g", "operator.getitem", {R("d"), I(0)})
                           .call("m", "my_ops::mystery", {R("g")})
                           .call("c", "higher_order::cond", {Arg::ofBool(true), R("lowered_module_0"), R("lowered_module_0"), L({R("x")})})
                           .module("mod", {R("b_s")})
                           .call("r", "aten::add.Tensor", {R("g"), I(1)})
                           .done({"r", "m", "c", "mod"}));
  EXPECT_TRUE(a.info.isConservative(a.id("d")));
  EXPECT_EQ(a.roots("d"), (Names{"b_s", "x", "lowered_module_0", "d"}));
  EXPECT_EQ(a.writes("d"), (Names{"b_s", "x", "lowered_module_0"}));
  EXPECT_EQ(a.roots("g"), a.roots("d"));
  EXPECT_TRUE(a.alias("g", "b_s"));
  EXPECT_EQ(a.writes("m"), a.roots("d"));
  EXPECT_EQ(a.roots("m"), (Names{"b_s", "x", "lowered_module_0", "d", "m"}));
  EXPECT_EQ(a.writes("c"), (Names{"x", "lowered_module_0"}));
  EXPECT_TRUE(a.info.isConservative(a.id("mod")));
  EXPECT_EQ(a.writes("mod"), Names{"b_s"});
  // r reads b_s through the getitem of the delegate.
  EXPECT_TRUE(a.info.readsRoot(a.id("r"), a.id("b_s")));
  EXPECT_EQ(a.info.lastReader(a.id("b_s")).node, a.id("r"));
  EXPECT_EQ(a.info.lastReader(a.id("b_s")).via, a.id("g"));
}

TEST(Alias, ArgumentsThatDoNotBindMakeTheNodeConservative) {
  Analysed a = analyse(Builder()
                           .buffer("b_s", "s")
                           .input("x")
                           .callWithKwargs("bad", "aten::relu", {R("x")}, {{"nonsense", R("b_s")}})
                           .call("many", "aten::relu", {R("x"), R("b_s")})
                           .done({"bad", "many"}));
  EXPECT_TRUE(a.info.isConservative(a.id("bad")));
  EXPECT_EQ(a.writes("bad"), (Names{"b_s", "x"}));
  EXPECT_TRUE(a.info.isConservative(a.id("many")));
}

// They bind as the oracle binds them (oracle/ops.cpp, bindArguments), which interprets a call
// that does not bind as an op without a schema: a required parameter left out, or a
// keyword-only one given by position, makes the node conservative. An in-place op among them
// is no in-place lineage either: its result need not be its self (text_program_fuzzer's
// corpus/regressions/crashes/inplace_call_missing_an_argument.txt).
TEST(Alias, CallsBindAsTheOracleBindsThem) {
  Analysed a = analyse(Builder()
                           .buffer("b_s", "s")
                           .input("x")
                           .call("missing", "aten::add.Tensor", {R("x")})
                           .callWithKwargs("keyword", "aten::add.Tensor", {R("x")}, {{"other", R("b_s")}})
                           .call("kwonly", "aten::add.Tensor", {R("x"), R("b_s"), I(2)})
                           .call("put", "aten::index_put_", {R("b_s"), L({R("x")})})
                           .call("put2", "aten::index_put_", {R("b_s"), L({R("x")}), R("x")})
                           .done({"missing", "keyword", "kwonly", "put", "put2"}));
  EXPECT_TRUE(a.info.isConservative(a.id("missing")));
  EXPECT_FALSE(a.info.isConservative(a.id("keyword")));
  EXPECT_TRUE(a.writes("keyword").empty());
  EXPECT_TRUE(a.info.isConservative(a.id("kwonly")));
  EXPECT_TRUE(a.info.isConservative(a.id("put")));
  EXPECT_FALSE(a.info.isInplaceKind(a.id("put")));
  EXPECT_FALSE(a.info.isConservative(a.id("put2")));
  EXPECT_TRUE(a.info.isInplaceKind(a.id("put2")));
  EXPECT_EQ(a.roots("put2"), Names{"b_s"});
}

TEST(Alias, NonTensorResultsHaveNoRoots) {
  Analysed a = analyse(Builder()
                           .input("x")
                           .call("sz", "aten::sym_size.int", {R("x"), I(0)})
                           .call("sz2", "operator.mul", {R("sz"), I(2)})
                           .call("v", "aten::view_copy", {R("x"), L({R("sz2")})})
                           .done({"v"}));
  a.program.graph.nodes[2].typeText = "Sym(2*s0)";
  a = analyse(a.program);
  EXPECT_TRUE(a.roots("sz").empty());
  EXPECT_TRUE(a.roots("sz2").empty());  // schema-less, but annotated as a SymInt
  EXPECT_EQ(a.reads("sz"), Names{"x"});
  EXPECT_EQ(a.roots("v"), Names{"x"});
  EXPECT_EQ(a.reads("v"), Names{"x"});
}

TEST(Alias, AncestorsAndSiblingsShareRoots) {
  // H10: t = mul(x,2); v = relu_(t); u = add_(t, 1): u writes v's storage.
  Analysed a = analyse(Builder()
                           .input("x")
                           .call("t", "aten::mul.Tensor", {R("x"), I(2)})
                           .call("v", "aten::relu_", {R("t")})
                           .call("sib", "aten::select.int", {R("t"), I(0), I(0)})
                           .call("u", "aten::add_.Tensor", {R("t"), I(1)})
                           .call("w", "aten::mul_.Scalar", {R("sib"), I(3)})
                           .done({"v", "u", "w"}));
  EXPECT_EQ(a.roots("v"), Names{"t"});
  EXPECT_EQ(a.writes("u"), Names{"t"});
  EXPECT_TRUE(a.alias("v", "u"));
  EXPECT_TRUE(a.alias("v", "sib"));
  EXPECT_TRUE(a.alias("v", "w"));
  LastAccess last = a.info.lastWriter(a.id("t"));
  EXPECT_EQ(last.node, a.id("w"));
  EXPECT_EQ(last.via, a.id("sib"));
  EXPECT_TRUE(a.info.writesRoot(a.id("u"), a.id("t")));
  EXPECT_FALSE(a.info.writesRoot(a.id("u"), a.id("x")));
}

TEST(Alias, ScalesLinearlyOnLongChains) {
  // 200k nodes of alternating views and in-place ops on one buffer: one root throughout.
  Builder b;
  b.buffer("b_s", "s");
  std::string prev = "b_s";
  for (int i = 0; i < 100000; ++i) {
    std::string v = "v" + std::to_string(i), w = "w" + std::to_string(i);
    b.call(v, "aten::view_copy", {R(prev), L({I(4)})});
    b.call(w, "aten::add_.Tensor", {R(v), I(1)});
    prev = w;
  }
  Analysed a = analyse(b.done({prev}));
  EXPECT_EQ(a.roots(prev), Names{"b_s"});
  EXPECT_EQ(a.info.lastWriter(0).node, a.id(prev));
}

}  // namespace
}  // namespace wb
