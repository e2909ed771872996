// tests/memplan_test.cpp: the memory-planner model (core/memplan.h) on hand-built placed
// programs whose lifetimes, peaks and greedy layouts are worked out by hand in the comments
// (executorch-semantics §5.4, §6). Every program here already contains its write-back copies.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "core/memplan.h"
#include "core/placement.h"
#include "core/schema.h"
#include "tests/testing.h"

namespace wb {
namespace {

// ---------------------------------------------------------------------------------------------
// A small builder for placed programs, in the order the nodes are written.

Arg R(const std::string& name) { return testing::ref(name); }
Arg I(std::int64_t v) { return Arg::ofInt(v); }
Arg L(std::vector<Arg> items) { return Arg::list(std::move(items)); }

class Sketch {
 public:
  Sketch& input(std::string name, std::string type, InputKind kind = InputKind::UserInput, std::string target = {}) {
    program_.graph.nodes.push_back(Node::placeholder(name, std::move(type)));
    program_.signature.inputs.push_back(InputSpec{kind, std::move(name), std::move(target),
                                                  kind == InputKind::Buffer ? std::optional<bool>(true) : std::nullopt});
    return *this;
  }
  Sketch& buffer(std::string name, std::string type, std::string fqn) {
    return input(std::move(name), std::move(type), InputKind::Buffer, std::move(fqn));
  }
  Sketch& call(std::string name, std::string target, std::vector<Arg> args, std::string type = {},
               NodeMeta meta = {}) {
    program_.graph.nodes.push_back(
        Node::call(std::move(name), std::move(target), std::move(args), {}, std::move(type), std::move(meta)));
    return *this;
  }
  Sketch& getAttr(std::string name) {
    Node n;
    n.name = name;
    n.op = NodeOp::GetAttr;
    n.target = std::move(name);
    program_.graph.nodes.push_back(std::move(n));
    return *this;
  }
  Sketch& getitem(std::string name, std::string of, std::int64_t index, std::string type) {
    return call(std::move(name), "operator.getitem", {R(std::move(of)), I(index)}, std::move(type));
  }
  // A write-back: `copy_(buffer, value)` whose output spec is the BUFFER_MUTATION of `fqn`.
  Sketch& writeBack(std::string name, std::string bufferPlaceholder, std::string value, std::string fqn) {
    mutations_.push_back(OutputSpec{OutputKind::BufferMutation, name, std::move(fqn)});
    return call(std::move(name), "aten::copy_", {R(std::move(bufferPlaceholder)), R(std::move(value))});
  }
  Sketch& userOutput(std::string name) {
    userOutputs_.push_back(OutputSpec{OutputKind::UserOutput, std::move(name), {}});
    return *this;
  }
  Program finish() const {
    Program p = program_;
    Node out;
    out.name = "output";
    out.op = NodeOp::Output;
    out.target = "output";
    std::vector<Arg> returned;
    for (const OutputSpec& s : mutations_) {
      returned.push_back(R(s.name));
      p.signature.outputs.push_back(s);
    }
    for (const OutputSpec& s : userOutputs_) {
      returned.push_back(R(s.name));
      p.signature.outputs.push_back(s);
    }
    out.args.push_back(Arg::tuple(std::move(returned)));
    p.graph.nodes.push_back(std::move(out));
    testing::resolveRefs(p);
    return p;
  }

 private:
  Program program_;
  std::vector<OutputSpec> mutations_;
  std::vector<OutputSpec> userOutputs_;
};

const SchemaTable& schemas() {
  static const SchemaTable table = builtinSchemas();
  return table;
}

MemoryPlan plan(const Program& p, const PlanOptions& options = {}) { return planMemory(p, schemas(), options); }

const PlannedTensor* tensor(const MemoryPlan& plan, std::string_view node, int element = -1) {
  for (const PlannedTensor& t : plan.tensors)
    if (t.node == node && t.element == element) return &t;
  return nullptr;
}

// "node:start-end" for every planned tensor, in collection order: one string to compare.
std::string lifetimes(const MemoryPlan& plan) {
  std::string s;
  for (const PlannedTensor& t : plan.tensors) {
    if (!s.empty()) s += ' ';
    s += t.node + (t.element >= 0 ? "[" + std::to_string(t.element) + "]" : "") + ":" + std::to_string(t.start) +
         "-" + std::to_string(t.end);
  }
  return s;
}

bool hasAlias(const PlannedTensor& t, std::string_view node, AliasKind kind) {
  return std::any_of(t.aliases.begin(), t.aliases.end(),
                     [&](const SpecAlias& a) { return a.node == node && a.kind == kind; });
}

// ---------------------------------------------------------------------------------------------
// The running example: a buffer updated from a user input, and a user output computed after
// the update. Every tensor is f32[8] = 32 bytes (already a multiple of 16).
//
//   end                                   early
//   0 b_buf                               0 b_buf
//   1 x                                   1 x
//   2 add    = add(b_buf, x)              2 add    = add(b_buf, x)
//   3 mul    = mul(x, x)                  3 copy_  = copy_(b_buf, add)    <- right after add
//   4 copy_  = copy_(b_buf, add)          4 mul    = mul(x, x)
//   5 output (copy_, mul)                 5 output (copy_, mul)
Program counterEnd() {
  return Sketch()
      .buffer("b_buf", "f32[8]", "buf")
      .input("x", "f32[8]")
      .call("add", "aten::add.Tensor", {R("b_buf"), R("x")}, "f32[8]")
      .call("mul", "aten::mul.Tensor", {R("x"), R("x")}, "f32[8]")
      .writeBack("copy_", "b_buf", "add", "buf")
      .userOutput("mul")
      .finish();
}
Program counterEarly() {
  return Sketch()
      .buffer("b_buf", "f32[8]", "buf")
      .input("x", "f32[8]")
      .call("add", "aten::add.Tensor", {R("b_buf"), R("x")}, "f32[8]")
      .writeBack("copy_", "b_buf", "add", "buf")
      .call("mul", "aten::mul.Tensor", {R("x"), R("x")}, "f32[8]")
      .userOutput("mul")
      .finish();
}

TEST(MemPlanLifetimes, PlaceholderAtZeroBufferToMaxCopySharesBuffer) {
  MemoryPlan end = plan(counterEnd());
  // b_buf: mutable buffer, [0, max=5]. x: placeholder, from 0 to its last use (mul at 3).
  // add: from its node to the copy (4). mul: a graph output, to the output node (5).
  // copy_ is in-place: it shares b_buf's spec and adds no allocation.
  EXPECT_EQ(lifetimes(end), "b_buf:0-5 x:0-3 add:2-4 mul:3-5");
  ASSERT_EQ(end.tensors.size(), 4u);
  EXPECT_TRUE(end.tensors[0].mutableBuffer);
  EXPECT_TRUE(hasAlias(end.tensors[0], "copy_", AliasKind::InPlace));
  EXPECT_TRUE(tensor(end, "x")->graphInput);
  EXPECT_TRUE(tensor(end, "add")->writeBackValue);
  EXPECT_TRUE(tensor(end, "mul")->graphOutput);
  EXPECT_EQ(tensor(end, "mul")->allocatedBytes, 32);
  ASSERT_EQ(end.writeBacks.size(), 1u);
  EXPECT_EQ(end.writeBacks[0].copyNode, "copy_");
  EXPECT_EQ(end.writeBacks[0].index, 4);
  EXPECT_EQ(end.writeBacks[0].buffer, "b_buf");
  EXPECT_EQ(end.writeBacks[0].value, "add");
  EXPECT_TRUE(end.unplanned.empty());

  MemoryPlan early = plan(counterEarly());
  // The early copy cuts add at 3; x now lives to mul at 4.
  EXPECT_EQ(lifetimes(early), "b_buf:0-5 x:0-4 add:2-3 mul:4-5");
}

TEST(MemPlanMeasures, PeakAndGreedyOnTheRunningExample) {
  MemoryPlan end = plan(counterEnd());
  // end: at index 3 all four are live: 4 * 32.
  EXPECT_EQ(end.peakLiveBytes, 128);
  EXPECT_EQ(end.peakIndex, 3);
  EXPECT_EQ(end.liveBytes, (std::vector<std::int64_t>{64, 64, 96, 128, 96, 64}));
  // greedy: equal sizes go in reverse collection order: mul, add, x, b_buf. They overlap
  // pairwise (mul [3,5] and add [2,4] share 3..4; x [0,3] meets both; b_buf everything), and no
  // shared object has room above another, so four shared objects: 128 bytes.
  EXPECT_EQ(end.arenaBytes, 128);
  EXPECT_EQ(end.sharedObjects.size(), 4u);
  EXPECT_EQ(tensor(end, "mul")->sharedObject, 0);
  EXPECT_EQ(tensor(end, "b_buf")->memOffset, 96);

  MemoryPlan early = plan(counterEarly());
  // early: never more than three live at once; mul [4,5] and add [2,3] share shared object 0.
  EXPECT_EQ(early.peakLiveBytes, 96);
  EXPECT_EQ(early.arenaBytes, 96);
  EXPECT_EQ(tensor(early, "mul")->sharedObject, tensor(early, "add")->sharedObject);
  EXPECT_EQ(tensor(early, "mul")->memOffset, tensor(early, "add")->memOffset);

  PlanComparison c = comparePlans(end, early);
  EXPECT_EQ(c.peakSavedBytes, 32);
  EXPECT_DOUBLE_EQ(c.peakSavedPercent, 25.0);
  EXPECT_EQ(c.arenaSavedBytes, 32);
}

TEST(MemPlanLifetimes, AlignmentRoundsUpTo16) {
  Program p = Sketch()
                  .input("x", "f32[3]")  // 12 bytes -> 16
                  .call("big", "aten::relu", {R("x")}, "f64[5]")  // 40 bytes -> 48
                  .userOutput("big")
                  .finish();
  MemoryPlan m = plan(p);
  EXPECT_EQ(tensor(m, "x")->nbytes, 12);
  EXPECT_EQ(tensor(m, "x")->allocatedBytes, 16);
  EXPECT_EQ(tensor(m, "big")->allocatedBytes, 48);
}

TEST(MemPlanLifetimes, ConstantsAreNotPlannedAndUnsizedNodesAreReported) {
  Program p = Sketch()
                  .input("p_weight", "f32[8]", InputKind::Parameter, "weight")
                  .buffer("b_stats", "f32[8]", "stats")  // never mutated: const too (§3 step 6)
                  .input("x", "f32[s0]")                 // symbolic: not guessed
                  .call("mul", "aten::mul.Tensor", {R("x"), R("p_weight")}, "f32[8]")
                  .call("add", "aten::add.Tensor", {R("mul"), R("b_stats")})  // no annotation
                  .call("sym", "aten::sym_size.int", {R("x"), I(0)}, "Sym(s0)")  // not a tensor
                  .userOutput("add")
                  .finish();
  MemoryPlan m = plan(p);
  EXPECT_EQ(lifetimes(m), "mul:3-4");
  EXPECT_EQ(m.constantSpecs, 2u);
  ASSERT_EQ(m.unplanned.size(), 2u);
  EXPECT_EQ(m.unplanned[0].node, "x");
  EXPECT_NE(m.unplanned[0].reason.find("symbolic"), std::string::npos);
  EXPECT_EQ(m.unplanned[1].node, "add");
}

// Every form of annotation is sized as TensorType reads it (static shapes take a path of their
// own): spaces inside and around, every dtype width, a 0-d tensor, an empty dimension, an
// unknown dtype and an element count or byte count past int64.
TEST(MemPlanLifetimes, SizesEveryAnnotationFormAsTensorTypeReadsIt) {
  const std::vector<std::pair<std::string, std::int64_t>> sized = {
      {"f32[2, 3]", 24}, {" f32[2,3] ", 24}, {"f32[ 2 , 3 ]", 24}, {"f64[5]", 40}, {"bf16[3]", 6},
      {"b8[7]", 7},      {"c128[1]", 16},    {"i64[]", 8},         {"u8[0, 9]", 0}};
  for (const auto& [type, nbytes] : sized) {
    Program p = Sketch().input("x", type).call("y", "aten::clone", {R("x")}, type).userOutput("y").finish();
    MemoryPlan m = plan(p);
    ASSERT_NE(tensor(m, "y"), nullptr) << type;
    EXPECT_EQ(tensor(m, "y")->nbytes, nbytes) << type;
    EXPECT_TRUE(m.unplanned.empty()) << type;
  }
  const std::vector<std::pair<std::string, std::string>> unsized = {
      {"q7[2]", "unknown dtype in q7[2]"},
      {"f32[4611686018427387904, 4]", "size of f32[4611686018427387904, 4] overflows"},
      {"f32[2305843009213693952]", "size of f32[2305843009213693952] overflows"},
      {"f32[2, s0]", "symbolic shape f32[2, s0]"}};
  for (const auto& [type, reason] : unsized) {
    Program p = Sketch().input("x", "f32[2]").call("y", "aten::clone", {R("x")}, type).userOutput("y").finish();
    MemoryPlan m = plan(p);
    ASSERT_EQ(m.unplanned.size(), 1u) << type;
    EXPECT_EQ(m.unplanned[0].node, "y");
    EXPECT_EQ(m.unplanned[0].reason, reason);
  }
}

// ---------------------------------------------------------------------------------------------
// Views: ReplaceViewCopyWithViewPass.

Program viewProgram(bool returnTheView) {
  Sketch s;
  s.input("x", "f32[2, 4]")
      .call("relu", "aten::relu", {R("x")}, "f32[2, 4]")
      .call("view_copy", "aten::view_copy", {R("relu"), L({I(8)})}, "f32[8]")
      .call("mul", "aten::mul.Tensor", {R("view_copy"), R("view_copy")}, "f32[8]")
      .userOutput("mul");
  if (returnTheView) s.userOutput("view_copy");
  return s.finish();
}

TEST(MemPlanViews, ViewCopySharesItsBaseUnlessAUserIsTheOutput) {
  // 0 x, 1 relu, 2 view_copy, 3 mul, 4 output.
  MemoryPlan m = plan(viewProgram(false));
  // view_copy became memory.view: relu's spec, which lives on to mul (3).
  EXPECT_EQ(lifetimes(m), "x:0-1 relu:1-3 mul:3-4");
  EXPECT_TRUE(hasAlias(*tensor(m, "relu"), "view_copy", AliasKind::View));

  // Returned: the pass leaves it a copy with its own spec, live to the output node.
  MemoryPlan returned = plan(viewProgram(true));
  EXPECT_EQ(lifetimes(returned), "x:0-1 relu:1-2 view_copy:2-4 mul:3-4");

  // remove_view_copy=False: no views at all.
  PlanOptions noViews;
  noViews.viewCopies = PlanOptions::ViewCopies::None;
  EXPECT_EQ(lifetimes(plan(viewProgram(false), noViews)), "x:0-1 relu:1-2 view_copy:2-3 mul:3-4");
}

TEST(MemPlanViews, OnlyViewCopyUnlessAllCopyViewsIsAsked) {
  Program p = Sketch()
                  .input("x", "f32[4, 4]")
                  .call("relu", "aten::relu", {R("x")}, "f32[4, 4]")
                  .call("select_copy", "aten::select_copy.int", {R("relu"), I(0), I(1)}, "f32[4]")
                  .call("neg", "aten::neg", {R("select_copy")}, "f32[4]")
                  .userOutput("neg")
                  .finish();
  // ExecuTorch's _is_view_copy matches view_copy only: select_copy keeps its own allocation.
  EXPECT_EQ(lifetimes(plan(p)), "x:0-1 relu:1-2 select_copy:2-3 neg:3-4");
  PlanOptions all;
  all.viewCopies = PlanOptions::ViewCopies::AllCopyViews;
  EXPECT_EQ(lifetimes(plan(p, all)), "x:0-1 relu:1-3 neg:3-4");
}

// ---------------------------------------------------------------------------------------------
// In-place ops: index_put_ and copy_ share the mutated input's spec.

TEST(MemPlanInPlace, IndexPutSharesTheBufferAndAddsNothing) {
  // A KV-cache step: 0 b_cache f32[4, 8] (128 B), 1 idx i64[1], 2 val f32[1, 8] (32 B),
  // 3 index_put_(b_cache, [idx], val), 4 sum = sum(b_cache) f32[8], 5 output (index_put_, sum).
  // The mutation is an in-place lineage: no copy is needed, and index_put_ adds no spec.
  Program p = Sketch()
                  .buffer("b_cache", "f32[4, 8]", "cache")
                  .input("idx", "i64[1]")
                  .input("val", "f32[1, 8]")
                  .call("index_put_", "aten::index_put_", {R("b_cache"), L({R("idx")}), R("val")}, "f32[4, 8]")
                  .call("sum_1", "aten::sum.dim_IntList", {R("index_put_"), L({I(0)})}, "f32[8]")
                  .userOutput("sum_1")
                  .finish();
  Program withMutation = p;
  // The index_put_ result is returned as the buffer's mutation.
  withMutation.graph.nodes.back().args[0].items.insert(withMutation.graph.nodes.back().args[0].items.begin(),
                                                       R("index_put_"));
  withMutation.signature.outputs.insert(withMutation.signature.outputs.begin(),
                                        OutputSpec{OutputKind::BufferMutation, "index_put_", "cache"});
  MemoryPlan m = plan(withMutation);
  EXPECT_EQ(lifetimes(m), "b_cache:0-5 idx:0-3 val:0-3 sum_1:4-5");
  EXPECT_TRUE(hasAlias(*tensor(m, "b_cache"), "index_put_", AliasKind::InPlace));
  // At 3: b_cache 128, idx 8 -> 16, val 32.
  EXPECT_EQ(m.peakLiveBytes, 128 + 16 + 32);
}

TEST(MemPlanInPlace, LateUseOfAnInPlaceResultIsReportedAsExecuTorchHasIt) {
  // 0 x, 1 t = mul(x, x), 2 y = relu_(t), 3 z = neg(x), 4 w = add(y, z), 5 output (w).
  // collect_specs_from_nodes skips in-place nodes among arguments, so w's use of y does not
  // extend t's spec: t ends at 2 and the model says so.
  Program p = Sketch()
                  .input("x", "f32[4]")
                  .call("t", "aten::mul.Tensor", {R("x"), R("x")}, "f32[4]")
                  .call("y", "aten::relu_", {R("t")}, "f32[4]")
                  .call("z", "aten::neg", {R("x")}, "f32[4]")
                  .call("w", "aten::add.Tensor", {R("y"), R("z")}, "f32[4]")
                  .userOutput("w")
                  .finish();
  MemoryPlan m = plan(p);
  EXPECT_EQ(lifetimes(m), "x:0-3 t:1-2 z:3-4 w:4-5");
  ASSERT_FALSE(m.notes.empty());
  EXPECT_NE(m.notes[0].find("%w"), std::string::npos);
  // Counting those uses instead extends t to w.
  PlanOptions counting;
  counting.inplaceArgumentsExtendLifetime = true;
  MemoryPlan c = plan(p, counting);
  EXPECT_EQ(lifetimes(c), "x:0-3 t:1-4 z:3-4 w:4-5");
  EXPECT_TRUE(c.notes.empty());
}

// ---------------------------------------------------------------------------------------------
// getitem and multi-output producers.

TEST(MemPlanGetItem, ViewListSharesTheBase) {
  // split is `Tensor(a -> *) self -> Tensor(a)[]`: both getitems are the base x.
  Program p = Sketch()
                  .input("x", "f32[4, 4]")
                  .call("split", "aten::split.Tensor", {R("x"), I(2)})
                  .getitem("getitem", "split", 0, "f32[2, 4]")
                  .getitem("getitem_1", "split", 1, "f32[2, 4]")
                  .call("add", "aten::add.Tensor", {R("getitem"), R("getitem_1")}, "f32[2, 4]")
                  .userOutput("add")
                  .finish();
  MemoryPlan m = plan(p);
  EXPECT_EQ(lifetimes(m), "x:0-4 add:4-5");
  EXPECT_TRUE(hasAlias(*tensor(m, "x"), "split", AliasKind::View));
  EXPECT_TRUE(hasAlias(*tensor(m, "x"), "getitem_1", AliasKind::GetItem));
}

TEST(MemPlanGetItem, FreshListHasOneSpecPerElement) {
  // split_copy returns fresh tensors: one spec per element, sized from the getitems. Every
  // getitem references the producer, so both elements live from 1 to the last use (add, 4).
  Program p = Sketch()
                  .input("x", "f32[4, 4]")
                  .call("split_copy", "aten::split_copy.Tensor", {R("x"), I(2)})
                  .getitem("getitem", "split_copy", 0, "f32[2, 4]")
                  .getitem("getitem_1", "split_copy", 1, "f32[2, 4]")
                  .call("add", "aten::add.Tensor", {R("getitem"), R("getitem_1")}, "f32[2, 4]")
                  .userOutput("add")
                  .finish();
  MemoryPlan m = plan(p);
  EXPECT_EQ(lifetimes(m), "x:0-1 split_copy[0]:1-4 split_copy[1]:1-4 add:4-5");
  EXPECT_TRUE(hasAlias(*tensor(m, "split_copy", 1), "getitem_1", AliasKind::GetItem));
}

TEST(MemPlanGetItem, DelegateResultsAreFreshAndUntypedElementsReported) {
  // A schema-less delegate with three results, of which only 0 and 2 are read.
  Program p = Sketch()
                  .input("x", "f32[4]")
                  .getAttr("lowered_module_0")
                  .call("executorch_call_delegate", "executorch_call_delegate", {R("lowered_module_0"), R("x")})
                  .getitem("getitem", "executorch_call_delegate", 0, "f32[4]")
                  .getitem("getitem_2", "executorch_call_delegate", 2, "f32[16]")
                  .call("neg", "aten::neg", {R("getitem")}, "f32[4]")
                  .userOutput("neg")
                  .userOutput("getitem_2")
                  .finish();
  MemoryPlan m = plan(p);
  // getitem_2 is returned: element 2 lives to the output node (7).
  EXPECT_EQ(lifetimes(m), "x:0-2 executorch_call_delegate[0]:2-5 executorch_call_delegate[2]:2-6 neg:5-6");
  ASSERT_EQ(m.unplanned.size(), 1u);
  EXPECT_EQ(m.unplanned[0].node, "executorch_call_delegate");
  EXPECT_NE(m.unplanned[0].reason.find("element 1"), std::string::npos);
  EXPECT_EQ(tensor(m, "executorch_call_delegate", 2)->allocatedBytes, 64);
}

// ---------------------------------------------------------------------------------------------
// _share_alloc_with_arg_idx: placed at the base with no overlap check (§6.6 hazard).

TEST(MemPlanShareAlloc, InplaceBaseOverlapsAnotherTenant) {
  // Every tensor f32[64] = 256 bytes.
  //   0 x         [0,1]
  //   1 t = relu(x)                    [1,3]
  //   2 y = sigmoid(t)  share_alloc=0  [2,5]  placed at t
  //   3 u = neg(t)                     [3,4]
  //   4 c = relu(u)                    [4,5]
  //   5 d = add(c, y)                  [5,6]
  //   6 output (d)
  // greedy, equal sizes in reverse collection order: d -> s0; c overlaps d -> s1; u [3,4] fits
  // s0 (d is [5,6]); y deferred; t [1,3] fits s1 (c is [4,5]); x [0,1] fits s0. Then y goes to
  // t's place, s1 offset 0, where c lives at [4,5]: both live at 4..5 on the same bytes.
  const std::string f = "f32[64]";
  Program p = Sketch()
                  .input("x", f)
                  .call("t", "aten::relu", {R("x")}, f)
                  .call("y", "aten::sigmoid", {R("t")}, f, {{"_share_alloc_with_arg_idx", "0"}})
                  .call("u", "aten::neg", {R("t")}, f)
                  .call("c", "aten::relu", {R("u")}, f)
                  .call("d", "aten::add.Tensor", {R("c"), R("y")}, f)
                  .userOutput("d")
                  .finish();
  MemoryPlan m = plan(p);
  EXPECT_EQ(lifetimes(m), "x:0-1 t:1-3 y:2-5 u:3-4 c:4-5 d:5-6");
  const PlannedTensor* y = tensor(m, "y");
  ASSERT_TRUE(y->inplaceBase.has_value());
  EXPECT_EQ(m.tensors[*y->inplaceBase].node, "t");
  EXPECT_EQ(y->sharedObject, tensor(m, "t")->sharedObject);
  EXPECT_EQ(y->memOffset, tensor(m, "t")->memOffset);
  EXPECT_EQ(tensor(m, "c")->sharedObject, 1);
  EXPECT_EQ(m.arenaBytes, 512);
  ASSERT_EQ(m.overlaps.size(), 1u);
  EXPECT_EQ(m.tensors[m.overlaps[0].first].node, "y");
  EXPECT_EQ(m.tensors[m.overlaps[0].second].node, "c");
  // y and t are one allocation for the peak: live [1,5]. At 4: {t,y}, u, c = 768 bytes, more
  // than the 512-byte arena: only possible because two tensors share bytes.
  EXPECT_EQ(m.peakLiveBytes, 768);
}

TEST(MemPlanShareAlloc, GreedyLayoutOfTheReferenceExample) {
  // executorch-semantics §6.6: t [2,5]; C (same size) [7,9] sits at offset 0 of t's shared
  // object; y with inplace_base = t, [4,12], lands on C.
  std::vector<LifetimeSpec> specs = {{64, 2, 5, std::nullopt}, {64, 7, 9, std::nullopt}, {64, 4, 12, 0}};
  GreedyLayout g = greedyLayout(specs);
  EXPECT_EQ(g.objects.size(), 1u);
  EXPECT_EQ(g.arenaBytes, 64);
  EXPECT_EQ(g.slots[2].sharedObject, g.slots[1].sharedObject);
  EXPECT_EQ(g.slots[2].memOffset, g.slots[1].memOffset);
  EXPECT_TRUE(lifetimesOverlap(specs[2].start, specs[2].end, specs[1].start, specs[1].end));
}

// ---------------------------------------------------------------------------------------------
// greedy exactly, and its non-monotonicity.

TEST(MemPlanGreedy, OverlappingAllocationPlacesAboveTheLiveOnes) {
  // 64 [0,4] -> s0; the 32s in reverse collection order: [2,3] overlaps it, no room above 64
  // in s0 -> s1 (32); [0,1]: s0 busy, s1 free at 0..1 -> s1 offset 0; 16 [0,4]: s0 and s1
  // busy; above the live ones: s0's top is 64, s1's top is 32, no room -> s2. Arena 112.
  std::vector<LifetimeSpec> specs = {{64, 0, 4, {}}, {32, 0, 1, {}}, {32, 2, 3, {}}, {16, 0, 4, {}}};
  GreedyLayout g = greedyLayout(specs);
  EXPECT_EQ(g.arenaBytes, 112);
  std::vector<LifetimeSpec> stacked = {{128, 0, 2, {}}, {64, 1, 3, {}}, {32, 3, 4, {}}};
  // 128 -> s0. 64 [1,3] overlaps it -> step 2 in s0: top 128, no room -> s1 (64).
  // 32 [3,4]: s0 free at 3..4 -> s0 offset 0.
  GreedyLayout h = greedyLayout(stacked);
  EXPECT_EQ(h.arenaBytes, 192);
  EXPECT_EQ(h.slots[2].sharedObject, 0);
  // Step 2 proper: in a 128 object, 32 [0,5] then 32 [2,3] stack at 0 and 32.
  std::vector<LifetimeSpec> two = {{128, 0, 1, {}}, {32, 2, 5, {}}, {32, 2, 3, {}}};
  GreedyLayout k = greedyLayout(two);
  // 128 -> s0; 32s in reverse collection order: [2,3] -> s0@0; [2,5] overlaps it -> above, @32.
  EXPECT_EQ(k.arenaBytes, 128);
  EXPECT_EQ(k.slots[2].offsetInObject, 0);
  EXPECT_EQ(k.slots[1].offsetInObject, 32);
}

TEST(MemPlanGreedy, ShorterLifetimeCanGiveALargerArena) {
  // V lives to the end in `end` ([1,8]) and is cut at 4 by an early write-back.
  //   collection order: V 48, P 32 [3,5], Q 32 [4,6], R 64 [7,8]
  // long V: R -> s0 (64); V overlaps R -> s1 (48); Q [4,6] -> s0@0; P [3,5]: s0 has Q, s1 has V,
  //         above Q in s0: 32 + 32 <= 64 -> s0@32.                       arena 64 + 48 = 112
  // short V [1,4]: R -> s0; V fits s0@0 (R is [7,8]); Q overlaps V: above V 48 + 32 > 64 -> s1;
  //         P overlaps V and Q, no room above either -> s2.             arena 64 + 32 + 32 = 128
  std::vector<LifetimeSpec> longV = {{48, 1, 8, {}}, {32, 3, 5, {}}, {32, 4, 6, {}}, {64, 7, 8, {}}};
  std::vector<LifetimeSpec> shortV = longV;
  shortV[0].end = 4;
  EXPECT_EQ(greedyLayout(longV).arenaBytes, 112);
  EXPECT_EQ(greedyLayout(shortV).arenaBytes, 128);
  // The peak is monotone: it does not grow.
  auto peak = [](const std::vector<LifetimeSpec>& s) {
    auto live = liveBytesByIndex(s, 8);
    return *std::max_element(live.begin(), live.end());
  };
  EXPECT_LE(peak(shortV), peak(longV));
}

// The same on a program placed both ways: early lowers the peak and raises the arena.
Program nonMonotone(bool early) {
  Sketch s;
  s.buffer("b_buf", "f32[12]", "buf")  // 48 B
      .input("x", "f32[8]")            // 32 B
      .call("v", "aten::add.Tensor", {R("b_buf"), R("x")}, "f32[12]");
  if (early) s.writeBack("copy_", "b_buf", "v", "buf");
  s.call("a", "aten::add.Tensor", {R("x"), R("x")}, "f32[8]")
      .call("b", "aten::relu", {R("x")}, "f32[8]")
      .call("c", "aten::relu", {R("v")}, "f32[8]")
      .call("d", "aten::add.Tensor", {R("b"), R("x")}, "f32[8]")
      .call("e", "aten::cat", {L({R("a"), R("c")})}, "f32[16]")  // 64 B
      .call("f", "aten::cat", {L({R("x"), R("x")})}, "f32[16]");
  if (!early) s.writeBack("copy_", "b_buf", "v", "buf");
  return s.userOutput("d").userOutput("e").userOutput("f").finish();
}

TEST(MemPlanGreedy, EarlyPlacementCanCostArenaWhileSavingPeak) {
  MemoryPlan end = plan(nonMonotone(false));
  MemoryPlan early = plan(nonMonotone(true));
  EXPECT_EQ(lifetimes(end), "b_buf:0-10 x:0-8 v:2-9 a:3-7 b:4-6 c:5-7 d:6-10 e:7-10 f:8-10");
  EXPECT_EQ(lifetimes(early), "b_buf:0-10 x:0-9 v:2-6 a:4-8 b:5-7 c:6-8 d:7-10 e:8-10 f:9-10");
  // Peaks: end at 7 has everything but b and f: 48+32+48+32+32+32+64 = 288; early at 8 has
  // v gone: 48+32+32+32+32+64 = 240.
  EXPECT_EQ(end.peakLiveBytes, 288);
  EXPECT_EQ(early.peakLiveBytes, 240);
  // greedy, visiting f e | v b_buf | d c b a x:
  //  end:   f s0, e s1, v s2, b_buf s3, d s4, c s0@0 (f is [8,10]), b s1@0 (e is [7,10]),
  //         a s0@32 (above c), x s5                                   = 64+64+48+48+32+32 = 288
  //  early: f s0, e s1, v s0@0 (f is [9,10]), b_buf s2, d s3; c meets v in s0 and 48+32 > 64:
  //         s4; b s1@0; a and x find no room: s5, s6                 = 64+64+48+32*4    = 304
  EXPECT_EQ(end.arenaBytes, 288);
  EXPECT_EQ(early.arenaBytes, 304);
  EXPECT_EQ(end.sharedObjects.size(), 6u);
  EXPECT_EQ(early.sharedObjects.size(), 7u);
  PlanComparison c = comparePlans(end, early);
  EXPECT_EQ(c.peakSavedBytes, 48);
  EXPECT_EQ(c.arenaSavedBytes, -16);
}

TEST(MemPlanGreedy, PeakIsMonotoneInLifetimes) {
  std::mt19937 rng(20260);
  for (int round = 0; round < 2000; ++round) {
    std::vector<LifetimeSpec> specs(2 + rng() % 6);
    for (LifetimeSpec& s : specs) {
      s.allocatedBytes = 16 * static_cast<std::int64_t>(1 + rng() % 4);
      s.start = static_cast<int>(rng() % 8);
      s.end = s.start + static_cast<int>(rng() % 4);
    }
    std::vector<LifetimeSpec> longer = specs;
    LifetimeSpec& grown = longer[rng() % longer.size()];
    grown.end += 1 + static_cast<int>(rng() % 3);
    auto a = liveBytesByIndex(specs, 16);
    auto b = liveBytesByIndex(longer, 16);
    for (std::size_t i = 0; i < a.size(); ++i) ASSERT_LE(a[i], b[i]);
    // And greedy never overlaps two normal specs in both time and bytes.
    GreedyLayout g = greedyLayout(longer);
    for (std::size_t i = 0; i < longer.size(); ++i)
      for (std::size_t j = i + 1; j < longer.size(); ++j) {
        bool bytes = g.slots[i].memOffset < g.slots[j].memOffset + longer[j].allocatedBytes &&
                     g.slots[j].memOffset < g.slots[i].memOffset + longer[i].allocatedBytes;
        ASSERT_FALSE(bytes && lifetimesOverlap(longer[i].start, longer[i].end, longer[j].start, longer[j].end));
      }
  }
}

// ---------------------------------------------------------------------------------------------
// early <= end on a bigger program placed both ways by hand: two caches updated by index_put
// (functional, so the values need write-backs) and attention-like reads.

Program twoCaches(bool early) {
  // Sizes: caches f32[16, 8] = 512 B; rows f32[1, 8] = 32 B; scores f32[16] = 64 B.
  Sketch s;
  s.buffer("b_k", "f32[16, 8]", "k")
      .buffer("b_v", "f32[16, 8]", "v")
      .input("pos", "i64[1]")
      .input("q", "f32[1, 8]")
      .call("k_new", "aten::index_put", {R("b_k"), L({R("pos")}), R("q")}, "f32[16, 8]");
  // early: k's copy can go right after k_new (b_k is not read afterwards; k_new is final).
  if (early) s.writeBack("copy_", "b_k", "k_new", "k");
  s.call("v_new", "aten::index_put", {R("b_v"), L({R("pos")}), R("q")}, "f32[16, 8]");
  if (early) s.writeBack("copy__1", "b_v", "v_new", "v");
  s.call("t", "aten::t_copy", {R("k_new")}, "f32[8, 16]")
      .call("scores", "aten::mm", {R("q"), R("t")}, "f32[1, 16]")
      .call("probs", "aten::_softmax", {R("scores"), I(-1), Arg::ofBool(false)}, "f32[1, 16]")
      .call("out", "aten::mm", {R("probs"), R("v_new")}, "f32[1, 8]");
  if (!early) s.writeBack("copy_", "b_k", "k_new", "k").writeBack("copy__1", "b_v", "v_new", "v");
  return s.userOutput("out").finish();
}

TEST(MemPlanCompare, EarlyNeverExceedsEndOnPeak) {
  MemoryPlan end = plan(twoCaches(false));
  MemoryPlan early = plan(twoCaches(true));
  // end: 0 b_k 1 b_v 2 pos 3 q 4 k_new 5 v_new 6 t 7 scores 8 probs 9 out 10 copy_ 11 copy__1 12 output
  EXPECT_EQ(lifetimes(end), "b_k:0-12 b_v:0-12 pos:0-5 q:0-7 k_new:4-10 v_new:5-11 t:6-7 scores:7-8 probs:8-9 out:9-12");
  // early: 0 b_k 1 b_v 2 pos 3 q 4 k_new 5 copy_ 6 v_new 7 copy__1 8 t 9 scores 10 probs 11 out 12 output
  // k_new still feeds t (8); v_new still feeds out (11): here the values outlive their copies.
  EXPECT_EQ(lifetimes(early), "b_k:0-12 b_v:0-12 pos:0-6 q:0-9 k_new:4-8 v_new:6-11 t:8-9 scores:9-10 probs:10-11 out:11-12");
  EXPECT_LE(early.peakLiveBytes, end.peakLiveBytes);
  // end's peak: at 9 (b_k, b_v, k_new, v_new, probs, out) = 4*512 + 64 + 32; early at 11 drops k_new.
  // end at 7: b_k b_v k_new v_new t (512 each), q 32, scores 64.
  EXPECT_EQ(end.peakLiveBytes, 5 * 512 + 32 + 64);
  EXPECT_EQ(end.peakIndex, 7);
  // early at 8: b_k b_v k_new v_new t, q; at 9 k_new is gone when scores appears.
  EXPECT_EQ(early.peakLiveBytes, 5 * 512 + 32);
  EXPECT_EQ(early.peakIndex, 8);
}

// ---------------------------------------------------------------------------------------------
// The chart.

int count(const std::string& text, std::string_view what) {
  int n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

TEST(MemPlanSvg, WellFormedWithOneBarPerTensor) {
  MemoryPlan end = plan(twoCaches(false));
  MemoryPlan early = plan(twoCaches(true));
  std::string svg = renderLifetimeChartSvg(end, early);
  EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
  EXPECT_EQ(count(svg, "<svg"), 1);
  EXPECT_NE(svg.find("</svg>\n"), std::string::npos);
  EXPECT_EQ(count(svg, "<g"), count(svg, "</g>"));
  EXPECT_EQ(count(svg, "<text"), count(svg, "</text>"));
  EXPECT_EQ(count(svg, "<title>"), count(svg, "</title>"));
  EXPECT_EQ(count(svg, "class=\"bar\""), static_cast<int>(end.tensors.size() + early.tensors.size()));
  // Every tag that is opened is closed or self-closing: count '<' that start an element.
  int opens = 0, closes = 0;
  for (std::size_t i = 0; i + 1 < svg.size(); ++i) {
    if (svg[i] != '<') continue;
    if (svg[i + 1] == '/') ++closes;
    else if (svg[i + 1] != '?') {
      std::size_t gt = svg.find('>', i);
      ASSERT_NE(gt, std::string::npos);
      if (svg[gt - 1] != '/') ++opens;
    }
  }
  EXPECT_EQ(opens, closes);
  // The title carries both measures; the copies are marked.
  EXPECT_NE(svg.find("peak live bytes"), std::string::npos);
  EXPECT_NE(svg.find("greedy arena"), std::string::npos);
  EXPECT_EQ(count(svg, "= copy_("), 4);

  std::string single = renderLifetimeChartSvg(end, "end only");
  EXPECT_EQ(count(single, "class=\"bar\""), static_cast<int>(end.tensors.size()));
}


// ---------------------------------------------------------------------------------------------
// Every program of the corpus, placed both ways by core/placement: early never raises the peak,
// but for the clones it inserts to break a copy cycle (new allocations; end is wrong there).

// The write-back copies a program already has (a placed program: the AFTER files of
// corpus/validate) that a placement of it keeps: copy_ nodes a mutation spec names in both.
std::size_t keptWriteBacks(const Program& input, const Program& placed) {
  auto named = [](const Program& p) {
    std::set<std::string> names;
    for (const OutputSpec& spec : p.signature.outputs)
      if (isMutation(spec.kind)) names.insert(spec.name);
    return names;
  };
  const std::set<std::string> before = named(input), after = named(placed);
  std::size_t kept = 0;
  for (const Node& n : input.graph.nodes)
    kept += n.target == "aten::copy_" && before.count(n.name) && after.count(n.name);
  return kept;
}

TEST(MemPlanCorpus, EarlyPeakNeverExceedsEnd) {
  const SchemaTable base = builtinSchemas();
  int compared = 0;
  for (const auto& path : testing::filesUnder(testing::corpusDir())) {
    Program program = testing::loadProgram(path);
    if (program.graph.nodes.empty()) continue;
    SchemaTable table = schemasFor(program, base);
    PlacedProgram end = place(program, Placement::End, table);
    PlacedProgram early = place(program, Placement::Early, table);
    if (end.failure || early.failure) continue;
    MemoryPlan endPlan = planMemory(end.program, table);
    MemoryPlan earlyPlan = planMemory(early.program, table);
    EXPECT_LE(earlyPlan.peakLiveBytes, endPlan.peakLiveBytes + insertedCloneBytes(program, early.program)) << path;
    EXPECT_EQ(endPlan.writeBacks.size(), end.copies.size() + keptWriteBacks(program, end.program)) << path;
    EXPECT_EQ(earlyPlan.writeBacks.size(), early.copies.size() + keptWriteBacks(program, early.program)) << path;
    ++compared;
  }
  EXPECT_GT(compared, 0);
}

}  // namespace
}  // namespace wb
