// tests/oracle_element_test.cpp: the element tier with known answers: every interpreted op,
// each view kind, writes through views of views, overlapping copy_, list-argument writes,
// storage sharing, and the three semantics on small hazard shapes.
#include <gtest/gtest.h>

#include <cstdint>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/placement.h"
#include "core/text.h"
#include "core/validate.h"
#include "gen/generator.h"
#include "oracle/ops.h"
#include "oracle/oracle.h"
#include "tests/testing.h"

namespace wb::oracle {
namespace {

using Values = std::vector<std::uint64_t>;

// Builds a form-1 program. inputs: "name: KIND[ target] TYPE" (KIND BUFFER needs a target);
// nodes: "name: "type" = torch.ops...(...)" lines; outputs: "name: KIND[ target]".
Program makeProgram(const std::vector<std::string>& inputs, const std::vector<std::string>& nodes,
                    const std::vector<std::string>& outputs, const std::string& schemas = "") {
  std::string params, inSpecs, ret, outSpecs;
  for (const std::string& in : inputs) {
    // "b_s BUFFER s i64[4]" or "x USER_INPUT i64[2, 3]": the type is the rest of the line.
    std::vector<std::string> w;
    std::size_t at = 0;
    while (w.size() < 3 && at < in.size()) {
      std::size_t sp = in.find(' ', at);
      w.push_back(in.substr(at, sp - at));
      if (sp == std::string::npos) break;
      at = sp + 1;
    }
    bool hasTarget = w[1] == "BUFFER" || w[1] == "PARAMETER";
    std::string type = hasTarget ? in.substr(at) : in.substr(in.find(' ', in.find(' ') + 1) + 1);
    params += ", " + w[0] + ": \"" + type + "\"";
    inSpecs += "    " + w[0] + ": " + w[1] + (hasTarget ? " target='" + w[2] + "'" : "") +
               (w[1] == "BUFFER" ? " persistent=True" : "") + "\n";
  }
  for (const std::string& out : outputs) {
    std::size_t sp = out.find(' ');
    std::string name = out.substr(0, sp);
    std::string rest = out.substr(sp + 1);
    std::size_t sp2 = rest.find(' ');
    std::string kind = rest.substr(0, sp2);
    ret += name + ", ";
    outSpecs += "    " + name + ": " + kind + (sp2 != std::string::npos ? " target='" + rest.substr(sp2 + 1) + "'" : "") + "\n";
  }
  std::string text = "ExportedProgram:\n    class GraphModule(torch.nn.Module):\n        def forward(self" + params + "):\n";
  for (const std::string& n : nodes) text += "            " + n + "\n";
  text += "            return (" + ret + ")\n\nGraph signature:\n    # inputs\n" + inSpecs + "\n    # outputs\n" + outSpecs;
  if (!schemas.empty()) text += "\nSchemas:\n    " + schemas + "\n";
  Result<Program> r = readProgram(text);
  EXPECT_TRUE(r.ok()) << formatAll(r.errors) << "\n" << text;
  return r.ok() ? *r : Program{};
}

SchemaTable tableFor(const Program& p) {
  SchemaTable t = withOracleSchemas(builtinSchemas());
  for (const std::string& s : p.schemas) t.addAll(s, "test");
  return t;
}

RunResult runIt(const Program& p, Semantics sem, ViewMode mode = ViewMode::CopyViews, Tier tier = Tier::Element,
                InputSet inputs = {}) {
  ExecOptions o;
  o.tier = tier;
  o.viewMode = mode;
  o.valueSemantics = sem == Semantics::Value;
  Result<Executable> exe = compile(p, tableFor(p), o);
  EXPECT_TRUE(exe.ok()) << formatAll(exe.errors);
  if (!exe.ok()) return {};
  return run(*exe, sem, inputs);
}

// The initial contents of a placeholder (seed 0, input set 0).
Values input(const std::string& name, std::size_t n) {
  Values v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = detail::inputElement(0, 0, detail::hashText(name), i);
  return v;
}

const Values& placeholder(const RunResult& r, const std::string& name) {
  for (const Observation& o : r.placeholders)
    if (o.label == name) return o.values;
  static const Values kNone;
  ADD_FAILURE() << "no placeholder " << name;
  return kNone;
}

const Values& output(const RunResult& r, std::size_t i) {
  static const Values kNone;
  if (i >= r.outputs.size()) {
    ADD_FAILURE() << "no output " << i;
    return kNone;
  }
  return r.outputs[i].values;
}

// One user input x: i64[N], one output computed by `nodes`, the last node named `out`.
Values compute(const std::vector<std::string>& inputs, const std::vector<std::string>& nodes,
               Semantics sem = Semantics::Par, ViewMode mode = ViewMode::CopyViews) {
  Program p = makeProgram(inputs, nodes, {"out USER_OUTPUT"});
  return output(runIt(p, sem, mode), 0);
}

TEST(OracleElement, Arithmetic) {
  Values x = input("x", 4), y = input("y", 4);
  Values got = compute({"x USER_INPUT i64[4]", "y USER_INPUT i64[4]"},
                       {"out: \"i64[4]\" = torch.ops.aten.add.Tensor(x, y, alpha = 3)"});
  for (int i = 0; i < 4; ++i) EXPECT_EQ(got[i], x[i] + 3 * y[i]);
  got = compute({"x USER_INPUT i64[4]", "y USER_INPUT i64[4]"}, {"out: \"i64[4]\" = torch.ops.aten.sub.Tensor(x, y)"});
  for (int i = 0; i < 4; ++i) EXPECT_EQ(got[i], x[i] - y[i]);
  got = compute({"x USER_INPUT i64[4]", "y USER_INPUT i64[4]"}, {"out: \"i64[4]\" = torch.ops.aten.rsub.Tensor(x, y, alpha = 2)"});
  for (int i = 0; i < 4; ++i) EXPECT_EQ(got[i], y[i] - 2 * x[i]);
  got = compute({"x USER_INPUT i64[4]"}, {"out: \"i64[4]\" = torch.ops.aten.mul.Tensor(x, 2)"});
  for (int i = 0; i < 4; ++i) EXPECT_EQ(got[i], x[i] * 2);
  got = compute({"x USER_INPUT i64[4]"}, {"out: \"i64[4]\" = torch.ops.aten.neg.default(x)"});
  for (int i = 0; i < 4; ++i) EXPECT_EQ(got[i], 0 - x[i]);
  got = compute({"x USER_INPUT i64[4]"}, {"out: \"i64[4]\" = torch.ops.aten.add.Tensor(x, 1.0)"});
  for (int i = 0; i < 4; ++i) EXPECT_EQ(got[i], x[i] + 1);
}

// Optional arguments looked up once (alpha, arange's start and step): their defaults when the
// call leaves them out, alpha's also when it is None, their values when given.
TEST(OracleElement, OptionalArgumentsTakeTheirDefaults) {
  Values x = input("x", 4), y = input("y", 4);
  Values got = compute({"x USER_INPUT i64[4]", "y USER_INPUT i64[4]"},
                       {"out: \"i64[4]\" = torch.ops.aten.add.Tensor(x, y, alpha = None)"});
  for (int i = 0; i < 4; ++i) EXPECT_EQ(got[i], x[i] + y[i]);
  got = compute({"x USER_INPUT i64[4]"},
                {"a = torch.ops.aten.arange.start_step(7, -1, -2)", "out = torch.ops.aten.add.Tensor(x, a)"});
  for (int i = 0; i < 4; ++i) EXPECT_EQ(got[i], x[i] + static_cast<std::uint64_t>(7 - 2 * i));
  got = compute({"x USER_INPUT i64[4]"}, {"a = torch.ops.aten.arange.start(2, 6)", "out = torch.ops.aten.mul.Tensor(x, a)"});
  for (int i = 0; i < 4; ++i) EXPECT_EQ(got[i], x[i] * static_cast<std::uint64_t>(2 + i));
  got = compute({"x USER_INPUT i64[4]"}, {"a = torch.ops.aten.arange.default(4)", "out = torch.ops.aten.sub.Tensor(x, a)"});
  for (int i = 0; i < 4; ++i) EXPECT_EQ(got[i], x[i] - static_cast<std::uint64_t>(i));
}

TEST(OracleElement, BroadcastAndReductions) {
  Values x = input("x", 6), y = input("y", 3);
  Values got = compute({"x USER_INPUT i64[2, 3]", "y USER_INPUT i64[3]"},
                       {"out: \"i64[2, 3]\" = torch.ops.aten.mul.Tensor(x, y)"});
  for (int i = 0; i < 6; ++i) EXPECT_EQ(got[i], x[i] * y[i % 3]);
  got = compute({"x USER_INPUT i64[2, 3]"}, {"out: \"i64[2]\" = torch.ops.aten.sum.dim_IntList(x, [1])"});
  EXPECT_EQ(got, (Values{x[0] + x[1] + x[2], x[3] + x[4] + x[5]}));
  got = compute({"x USER_INPUT i64[2, 3]"}, {"out: \"i64[1, 3]\" = torch.ops.aten.sum.dim_IntList(x, [0], True)"});
  EXPECT_EQ(got, (Values{x[0] + x[3], x[1] + x[4], x[2] + x[5]}));
  got = compute({"x USER_INPUT i64[2, 3]"}, {"out: \"i64[]\" = torch.ops.aten.sum.default(x)"});
  EXPECT_EQ(got, (Values{x[0] + x[1] + x[2] + x[3] + x[4] + x[5]}));
  // mean: signed sum, truncating division.
  got = compute({"x USER_INPUT i64[2, 3]"}, {"out: \"i64[2]\" = torch.ops.aten.mean.dim(x, [1])"});
  for (int r = 0; r < 2; ++r) {
    std::uint64_t s = x[3 * r] + x[3 * r + 1] + x[3 * r + 2];
    EXPECT_EQ(got[r], static_cast<std::uint64_t>(static_cast<std::int64_t>(s) / 3));
  }
}

TEST(OracleElement, Views) {
  Values x = input("x", 12);  // [3, 4]
  auto view = [&](const std::string& node) {
    return compute({"x USER_INPUT i64[3, 4]"}, {"v = " + node, "out: \"i64[]\" = torch.ops.aten.clone.default(v)"});
  };
  EXPECT_EQ(view("torch.ops.aten.select.int(x, 0, 1)"), (Values{x[4], x[5], x[6], x[7]}));
  EXPECT_EQ(view("torch.ops.aten.select.int(x, 1, -1)"), (Values{x[3], x[7], x[11]}));
  EXPECT_EQ(view("torch.ops.aten.slice.Tensor(x, 1, 1, 4, 2)"), (Values{x[1], x[3], x[5], x[7], x[9], x[11]}));
  EXPECT_EQ(view("torch.ops.aten.narrow.default(x, 0, 2, 1)"), (Values{x[8], x[9], x[10], x[11]}));
  EXPECT_EQ(view("torch.ops.aten.transpose.int(x, 0, 1)"),
            (Values{x[0], x[4], x[8], x[1], x[5], x[9], x[2], x[6], x[10], x[3], x[7], x[11]}));
  EXPECT_EQ(view("torch.ops.aten.t.default(x)"), view("torch.ops.aten.permute.default(x, [1, 0])"));
  EXPECT_EQ(view("torch.ops.aten.view.default(x, [12])"), x);
  EXPECT_EQ(view("torch.ops.aten.reshape.default(x, [2, -1])"), x);
  EXPECT_EQ(view("torch.ops.aten.unsqueeze.default(x, 1)"), x);
  EXPECT_EQ(view("torch.ops.aten.alias.default(x)"), x);
  EXPECT_EQ(view("torch.ops.aten.diagonal.default(x)"), (Values{x[0], x[5], x[10]}));
  EXPECT_EQ(view("torch.ops.aten.diagonal.default(x, 1)"), (Values{x[1], x[6], x[11]}));
  EXPECT_EQ(view("torch.ops.aten.as_strided.default(x, [2, 2], [1, 4], 1)"), (Values{x[1], x[5], x[2], x[6]}));
  Values y = input("y", 4);  // [4, 1]
  EXPECT_EQ(compute({"y USER_INPUT i64[4, 1]"}, {"v = torch.ops.aten.squeeze.dim(y, 1)", "out: \"i64[4]\" = torch.ops.aten.clone.default(v)"}), y);
  EXPECT_EQ(compute({"y USER_INPUT i64[4, 1]"}, {"v = torch.ops.aten.expand.default(y, [4, 2])", "out = torch.ops.aten.clone.default(v)"}),
            (Values{y[0], y[0], y[1], y[1], y[2], y[2], y[3], y[3]}));
  // Reshape of a non-contiguous tensor copies in row-major order.
  EXPECT_EQ(view("torch.ops.aten.transpose.int(x, 0, 1)"),
            compute({"x USER_INPUT i64[3, 4]"}, {"t = torch.ops.aten.transpose.int(x, 0, 1)", "v = torch.ops.aten.reshape.default(t, [12])",
                                                 "out = torch.ops.aten.clone.default(v)"}));
}

// A strided view's positions are listed a row (its last dimension) at a time and checked at
// the row's two ends: a row that leaves the storage at either end makes the compile fail (the
// program falls back to the storage tier), one that stays inside reads what it should.
TEST(OracleElement, StridedViewsStayInsideTheirStorage) {
  Values x = input("x", 6);
  auto program = [](const std::string& view) {
    return makeProgram({"x USER_INPUT i64[6]"}, {"v = torch.ops.aten.as_strided.default(x, " + view + ")",
                                                 "out = torch.ops.aten.clone.default(v)"},
                       {"out USER_OUTPUT"});
  };
  EXPECT_EQ(output(runIt(program("[3, 2], [1, 3], 0"), Semantics::Par), 0), (Values{x[0], x[3], x[1], x[4], x[2], x[5]}));
  EXPECT_EQ(output(runIt(program("[2, 3], [-2, 1], 2"), Semantics::Par), 0), (Values{x[2], x[3], x[4], x[0], x[1], x[2]}));
  // Out at a row's last end, at a later row's first end, with a negative step, before the start,
  // and with negative sizes (six elements all the same, the second one outside).
  for (const char* outside :
       {"[2, 3], [3, 2], 0", "[2, 2], [-3, 1], 2", "[2, 3], [1, -1], 1", "[2, 2], [1, 2], -1", "[-2, -3], [1, 1], 0"}) {
    Program p = program(outside);
    Result<Executable> exe = compile(p, tableFor(p), ExecOptions{});
    ASSERT_FALSE(exe.ok()) << outside;
    EXPECT_NE(exe.errors.front().message.find("outside its storage"), std::string::npos) << outside;
  }
}

TEST(OracleElement, ListViewsAndGetitem) {
  Values x = input("x", 6);
  auto part = [&](const std::string& node, int i) {
    return compute({"x USER_INPUT i64[6]"}, {"s = " + node, "g = s[" + std::to_string(i) + "]", "out = torch.ops.aten.clone.default(g)"});
  };
  EXPECT_EQ(part("torch.ops.aten.split.Tensor(x, 4)", 1), (Values{x[4], x[5]}));
  EXPECT_EQ(part("torch.ops.aten.split_with_sizes.default(x, [1, 5])", 0), (Values{x[0]}));
  EXPECT_EQ(part("torch.ops.aten.chunk.default(x, 3)", 2), (Values{x[4], x[5]}));
  EXPECT_EQ(part("torch.ops.aten.unbind.int(x)", 3), (Values{x[3]}));
  EXPECT_EQ(part("torch.ops.aten.split_copy.Tensor(x, 2)", 1), (Values{x[2], x[3]}));
}

TEST(OracleElement, WritesThroughViewsOfViews) {
  // b[1, 2] += 5 through slice -> select -> add_.
  Program p = makeProgram({"b_s BUFFER s i64[3, 4]"},
                          {"sl = torch.ops.aten.slice.Tensor(b_s, 0, 1, 3)", "row = torch.ops.aten.select.int(sl, 0, 0)",
                           "el = torch.ops.aten.select.int(row, 0, 2)", "add_ = torch.ops.aten.add_.Tensor(el, 5)"},
                          {"add_ USER_OUTPUT"});
  Values b = input("b_s", 12);
  RunResult r = runIt(p, Semantics::Par);
  Values expect = b;
  expect[6] += 5;
  EXPECT_EQ(placeholder(r, "b_s"), expect);
  EXPECT_EQ(output(r, 0), (Values{expect[6]}));
  // Under F, nothing writes the placeholder.
  EXPECT_EQ(placeholder(runIt(p, Semantics::Value), "b_s"), b);
  EXPECT_EQ(output(runIt(p, Semantics::Value), 0), (Values{b[6] + 5}));
  // Through a transpose and an expand-free view chain: x.t()[0].fill_(7) writes column 0.
  Program q = makeProgram({"b_s BUFFER s i64[2, 3]"},
                          {"t = torch.ops.aten.t.default(b_s)", "c = torch.ops.aten.select.int(t, 0, 0)",
                           "f = torch.ops.aten.fill_.Scalar(c, 7)"},
                          {"f USER_OUTPUT"});
  Values bq = input("b_s", 6);
  bq[0] = 7;
  bq[3] = 7;
  EXPECT_EQ(placeholder(runIt(q, Semantics::Par), "b_s"), bq);
}

TEST(OracleElement, OverlappingCopyIsParallel) {
  // b[1:4].copy_(b[0:3]): the source is read before anything is written.
  Program p = makeProgram({"b_s BUFFER s i64[4]"},
                          {"dst = torch.ops.aten.slice.Tensor(b_s, 0, 1, 4)", "src = torch.ops.aten.slice.Tensor(b_s, 0, 0, 3)",
                           "c = torch.ops.aten.copy_.default(dst, src)"},
                          {"c USER_OUTPUT"});
  Values b = input("b_s", 4);
  EXPECT_EQ(placeholder(runIt(p, Semantics::Par), "b_s"), (Values{b[0], b[0], b[1], b[2]}));
  // copy_ broadcasts its source.
  Program q = makeProgram({"b_s BUFFER s i64[2, 2]", "x USER_INPUT i64[2]"}, {"c = torch.ops.aten.copy_.default(b_s, x)"}, {"c USER_OUTPUT"});
  Values x = input("x", 2);
  EXPECT_EQ(placeholder(runIt(q, Semantics::Par), "b_s"), (Values{x[0], x[1], x[0], x[1]}));
}

TEST(OracleElement, IndexOps) {
  Values b = input("b", 6), v = input("v", 2);  // b [3, 2], v [2]
  // index_put with an index tensor i64[2] built by arange: rows 0 and 1 (mod 3).
  Values got = compute({"b USER_INPUT i64[3, 2]", "v USER_INPUT i64[2]"},
                       {"i = torch.ops.aten.arange.default(2)", "out = torch.ops.aten.index_put.default(b, [i], v)"});
  EXPECT_EQ(got, (Values{v[0], v[1], v[0], v[1], b[4], b[5]}));
  got = compute({"b USER_INPUT i64[3, 2]", "v USER_INPUT i64[2]"},
                {"i = torch.ops.aten.arange.default(2)", "out = torch.ops.aten.index_put.default(b, [i], v, True)"});
  EXPECT_EQ(got, (Values{b[0] + v[0], b[1] + v[1], b[2] + v[0], b[3] + v[1], b[4], b[5]}));
  // Index values are taken modulo the dimension: arange(5) on dim of size 3 = 0,1,2,0,1.
  got = compute({"b USER_INPUT i64[3, 2]"}, {"i = torch.ops.aten.arange.default(5)", "out = torch.ops.aten.index.Tensor(b, [i])"});
  EXPECT_EQ(got, (Values{b[0], b[1], b[2], b[3], b[4], b[5], b[0], b[1], b[2], b[3]}));
  got = compute({"b USER_INPUT i64[3, 2]"}, {"i = torch.ops.aten.arange.start(1, 3)", "out = torch.ops.aten.index_select.default(b, 0, i)"});
  EXPECT_EQ(got, (Values{b[2], b[3], b[4], b[5]}));
  Values s = input("s", 4);  // source [2, 2]
  got = compute({"b USER_INPUT i64[3, 2]", "s USER_INPUT i64[2, 2]"},
                {"i = torch.ops.aten.arange.start(1, 3)", "out = torch.ops.aten.index_copy.default(b, 0, i, s)"});
  EXPECT_EQ(got, (Values{b[0], b[1], s[0], s[1], s[2], s[3]}));
  got = compute({"b USER_INPUT i64[3, 2]", "s USER_INPUT i64[2, 2]"},
                {"out = torch.ops.aten.slice_scatter.default(b, s, 0, 1)"});
  EXPECT_EQ(got, (Values{b[0], b[1], s[0], s[1], s[2], s[3]}));
  got = compute({"b USER_INPUT i64[3, 2]", "v USER_INPUT i64[2]"}, {"out = torch.ops.aten.select_scatter.default(b, v, 0, 2)"});
  EXPECT_EQ(got, (Values{b[0], b[1], b[2], b[3], v[0], v[1]}));
  // scatter along dim 1 with index [[1, 0]] (from arange(1, -1, -1) viewed [1, 2]).
  got = compute({"b USER_INPUT i64[3, 2]", "s USER_INPUT i64[2, 2]"},
                {"a = torch.ops.aten.arange.start_step(1, -1, -1)", "i = torch.ops.aten.view.default(a, [1, 2])",
                 "out = torch.ops.aten.scatter.src(b, 1, i, s)"});
  EXPECT_EQ(got, (Values{s[1], s[0], b[2], b[3], b[4], b[5]}));
  got = compute({"b USER_INPUT i64[3, 2]", "v USER_INPUT i64[2]"}, {"out = torch.ops.aten.cat.default([b, b], 1)"});
  EXPECT_EQ(got, (Values{b[0], b[1], b[0], b[1], b[2], b[3], b[2], b[3], b[4], b[5], b[4], b[5]}));
  got = compute({"v USER_INPUT i64[2]", "w USER_INPUT i64[2]"}, {"out = torch.ops.aten.stack.default([v, w], 1)"});
  Values w = input("w", 2);
  EXPECT_EQ(got, (Values{v[0], w[0], v[1], w[1]}));
}

TEST(OracleElement, SelectionAndFactories) {
  Values c = input("c", 4), x = input("x", 4), y = input("y", 4);
  Values got = compute({"c USER_INPUT b8[4]", "x USER_INPUT i64[4]", "y USER_INPUT i64[4]"},
                       {"out = torch.ops.aten.where.self(c, x, y)"});
  for (int i = 0; i < 4; ++i) EXPECT_EQ(got[i], (c[i] & 1) ? x[i] : y[i]);
  got = compute({"c USER_INPUT b8[4]", "x USER_INPUT i64[4]"}, {"out = torch.ops.aten.masked_fill.Scalar(x, c, 9)"});
  for (int i = 0; i < 4; ++i) EXPECT_EQ(got[i], (c[i] & 1) ? 9u : x[i]);
  EXPECT_EQ(compute({"x USER_INPUT i64[2]"}, {"out = torch.ops.aten.zeros.default([2, 2])"}), Values(4, 0));
  EXPECT_EQ(compute({"x USER_INPUT i64[2]"}, {"out = torch.ops.aten.ones.default([3])"}), Values(3, 1));
  EXPECT_EQ(compute({"x USER_INPUT i64[2]"}, {"out = torch.ops.aten.full.default([2], 5)"}), Values(2, 5));
  EXPECT_EQ(compute({"x USER_INPUT i64[2]"}, {"out = torch.ops.aten.zeros_like.default(x)"}), Values(2, 0));
  EXPECT_EQ(compute({"x USER_INPUT i64[4]"}, {"c = torch.ops.aten.clone.default(x)", "out = torch.ops.aten.zero_.default(c)"}), Values(4, 0));
  EXPECT_EQ(compute({"x USER_INPUT i64[4]"}, {"out = torch.ops.aten.clone.default(x)"}), x);
}

TEST(OracleElement, HashOpsAreDeterministicAndShapedByAnnotations) {
  Values a = compute({"x USER_INPUT i64[4]"}, {"out: \"f32[2, 3]\" = torch.ops.aten.relu.default(x)"});
  EXPECT_EQ(a.size(), 6u);
  EXPECT_EQ(a, compute({"x USER_INPUT i64[4]"}, {"out: \"f32[2, 3]\" = torch.ops.aten.relu.default(x)"}));
  EXPECT_NE(a, compute({"x USER_INPUT i64[4]"}, {"out: \"f32[2, 3]\" = torch.ops.aten.sigmoid.default(x)"}));
  // Uninterpreted in-place: S and F agree on the result.
  Program p = makeProgram({"x USER_INPUT i64[4]"}, {"c = torch.ops.aten.clone.default(x)", "r: \"i64[4]\" = torch.ops.aten.relu_.default(c)"},
                          {"r USER_OUTPUT"});
  EXPECT_EQ(output(runIt(p, Semantics::Par), 0), output(runIt(p, Semantics::Value), 0));
  // A shape is needed: without an annotation, the element tier refuses.
  Program q = makeProgram({"x USER_INPUT i64[4]"}, {"r = torch.ops.aten.relu.default(x)"}, {"r USER_OUTPUT"});
  ExecOptions o;
  EXPECT_FALSE(compile(q, tableFor(q), o).ok());
  o.tier = Tier::Storage;
  EXPECT_TRUE(compile(q, tableFor(q), o).ok());
}

// List values keep their items in one pool of the compiler, nested lists after the list they
// are in: a schema-less op hashes every item of a nested list argument where it stands, so
// lists of the same items grouped differently, or differing in one item, hash differently, and
// the same list (tensor items included) hashes alike.
TEST(OracleElement, NestedListArgumentsKeepTheirItemsInPlace) {
  auto hashOf = [](const std::string& list) {
    return compute({"x USER_INPUT i64[4]", "y USER_INPUT i64[4]"},
                   {"out: \"i64[3]\" = torch.ops.my_ops.opaque.default(x, " + list + ")"});
  };
  const Values a = hashOf("[[1, 2], [3, x]]");
  EXPECT_EQ(a.size(), 3u);
  EXPECT_EQ(a, hashOf("[[1, 2], [3, x]]"));
  EXPECT_NE(a, hashOf("[[1], [2, 3, x]]"));
  EXPECT_NE(a, hashOf("[[1, 2], [4, x]]"));
  EXPECT_NE(a, hashOf("[[1, 2], [3, y]]"));
  EXPECT_NE(a, hashOf("[[1, 2, [3]], x]"));
  EXPECT_EQ(hashOf("[[[1, [2]], 3], [x, [y]]]"), hashOf("[[[1, [2]], 3], [x, [y]]]"));
  EXPECT_NE(hashOf("[[[1, [2]], 3], [x, [y]]]"), hashOf("[[[1, [2]], 3], [y, [x]]]"));
}

TEST(OracleElement, ListArgumentWrites) {
  Program p = makeProgram({"b_a BUFFER a i64[2]", "b_b BUFFER b i64[3]", "x USER_INPUT i64[2]"},
                          {"f = torch.ops.aten._foreach_add_.Scalar([b_a, b_b], 3)", "o = torch.ops.aten.clone.default(x)"},
                          {"o USER_OUTPUT"});
  Values a = input("b_a", 2), b = input("b_b", 3);
  RunResult r = runIt(p, Semantics::Par);
  EXPECT_EQ(placeholder(r, "b_a"), (Values{a[0] + 3, a[1] + 3}));
  EXPECT_EQ(placeholder(r, "b_b"), (Values{b[0] + 3, b[1] + 3, b[2] + 3}));
  // A custom op writing a list: every element changes (hash), deterministically.
  Program q = makeProgram({"b_a BUFFER a i64[2]", "x USER_INPUT i64[2]"},
                          {"f = torch.ops.my_ops.scale_all_.default([b_a, x], 2)", "o = torch.ops.aten.clone.default(x)"},
                          {"o USER_OUTPUT"}, "my_ops::scale_all_(Tensor(a!)[] self, Scalar s) -> ()");
  RunResult rq = runIt(q, Semantics::Par);
  EXPECT_NE(placeholder(rq, "b_a"), a);
  EXPECT_NE(output(rq, 0), input("x", 2));
  EXPECT_EQ(placeholder(runIt(q, Semantics::Value), "b_a"), a);
}

TEST(OracleElement, ShareAllocWritesArgumentStorage) {
  // H6b: w = op(v) shares v's storage, so the returned v reads w's contents under S.
  Program p = makeProgram({"b_s BUFFER s i64[4]", "x USER_INPUT i64[4]"},
                          {"v: \"i64[4]\" = torch.ops.aten.add.Tensor(x, 1)",
                           "w: \"i64[4]\" = torch.ops.aten.mul.Tensor(v, 3)  # meta: _share_alloc_with_arg_idx=0"},
                          {"v BUFFER_MUTATION s", "w USER_OUTPUT"});
  Values x = input("x", 4);
  RunResult par = runIt(p, Semantics::Par), f = runIt(p, Semantics::Value);
  Values w(4), v(4);
  for (int i = 0; i < 4; ++i) v[i] = x[i] + 1, w[i] = v[i] * 3;
  EXPECT_EQ(placeholder(par, "b_s"), w);  // clobbered
  EXPECT_EQ(placeholder(f, "b_s"), v);    // intended
  EXPECT_EQ(output(par, 0), w);
  EXPECT_TRUE(firstDifference(par, f).has_value());
}

TEST(OracleElement, ParSeqAndViewModes) {
  // B3: a := old b (through view_copy), b := b + x, with b written first.
  Program p = makeProgram({"b_b BUFFER b i64[4]", "b_a BUFFER a i64[2, 2]", "x USER_INPUT i64[4]"},
                          {"vc = torch.ops.aten.view_copy.default(b_b, [2, 2])", "ad = torch.ops.aten.add.Tensor(b_b, x)"},
                          {"ad BUFFER_MUTATION b", "vc BUFFER_MUTATION a"});
  Values b = input("b_b", 4);
  for (ViewMode mode : {ViewMode::CopyViews, ViewMode::AliasViews}) {
    RunResult par = runIt(p, Semantics::Par, mode);
    EXPECT_EQ(placeholder(par, "b_a"), b) << toString(mode);
    RunResult seq = runIt(p, Semantics::Seq, mode);
    if (mode == ViewMode::CopyViews) EXPECT_EQ(placeholder(seq, "b_a"), b);
    else EXPECT_NE(placeholder(seq, "b_a"), b);  // reads the new b
  }
  // H3: the value is mutated after its definition; S_par sees it, F does not.
  Program q = makeProgram({"b_s BUFFER s i64[4]", "x USER_INPUT i64[4]"},
                          {"v = torch.ops.aten.add.Tensor(x, 1)", "w = torch.ops.aten.mul_.Tensor(v, 2)"},
                          {"v BUFFER_MUTATION s", "w USER_OUTPUT"});
  EXPECT_TRUE(firstDifference(runIt(q, Semantics::Par), runIt(q, Semantics::Value)).has_value());
  EXPECT_FALSE(firstDifference(runIt(q, Semantics::Par), runIt(q, Semantics::Seq)).has_value());
}

TEST(OracleElement, ViewCopyReturnedStaysACopy) {
  // In the alias mode a view_copy the program returns stays a copy: a later in-place write to
  // its base does not show through.
  Program p = makeProgram({"x USER_INPUT i64[4]"},
                          {"c = torch.ops.aten.clone.default(x)", "vc = torch.ops.aten.view_copy.default(c, [2, 2])",
                           "a = torch.ops.aten.add_.Tensor(c, 1)"},
                          {"vc USER_OUTPUT", "a USER_OUTPUT"});
  Values x = input("x", 4);
  EXPECT_EQ(output(runIt(p, Semantics::Par, ViewMode::AliasViews), 0), x);
  Program q = makeProgram({"x USER_INPUT i64[4]"},
                          {"c = torch.ops.aten.clone.default(x)", "vc = torch.ops.aten.view_copy.default(c, [2, 2])",
                           "a = torch.ops.aten.add_.Tensor(c, 1)", "s = torch.ops.aten.clone.default(vc)"},
                          {"s USER_OUTPUT", "a USER_OUTPUT"});
  Values plus(4);
  for (int i = 0; i < 4; ++i) plus[i] = x[i] + 1;
  EXPECT_EQ(output(runIt(q, Semantics::Par, ViewMode::AliasViews), 0), plus);
  EXPECT_EQ(output(runIt(q, Semantics::Par, ViewMode::CopyViews), 0), x);
}

TEST(OracleElement, UserInputMutationOutputIsTheTargetsFinalValue) {
  Program p = makeProgram({"x USER_INPUT i64[2]"}, {"m = torch.ops.aten.mul.Tensor(x, 2)", "o = torch.ops.aten.add.Tensor(x, 1)"},
                          {"m USER_INPUT_MUTATION x", "o USER_OUTPUT"});
  Values x = input("x", 2);
  RunResult r = runIt(p, Semantics::Par);
  EXPECT_EQ(placeholder(r, "x"), (Values{x[0] * 2, x[1] * 2}));
  EXPECT_EQ(output(r, 0), (Values{x[0] * 2, x[1] * 2}));
  EXPECT_EQ(output(r, 1), (Values{x[0] + 1, x[1] + 1}));
}

TEST(OracleElement, MemoryCapIsAnError) {
  Program p = makeProgram({"x USER_INPUT i64[1000, 1000]"}, {"o = torch.ops.aten.clone.default(x)"}, {"o USER_OUTPUT"});
  ExecOptions o;
  o.maxElements = 100000;
  Result<Executable> r = compile(p, tableFor(p), o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.errors.front().message.find("memory cap"), std::string::npos);
}

TEST(OracleElement, InputSetsDiffer) {
  Program p = makeProgram({"x USER_INPUT i64[2]"}, {"o = torch.ops.aten.clone.default(x)"}, {"o USER_OUTPUT"});
  EXPECT_NE(output(runIt(p, Semantics::Par, ViewMode::CopyViews, Tier::Element, {0, 0}), 0),
            output(runIt(p, Semantics::Par, ViewMode::CopyViews, Tier::Element, {0, 1}), 0));
  EXPECT_NE(output(runIt(p, Semantics::Par, ViewMode::CopyViews, Tier::Element, {1, 0}), 0),
            output(runIt(p, Semantics::Par, ViewMode::CopyViews, Tier::Element, {0, 0}), 0));
}

// F: an op that writes an argument without returning it as its in-place result rebinds the
// argument node to its new version; export then names that node as the mutation value.
TEST(OracleElement, ValueSemanticsRebindsWrittenArguments) {
  for (Tier tier : {Tier::Element, Tier::Storage}) {
    // The element tier needs static shapes; `s0` sends the same programs to the storage tier.
    auto type = [&](const std::string& shape) { return tier == Tier::Element ? "i64[" + shape + "]" : std::string("i64[s0]"); };
    auto same = [&](const Program& p) {
      for (ViewMode mode : {ViewMode::CopyViews, ViewMode::AliasViews}) {
        RunResult par = runIt(p, Semantics::Par, mode, tier), f = runIt(p, Semantics::Value, mode, tier);
        EXPECT_FALSE(firstDifference(par, f).has_value()) << toString(tier) << " " << toString(mode);
      }
    };
    // A mutable custom op (llama::update_cache): the cache placeholder is the mutation value
    // and is read after the op.
    Program cache = makeProgram({"b_cache BUFFER cache " + type("4"), "v USER_INPUT " + type("4")},
                                {"u: \"" + type("1") + "\" = torch.ops.llama.update_cache.default(v, b_cache, 0)",
                                 "r: \"" + type("4") + "\" = torch.ops.aten.add.Tensor(b_cache, 1)"},
                                {"b_cache BUFFER_MUTATION cache", "r USER_OUTPUT"},
                                "llama::update_cache(Tensor value, Tensor(a!) cache, SymInt start_pos) -> Tensor");
    same(cache);
    if (tier == Tier::Element) {  // the buffer ends with the new version, not its input
      EXPECT_NE(placeholder(runIt(cache, Semantics::Value, ViewMode::CopyViews, tier), "b_cache"), input("b_cache", 4));
    }
    // Tensor(a!)[]: H4's value, written through a list, is the mutation value.
    Program list = makeProgram({"b_s BUFFER s " + type("4"), "x USER_INPUT " + type("4")},
                               {"add: \"" + type("4") + "\" = torch.ops.aten.add.Tensor(x, 1)",
                                "mul: \"" + type("4") + "\" = torch.ops.aten.mul.Tensor(x, 3)",
                                "f = torch.ops.my_ops.scale_all_.default([add, mul], 2)"},
                               {"add BUFFER_MUTATION s", "mul USER_OUTPUT"}, "my_ops::scale_all_(Tensor(a!)[] self, Scalar s) -> ()");
    same(list);
    // _foreach_add_ (interpreted, `-> ()`).
    Program foreach = makeProgram({"b_s BUFFER s " + type("4"), "x USER_INPUT " + type("4")},
                                  {"v: \"" + type("4") + "\" = torch.ops.aten.mul.Tensor(x, 3)",
                                   "f = torch.ops.aten._foreach_add_.Scalar([v], 2)",
                                   "o: \"" + type("4") + "\" = torch.ops.aten.add.Tensor(v, 1)"},
                                  {"v BUFFER_MUTATION s", "o USER_OUTPUT"});
    same(foreach);
    // out=: the out argument (here the buffer) holds the result for later readers and the end.
    Program out = makeProgram({"b_o BUFFER o " + type("4"), "x USER_INPUT " + type("4"), "i USER_INPUT " + type("1"),
                               "src USER_INPUT " + type("1")},
                              {"r: \"" + type("4") + "\" = torch.ops.aten.index_copy.out(x, 0, i, src, out = b_o)",
                               "s: \"" + type("4") + "\" = torch.ops.aten.add.Tensor(b_o, r)"},
                              {"b_o BUFFER_MUTATION o", "s USER_OUTPUT"});
    same(out);
    // _native_batch_norm_legit writes its running statistics.
    Program bn = makeProgram({"b_m BUFFER m " + type("4"), "b_v BUFFER v " + type("4"), "x USER_INPUT " + type("2, 4")},
                             {"bn = torch.ops.aten._native_batch_norm_legit.default(x, None, None, b_m, b_v, True, 0.1, 1e-05)",
                              "y: \"" + type("2, 4") + "\" = bn[0]", "z: \"" + type("4") + "\" = torch.ops.aten.add.Tensor(b_m, 1)"},
                             {"b_m BUFFER_MUTATION m", "b_v BUFFER_MUTATION v", "y USER_OUTPUT", "z USER_OUTPUT"});
    same(bn);
    // In-place kind stays a new version of its own: H3 remains ill-formed under F.
    Program h3 = makeProgram({"b_s BUFFER s " + type("4"), "x USER_INPUT " + type("4")},
                             {"v: \"" + type("4") + "\" = torch.ops.aten.add.Tensor(x, 1)",
                              "w: \"" + type("4") + "\" = torch.ops.aten.relu_.default(v)"},
                             {"v BUFFER_MUTATION s", "w USER_OUTPUT"});
    EXPECT_TRUE(firstDifference(runIt(h3, Semantics::Par, ViewMode::CopyViews, tier),
                                runIt(h3, Semantics::Value, ViewMode::CopyViews, tier)).has_value()) << toString(tier);
  }
}

// A tuple-returning node printed without an annotation: its getitem users give the shapes, and
// the elements nobody takes need none.
TEST(OracleElement, TupleResultShapesFromGetitems) {
  Program p = makeProgram({"b_m BUFFER m i64[4]", "b_v BUFFER v i64[4]", "x USER_INPUT i64[2, 4]"},
                          {"bn = torch.ops.aten._native_batch_norm_legit_functional.default(x, None, None, b_m, b_v, True, 0.1, 1e-05)",
                           "g0: \"i64[2, 4]\" = bn[0]", "g3: \"i64[4]\" = bn[3]", "g4: \"i64[4]\" = bn[4]"},
                          {"g3 BUFFER_MUTATION m", "g4 BUFFER_MUTATION v", "g0 USER_OUTPUT"});
  RunResult r = runIt(p, Semantics::Par);
  EXPECT_EQ(r.tier, Tier::Element);
  EXPECT_EQ(output(r, 0).size(), 8u);
  EXPECT_NE(placeholder(r, "b_m"), input("b_m", 4));
  EXPECT_FALSE(firstDifference(r, runIt(p, Semantics::Value)).has_value());
  // A used element without a type still needs one.
  Program q = makeProgram({"b_m BUFFER m i64[4]", "b_v BUFFER v i64[4]", "x USER_INPUT i64[2, 4]"},
                          {"bn = torch.ops.aten._native_batch_norm_legit_functional.default(x, None, None, b_m, b_v, True, 0.1, 1e-05)",
                           "g0: \"i64[2, 4]\" = bn[0]", "g1 = bn[1]", "g3: \"i64[4]\" = bn[3]"},
                          {"g3 BUFFER_MUTATION m", "g0 USER_OUTPUT", "g1 USER_OUTPUT"});
  ExecOptions o;
  EXPECT_FALSE(compile(q, tableFor(q), o).ok());
}

TEST(OracleStorage, ReadsWritesAndSemantics) {
  // No shapes: the storage tier. H1: the old value is read after the new value is computed.
  Program p = makeProgram({"b_s BUFFER s f32[s0]", "x USER_INPUT f32[s0]"},
                          {"v = torch.ops.aten.mul.Tensor(x, 2)", "r = torch.ops.aten.add.Tensor(b_s, x)"},
                          {"v BUFFER_MUTATION s", "r USER_OUTPUT"});
  RunResult par = runIt(p, Semantics::Par, ViewMode::CopyViews, Tier::Storage);
  EXPECT_EQ(par.tier, Tier::Storage);
  EXPECT_FALSE(firstDifference(par, runIt(p, Semantics::Seq, ViewMode::CopyViews, Tier::Storage)));
  EXPECT_FALSE(firstDifference(par, runIt(p, Semantics::Value, ViewMode::CopyViews, Tier::Storage)));
  // Writing through a view changes the root; reading the same view back yields the value.
  Program q = makeProgram({"b_s BUFFER s f32[s0]", "x USER_INPUT f32[s0]"},
                          {"sl = torch.ops.aten.slice.Tensor(b_s, 0, 0, 2)", "c = torch.ops.aten.copy_.default(sl, x)",
                           "o = torch.ops.aten.clone.default(c)"},
                          {"o USER_OUTPUT"});
  RunResult rq = runIt(q, Semantics::Par, ViewMode::CopyViews, Tier::Storage);
  RunResult fq = runIt(q, Semantics::Value, ViewMode::CopyViews, Tier::Storage);
  EXPECT_EQ(output(rq, 0), output(fq, 0));
  EXPECT_NE(placeholder(rq, "b_s"), placeholder(fq, "b_s"));
  // B3 in the storage tier too.
  Program b3 = makeProgram({"b_b BUFFER b f32[s0]", "b_a BUFFER a f32[s0]", "x USER_INPUT f32[s0]"},
                           {"vc = torch.ops.aten.view_copy.default(b_b, [2, 2])", "ad = torch.ops.aten.add.Tensor(b_b, x)"},
                           {"ad BUFFER_MUTATION b", "vc BUFFER_MUTATION a"});
  EXPECT_FALSE(firstDifference(runIt(b3, Semantics::Par, ViewMode::CopyViews, Tier::Storage),
                               runIt(b3, Semantics::Seq, ViewMode::CopyViews, Tier::Storage)));
  EXPECT_TRUE(firstDifference(runIt(b3, Semantics::Par, ViewMode::AliasViews, Tier::Storage),
                              runIt(b3, Semantics::Seq, ViewMode::AliasViews, Tier::Storage)));
}

// Contiguous operands are read in place and strided ones gathered through listed offsets: the
// same values either way, in place or out of place.
TEST(OracleElement, ContiguousAndStridedOperandsAgree) {
  Program p = makeProgram({"x USER_INPUT i64[2, 3]", "y USER_INPUT i64[3, 2]"},
                          {"t: \"i64[2, 3]\" = torch.ops.aten.transpose.int(y, 0, 1)",
                           "c: \"i64[2, 3]\" = torch.ops.aten.clone.default(t)",
                           "s: \"i64[2, 3]\" = torch.ops.aten.add.Tensor(x, t)",
                           "d: \"i64[2, 3]\" = torch.ops.aten.add.Tensor(x, c)",
                           "u: \"i64[2, 3]\" = torch.ops.aten.mul.Tensor(t, c)",
                           "v: \"i64[2, 3]\" = torch.ops.aten.mul.Tensor(c, c)"},
                          {"s USER_OUTPUT", "d USER_OUTPUT", "u USER_OUTPUT", "v USER_OUTPUT"});
  RunResult r = runIt(p, Semantics::Par);
  Values x = input("x", 6), y = input("y", 6);
  Values expected(6);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j) expected[static_cast<std::size_t>(3 * i + j)] = x[3 * i + j] + y[2 * j + i];
  EXPECT_EQ(output(r, 0), expected);
  EXPECT_EQ(output(r, 1), expected);
  EXPECT_EQ(output(r, 2), output(r, 3));
}

// The plain compile is the reference: compile() of one program, in one view mode and model.
// check() makes its five executables (the program's copy-views, alias-views and F ones, the
// placed program's copy-views and alias-views ones) with compileAnalysedShared, which forks the
// copy-views compile before the first node where another one differs and lets each fork copy
// (replay) the nodes its parent compiled alike (oracle/element/sharing.cpp). That is an
// optimisation only: every shared executable must compile, or fail with the same message, and
// run exactly as its plain compile does, whichever way it was made. Each way is counted here and
// must occur: the alias views forked from the copy views; F and the placed program forked from
// the copy views, or from a copy-views compile that failed after the fork (small memory caps,
// an `out=` argument too small for the result); the placed program's alias views forked from
// the placed program or from the alias-views fork; the copy-views compile failing before any
// fork (F and the placed program are then compiled plain); and nodes replayed in every kind of
// fork. runEndings reuses one run's state for several endings, which must also give what one
// run per ending gives.
void expectSameRuns(const Executable& shared, const Executable& plain, std::span<const Semantics> endings,
                    const std::string& what) {
  for (int set = 0; set < 2; ++set) {
    std::vector<RunResult> a = runEndings(shared, endings, {7, set}, false);
    for (std::size_t k = 0; k < endings.size(); ++k) {
      RunResult b = run(plain, endings[k], {7, set});
      EXPECT_EQ(a[k].placeholders, b.placeholders) << what;
      EXPECT_EQ(a[k].outputs, b.outputs) << what;
    }
  }
}

void expectSameCompile(const Result<Executable>& shared, const Result<Executable>& plain,
                       std::span<const Semantics> endings, const std::string& what) {
  ASSERT_EQ(shared.ok(), plain.ok()) << what << ": " << formatAll(shared.errors) << formatAll(plain.errors);
  if (!plain) {
    EXPECT_EQ(formatAll(shared.errors), formatAll(plain.errors)) << what;
    return;
  }
  EXPECT_EQ(shared->dependsOnViewMode(), plain->dependsOnViewMode()) << what;
  expectSameRuns(*shared, *plain, endings, what);
}

// The ways compileAnalysedShared makes its executables (see above), counted.
enum SharedWay {
  AliasFromCopy,          // the alias views forked from the copy views
  ValueFromCopy,          // F forked from the copy views
  ValueFromFailedCopy,    // F forked from a copy-views compile that failed after the fork
  PlacedFromCopy,         // the placed program forked from the copy views
  PlacedFromFailedCopy,   // ... from a copy-views compile that failed after the fork
  PlacedAliasFromPlaced,  // the placed program's alias views forked from the placed program
  PlacedAliasFromAlias,   // ... from the alias-views fork
  NoFork,                 // the copy-views compile failed before any fork (F, placed: compiled plain)
  kSharedWays
};

struct SharedCounts {
  int ways[kSharedWays] = {};
  std::size_t replayed[3] = {0, 0, 0};  // F, alias views, placed program (both view modes)
};

// compileAnalysedShared of a program and its placed version against their plain compiles.
void expectSharedMatchesPlain(const Program& program, const Program& placed, const SchemaTable& schemas, std::size_t cap,
                              const std::string& at, SharedCounts& counts) {
  const Semantics storage[] = {Semantics::Par, Semantics::Seq};
  const Semantics value[] = {Semantics::Value};
  const Semantics placedEnding[] = {Semantics::Placed};
  const detail::Analysis analysis = detail::analyse(program, schemas);
  const detail::Analysis placedAnalysis = detail::analyse(placed, schemas);
  ExecOptions o;
  o.maxElements = cap;
  const detail::SharedExecutables all = detail::compileAnalysedShared(analysis, o, true, &placedAnalysis);
  auto plain = [&](const Program& p, ViewMode mode, bool valueModel, bool placedProgram) {
    ExecOptions x = o;
    x.viewMode = mode;
    x.valueSemantics = valueModel;
    x.placedProgram = placedProgram;
    return compile(p, schemas, x);
  };
  expectSameCompile(all.copyViews, plain(program, ViewMode::CopyViews, false, false), storage, at + ", copy views");
  // The alias views are an executable of their own only where the copy views depend on the
  // view mode; else the copy-views one stands for both.
  const bool aliasOwn = all.copyViews && all.copyViews->dependsOnViewMode();
  ASSERT_EQ(all.aliasViews.has_value(), aliasOwn) << at;
  if (all.copyViews)
    expectSameCompile(aliasOwn ? *all.aliasViews : all.copyViews, plain(program, ViewMode::AliasViews, false, false),
                      storage, at + ", alias views");
  ASSERT_TRUE(all.value.has_value()) << at;
  expectSameCompile(*all.value, plain(program, ViewMode::CopyViews, true, false), value, at + ", F");
  ASSERT_TRUE(all.placed.has_value()) << at;
  expectSameCompile(*all.placed, plain(placed, ViewMode::CopyViews, false, true), placedEnding, at + ", placed");
  const bool placedAliasOwn = *all.placed && (*all.placed)->dependsOnViewMode();
  ASSERT_EQ(all.placedAlias.has_value(), placedAliasOwn) << at;
  if (*all.placed)
    expectSameCompile(placedAliasOwn ? *all.placedAlias : *all.placed, plain(placed, ViewMode::AliasViews, false, true),
                      placedEnding, at + ", placed, alias views");

  // How each was made.
  auto programOf = [](const std::optional<Result<Executable>>& exe) -> const detail::ElementProgram* {
    return exe && *exe ? (*exe)->impl->element.get() : nullptr;
  };
  auto originOf = [&](const std::optional<Result<Executable>>& exe) {
    const detail::ElementProgram* p = programOf(exe);
    return p ? detail::originOf(*p) : detail::ElementOrigin{};
  };
  const detail::ElementProgram* copyViews = all.copyViews ? all.copyViews->impl->element.get() : nullptr;
  const detail::ElementOrigin alias = originOf(all.aliasViews), f = originOf(all.value), p = originOf(all.placed),
                              pa = originOf(all.placedAlias);
  int* ways = counts.ways;
  ways[AliasFromCopy] += alias.forked && alias.parent && alias.parent == copyViews;
  ways[ValueFromCopy] += f.forked && f.parent && f.parent == copyViews;
  ways[ValueFromFailedCopy] += f.forked && !copyViews;
  ways[PlacedFromCopy] += p.forked && p.parent && p.parent == copyViews;
  ways[PlacedFromFailedCopy] += p.forked && !copyViews;
  ways[PlacedAliasFromPlaced] += pa.forked && pa.parent && pa.parent == programOf(all.placed);
  ways[PlacedAliasFromAlias] += pa.forked && pa.parent && pa.parent == programOf(all.aliasViews);
  ways[NoFork] += !copyViews && !f.forked && !p.forked;
  auto replayedIn = [&](const std::optional<Result<Executable>>& exe) {
    const detail::ElementProgram* e = programOf(exe);
    return e ? detail::replayedNodes(*e) : std::size_t{0};
  };
  counts.replayed[0] += replayedIn(all.value);
  counts.replayed[1] += replayedIn(all.aliasViews);
  counts.replayed[2] += replayedIn(all.placed) + replayedIn(all.placedAlias);
}

TEST(OracleElement, ForkedCompilesMatchPlainCompiles) {
  gen::GenOptions options;
  options.maxNodes = 30;
  gen::Generator generator(options);
  SharedCounts counts;
  for (std::uint64_t seed = 0; seed < 300; ++seed) {
    gen::RandomChoices choices(seed);
    gen::Generated g = generator.generate(choices);
    SchemaTable schemas = schemasFor(g.program, generator.schemas());
    const Placement placement = seed % 3 == 0 ? Placement::End : seed % 3 == 1 ? Placement::Early : Placement::Pr20744_ff2892d4;
    PlacedProgram placed = place(g.program, placement, schemas);
    if (placed.failure) continue;
    // The default memory cap, and caps that stop some compiles part way (before or after the
    // forks).
    for (const std::size_t cap : {ExecOptions{}.maxElements, std::size_t{40}, std::size_t{150}})
      expectSharedMatchesPlain(g.program, placed.program, schemas, cap,
                               "seed " + std::to_string(seed) + ", cap " + std::to_string(cap), counts);
  }
  // A compile that fails in the storage model and not in the value model: `out` cannot hold the
  // result (it is the wrong shape), so the copy-views compile fails at the add, after F forked.
  const Program outTooSmall = makeProgram({"b_z BUFFER z i64[2]", "x USER_INPUT i64[4]"},
                                          {"a: \"i64[4]\" = torch.ops.aten.add.out(x, x, out = b_z)"}, {"a USER_OUTPUT"});
  expectSharedMatchesPlain(outTooSmall, outTooSmall, tableFor(outTooSmall), ExecOptions{}.maxElements, "out too small",
                           counts);
  for (int way = 0; way < kSharedWays; ++way) EXPECT_GT(counts.ways[way], 0) << "no executable made in way " << way;
  // The forks copy most of the nodes their parents compiled alike (ElementCompiler::replay).
  EXPECT_GT(counts.replayed[0], 100u);
  EXPECT_GT(counts.replayed[1], 50u);
  EXPECT_GT(counts.replayed[2], 50u);
}

// What a report calls each observation: a placeholder by its name, an output by its position
// and the node it returns. Both tiers say the same.
TEST(OracleElement, ObservationLabels) {
  Program p = makeProgram({"b_s BUFFER s i64[2]", "x USER_INPUT i64[2]"},
                          {"a: \"i64[2]\" = torch.ops.aten.add.Tensor(x, b_s)",
                           "c: \"i64[2]\" = torch.ops.aten.mul.Tensor(a, 3)"},
                          {"a BUFFER_MUTATION s", "c USER_OUTPUT", "x USER_OUTPUT"});
  for (Tier tier : {Tier::Element, Tier::Storage}) {
    RunResult r = runIt(p, Semantics::Par, ViewMode::CopyViews, tier);
    ASSERT_EQ(r.placeholders.size(), 2u);
    EXPECT_EQ(r.placeholders[0].label, "b_s");
    EXPECT_EQ(r.placeholders[1].label, "x");
    ASSERT_EQ(r.outputs.size(), 2u);
    EXPECT_EQ(r.outputs[0].label, "output 0 (%c)") << toString(tier);
    EXPECT_EQ(r.outputs[1].label, "output 1 (%x)") << toString(tier);
  }
}

// check() runs with detail::observe (flat observations, one scratch reused by every run) and
// compares with firstDifferenceOf, reading labels from the executable: the same values and the
// same first differences as the public runEndings() and firstDifference(), in both tiers.
void expectSameDifference(const std::optional<Difference>& a, const std::optional<Difference>& b, std::uint64_t seed) {
  ASSERT_EQ(a.has_value(), b.has_value()) << "seed " << seed;
  if (!a) return;
  EXPECT_EQ(a->isOutput, b->isOutput) << "seed " << seed;
  EXPECT_EQ(a->index, b->index) << "seed " << seed;
  EXPECT_EQ(a->label, b->label) << "seed " << seed;
  EXPECT_EQ(a->element, b->element) << "seed " << seed;
  EXPECT_EQ(a->expected, b->expected) << "seed " << seed;
  EXPECT_EQ(a->actual, b->actual) << "seed " << seed;
}

TEST(OracleElement, ObservedRunsMatchRunResults) {
  gen::GenOptions options;
  options.maxNodes = 30;
  gen::Generator generator(options);
  detail::RunScratch scratch;  // shared by every run below, as check() shares it
  const Semantics storage[] = {Semantics::Par, Semantics::Seq};
  const Semantics value[] = {Semantics::Value};
  const Semantics placedEnding[] = {Semantics::Placed};
  int differences = 0, runs = 0;
  for (std::uint64_t seed = 0; seed < 40; ++seed) {
    gen::RandomChoices choices(seed);
    gen::Generated g = generator.generate(choices);
    SchemaTable schemas = schemasFor(g.program, generator.schemas());
    PlacedProgram placed = place(g.program, seed % 2 ? Placement::End : Placement::Pr20744_ff2892d4, schemas);
    if (placed.failure) continue;
    for (Tier tier : {Tier::Element, Tier::Storage}) {
      ExecOptions o;
      o.tier = tier;
      o.viewMode = seed % 3 == 0 ? ViewMode::AliasViews : ViewMode::CopyViews;
      Result<Executable> reference = compile(g.program, schemas, o);
      o.valueSemantics = true;
      Result<Executable> model = compile(g.program, schemas, o);
      o.valueSemantics = false;
      o.placedProgram = true;
      Result<Executable> placedExe = compile(placed.program, schemas, o);
      if (!reference || !model || !placedExe) continue;
      for (int set = 0; set < 2; ++set) {
        const InputSet inputs{seed, set};
        detail::Observations ref[2], f[1], p[1];
        detail::observe(*reference, storage, inputs, scratch, ref);
        detail::observe(*model, value, inputs, scratch, f);
        detail::observe(*placedExe, placedEnding, inputs, scratch, p);
        std::vector<RunResult> refRuns = runEndings(*reference, storage, inputs);
        const RunResult fRun = run(*model, Semantics::Value, inputs), pRun = run(*placedExe, Semantics::Placed, inputs);
        const std::pair<const detail::Observations*, const RunResult*> pairs[] = {
            {&ref[0], &refRuns[0]}, {&ref[1], &refRuns[1]}, {&f[0], &fRun}, {&p[0], &pRun}};
        for (const auto& [observed, result] : pairs) {
          ++runs;
          for (const bool isOutput : {false, true}) {
            const std::vector<Observation>& list = isOutput ? result->outputs : result->placeholders;
            ASSERT_EQ(observed->count(isOutput), list.size()) << "seed " << seed;
            for (std::size_t i = 0; i < list.size(); ++i) {
              const std::span<const std::uint64_t> v = observed->of(isOutput, i);
              EXPECT_EQ(Values(v.begin(), v.end()), list[i].values) << "seed " << seed;
            }
          }
        }
        const detail::ObservedRun par{ref[0], *reference}, seq{ref[1], *reference}, fo{f[0], *model}, po{p[0], *placedExe};
        const std::tuple<detail::ObservedRun, const RunResult*> others[] = {{seq, &refRuns[1]}, {fo, &fRun}, {po, &pRun}};
        for (const auto& [other, otherRun] : others) {
          std::optional<Difference> expected = firstDifference(refRuns[0], *otherRun);
          differences += expected.has_value();
          expectSameDifference(detail::firstDifferenceOf(par, other), expected, seed);
          expectSameDifference(detail::firstDifferenceOf(other, par), firstDifference(*otherRun, refRuns[0]), seed);
        }
      }
    }
  }
  EXPECT_GT(runs, 100);
  EXPECT_GT(differences, 5);  // some comparisons differ (findings, End/PR #20744 bugs), so labels are compared too
}

// Every corpus file and the generated programs of seeds 0..39 (up to 30 nodes), each with its
// schema table.
std::vector<std::pair<Program, SchemaTable>> corpusAndGeneratedPrograms() {
  std::vector<std::pair<Program, SchemaTable>> programs;
  for (const auto& file : testing::filesUnder(testing::corpusDir())) {
    Program p = testing::loadProgram(file);
    SchemaTable schemas = schemasFor(p, builtinSchemas());
    programs.emplace_back(std::move(p), std::move(schemas));
  }
  gen::GenOptions options;
  options.maxNodes = 30;
  gen::Generator generator(options);
  for (std::uint64_t seed = 0; seed < 40; ++seed) {
    gen::RandomChoices choices(seed);
    Program p = generator.generate(choices).program;
    SchemaTable schemas = schemasFor(p, generator.schemas());
    programs.emplace_back(std::move(p), std::move(schemas));
  }
  return programs;
}

// check() takes the placed run of a placement that leaves the program unchanged from the
// reference run (a third ending, Placed, after S_par and S_seq) instead of compiling the
// program again as a placed program: the two must observe the same, for every program (those
// with end writes included, which the Placed ending must leave out), in both tiers and view
// modes; and the placed compile must succeed whenever the reference one does.
TEST(OracleElement, PlacedEndingOfTheReferenceIsTheProgramRunAsPlaced) {
  const std::vector<std::pair<Program, SchemaTable>> programs = corpusAndGeneratedPrograms();
  const Semantics endings[] = {Semantics::Par, Semantics::Seq, Semantics::Placed};
  int compared = 0, endWritesLeftOut = 0;
  for (const auto& [program, schemas] : programs)
    for (Tier tier : {Tier::Element, Tier::Storage})
      for (ViewMode mode : {ViewMode::CopyViews, ViewMode::AliasViews}) {
        ExecOptions o;
        o.tier = tier;
        o.viewMode = mode;
        Result<Executable> reference = compile(program, schemas, o);
        o.placedProgram = true;
        Result<Executable> asPlaced = compile(program, schemas, o);
        if (!reference) continue;
        ASSERT_TRUE(asPlaced.ok()) << formatAll(asPlaced.errors);
        for (int set = 0; set < 2; ++set) {
          const InputSet inputs{7, set};
          std::vector<RunResult> runs = runEndings(*reference, endings, inputs);
          RunResult placed = run(*asPlaced, Semantics::Placed, inputs);
          EXPECT_EQ(runs[2].placeholders, placed.placeholders) << toString(tier) << " " << toString(mode);
          EXPECT_EQ(runs[2].outputs, placed.outputs) << toString(tier) << " " << toString(mode);
          endWritesLeftOut += runs[0].placeholders != runs[2].placeholders;
          ++compared;
        }
      }
  EXPECT_GT(compared, 200);
  EXPECT_GT(endWritesLeftOut, 20);  // programs whose S_par end writes change a buffer
}

// The runs of check()'s forked executables (F, alias views, placed) start from the state the
// copy-views run (or the placed one) kept at their fork: they must observe exactly what a run
// from the beginning observes. A kept state serves only its own program's forks and the same
// inputs, and none after releaseForkStates().
TEST(OracleElement, ForkedRunsStartFromTheirParentsStateAndMatchFreshRuns) {
  gen::GenOptions options;
  options.maxNodes = 30;
  gen::Generator generator(options);
  const Semantics storage[] = {Semantics::Par, Semantics::Seq};
  const Semantics value[] = {Semantics::Value};
  const Semantics placedEnding[] = {Semantics::Placed};
  detail::RunScratch scratch;  // one for every run below, as a Checker keeps one
  auto expectFresh = [&](const Executable& exe, std::span<const Semantics> endings, InputSet inputs,
                         std::uint64_t seed, const char* what) {
    std::vector<detail::Observations> observed(endings.size());
    detail::observe(exe, endings, inputs, scratch, observed);
    std::vector<RunResult> fresh = runEndings(exe, endings, inputs);  // its own scratch: from the start
    for (std::size_t k = 0; k < endings.size(); ++k)
      for (const bool isOutput : {false, true}) {
        const std::vector<Observation>& list = isOutput ? fresh[k].outputs : fresh[k].placeholders;
        ASSERT_EQ(observed[k].count(isOutput), list.size()) << what << ", seed " << seed;
        for (std::size_t i = 0; i < list.size(); ++i) {
          const std::span<const std::uint64_t> v = observed[k].of(isOutput, i);
          EXPECT_EQ(Values(v.begin(), v.end()), list[i].values) << what << ", seed " << seed << ", set " << inputs.index;
        }
      }
  };
  std::size_t forkedRuns = 0, otherInputs = 0;
  for (std::uint64_t seed = 0; seed < 40; ++seed) {
    gen::RandomChoices choices(seed);
    gen::Generated g = generator.generate(choices);
    SchemaTable schemas = schemasFor(g.program, generator.schemas());
    PlacedProgram placed = place(g.program, seed % 2 ? Placement::Early : Placement::End, schemas);
    if (placed.failure) continue;
    const detail::Analysis analysis = detail::analyse(g.program, schemas);
    const detail::Analysis placedAnalysis = detail::analyse(placed.program, schemas);
    detail::SharedExecutables all = detail::compileAnalysedShared(analysis, ExecOptions{}, true, &placedAnalysis);
    if (!all.copyViews || !*all.value || !*all.placed) continue;
    if (all.aliasViews && !*all.aliasViews) continue;
    if (all.placedAlias && !*all.placedAlias) continue;
    for (int set = 0; set < 2; ++set) {
      const InputSet inputs{seed, set};
      const std::size_t before = scratch.runsFromForkStates;
      expectFresh(*all.copyViews, storage, inputs, seed, "copy views");
      expectFresh(**all.value, value, inputs, seed, "F");
      expectFresh(**all.placed, placedEnding, inputs, seed, "placed");
      if (all.aliasViews) expectFresh(**all.aliasViews, storage, inputs, seed, "alias views");
      if (all.placedAlias) expectFresh(**all.placedAlias, placedEnding, inputs, seed, "placed, alias views");
      forkedRuns += scratch.runsFromForkStates - before;
    }
    // Another input set than the kept states': every run from the beginning, and still right.
    const std::size_t before = scratch.runsFromForkStates;
    expectFresh(**all.value, value, InputSet{seed, 5}, seed, "F, other inputs");
    expectFresh(**all.placed, placedEnding, InputSet{seed + 1, 0}, seed, "placed, other seed");
    otherInputs += scratch.runsFromForkStates - before;
    // Released states serve no run.
    expectFresh(*all.copyViews, storage, InputSet{seed, 0}, seed, "copy views again");
    scratch.releaseForkStates();
    expectFresh(**all.value, value, InputSet{seed, 0}, seed, "F after release");
    otherInputs += scratch.runsFromForkStates - before;
  }
  EXPECT_GT(forkedRuns, 60u);  // the sharing happens
  EXPECT_EQ(otherInputs, 0u);
  EXPECT_LE(scratch.forkStates.size(), detail::RunScratch::kMaxForkStates);
}

// check() analyses the placed program `like` the program: the facts of their common leading
// nodes are taken from the program's analysis. The result must be the analysis made from
// scratch, in every fact the compilers read, with every argument reference pointing into the
// placed program itself (not into the program it was taken from).
void expectSameArgRefs(const detail::Analysis& a, std::span<const detail::ArgRef> x, const detail::Analysis& b,
                       std::span<const detail::ArgRef> y, const std::string& what) {
  ASSERT_EQ(x.size(), y.size()) << what;
  for (std::size_t k = 0; k < x.size(); ++k) {
    EXPECT_EQ(x[k].arg, y[k].arg) << what << ", argument " << k;  // the same Arg object
    EXPECT_EQ(x[k].node, y[k].node) << what << ", argument " << k;
    if (x[k].arg == y[k].arg && x[k].arg->isSequence()) expectSameArgRefs(a, a.items(x[k]), b, b.items(y[k]), what);
  }
}

TEST(OracleElement, PlacedAnalysisTakenFromTheProgramsIsTheFreshOne) {
  const std::vector<std::pair<Program, SchemaTable>> programs = corpusAndGeneratedPrograms();
  std::size_t takenNodes = 0;
  for (const auto& [program, schemas] : programs)
    for (Placement placement : {Placement::Early, Placement::End, Placement::Upstream}) {
      PlacedProgram placed = place(program, placement, schemas);
      if (placed.failure || !validate(placed.program).empty()) continue;
      auto ops = std::make_shared<detail::OpCache>();
      ops->newUse();
      const detail::Analysis base = detail::analyse(program, schemas, ops);
      const detail::Analysis taken = detail::analyse(placed.program, schemas, ops, &base);
      const detail::Analysis fresh = detail::analyse(placed.program, schemas, ops);
      const std::string what = placed.program.graph.nodes.empty() ? "" : placed.program.graph.nodes[0].name;
      ASSERT_EQ(taken.nodes.size(), fresh.nodes.size());
      for (std::size_t i = 0; i < fresh.nodes.size(); ++i) {
        const detail::NodeFacts &t = taken.nodes[i], &f = fresh.nodes[i];
        const std::string at = what + ", node " + placed.program.graph.nodes[i].name;
        EXPECT_EQ(t.info.schema, f.info.schema) << at;
        EXPECT_EQ(t.info.kind, f.info.kind) << at;
        EXPECT_EQ(t.bound, f.bound) << at;
        EXPECT_EQ(t.bindError, f.bindError) << at;
        EXPECT_EQ(t.hasShape, f.hasShape) << at;
        EXPECT_EQ(t.rank, f.rank) << at;
        if (t.hasShape && f.hasShape) {
          for (std::uint32_t d = 0; d < f.rank; ++d) EXPECT_EQ(taken.shapes[t.shapeAt + d], fresh.shapes[f.shapeAt + d]) << at;
        }
        EXPECT_EQ(t.getitemUsers, f.getitemUsers) << at;
        EXPECT_EQ(t.keptViewCopy, f.keptViewCopy) << at;
        EXPECT_EQ(t.shareAllocArgIndex, f.shareAllocArgIndex) << at;
        EXPECT_EQ(t.kwAt - t.rawAt, f.kwAt - f.rawAt) << at;
        expectSameArgRefs(taken, taken.raw(t), fresh, fresh.raw(f), at + " (raw)");
        if (t.bound && f.bound) expectSameArgRefs(taken, taken.args(t), fresh, fresh.args(f), at + " (bound)");
        const std::size_t kwargs = placed.program.graph.nodes[i].kwargs.size();
        expectSameArgRefs(taken, {taken.argRefs.data() + t.kwAt, kwargs}, fresh, {fresh.argRefs.data() + f.kwAt, kwargs},
                          at + " (keywords)");
        takenNodes += i < detail::sharedPrefix(base, fresh);
      }
      expectSameArgRefs(taken, taken.returned(), fresh, fresh.returned(), what + " (returned)");
      // likeNodes: each node matched to the program's next unmatched node when it reads the same
      // (sameNodeText: its references name the same nodes, whose indices the copies moved), the
      // matching the placed program's compile follows (ElementCompiler::parentNodeOf).
      ASSERT_EQ(taken.likeNodes.size(), placed.program.graph.nodes.size()) << what;
      std::size_t next = 0;
      for (std::size_t i = 0; i < placed.program.graph.nodes.size(); ++i) {
        const bool equal = next < program.graph.nodes.size() &&
                           sameNodeText(program.graph.nodes[next], program.graph, placed.program.graph.nodes[i],
                                        placed.program.graph);
        EXPECT_EQ(taken.likeNodes[i], equal ? static_cast<std::uint32_t>(next++) : detail::ArgRef::kNoNode) << what << " " << i;
      }
      EXPECT_EQ(taken.visibleOutputs, fresh.visibleOutputs) << what;
      EXPECT_EQ(taken.mutatedPlaceholder, fresh.mutatedPlaceholder) << what;
      EXPECT_EQ(detail::sharedPrefix(base, taken), detail::sharedPrefix(base, fresh)) << what;
    }
  EXPECT_GT(takenNodes, 500u);  // most placed programs begin as their programs do
}

// A node compiles alike in two programs only if what later nodes decide about it agrees too:
// here the first program returns its view_copy (so it stays a copy in the alias-views mode)
// and the second does not, so the compiles share only the placeholder, and the second's
// alias-views executable is exactly its own.
TEST(OracleElement, SharedPrefixStopsWhereLaterNodesDecide) {
  const std::vector<std::string> inputs = {"x USER_INPUT i64[4]"};
  const std::vector<std::string> nodes = {"v: \"i64[2, 2]\" = torch.ops.aten.view_copy.default(x, [2, 2])",
                                          "w: \"i64[2, 2]\" = torch.ops.aten.add_.Tensor(v, 1)"};
  Program returnsView = makeProgram(inputs, nodes, {"v USER_OUTPUT", "x USER_OUTPUT"});
  Program returnsInput = makeProgram(inputs, nodes, {"x USER_OUTPUT", "w USER_OUTPUT"});
  SchemaTable schemas = tableFor(returnsView);
  const detail::Analysis a = detail::analyse(returnsView, schemas);
  const detail::Analysis b = detail::analyse(returnsInput, schemas);
  EXPECT_EQ(detail::sharedPrefix(a, b), 1u);
  EXPECT_EQ(detail::sharedPrefix(a, a), returnsView.graph.nodes.size());
  detail::SharedExecutables all = detail::compileAnalysedShared(a, ExecOptions{}, false, &b);
  ASSERT_TRUE(all.placedAlias.has_value() && all.placedAlias->ok());
  ExecOptions o;
  o.viewMode = ViewMode::AliasViews;
  o.placedProgram = true;
  Result<Executable> separate = compile(returnsInput, schemas, o);
  ASSERT_TRUE(separate.ok());
  RunResult shared = run(**all.placedAlias, Semantics::Placed, {});
  RunResult own = run(*separate, Semantics::Placed, {});
  EXPECT_EQ(shared.outputs, own.outputs);
  EXPECT_EQ(shared.placeholders, own.placeholders);
  // Through the alias, x itself was incremented.
  Values x = input("x", 4);
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(output(own, 0)[i], x[i] + 1);
}

// A Checker's op cache outlives the schema tables of its checks: each use (OpCache::newUse)
// may pass another table, in which a target may find an equal schema (another table's copy,
// remembered as equal), another schema (classified again) or none. Whatever the order, get()
// must give the schema the use's table gives, and classify() of it.
TEST(OracleElement, OpCacheFollowsTheTableOfEachUse) {
  auto tableWith = [](const std::string& line) {
    SchemaTable t = builtinSchemas();
    t.addAll(line, "test");
    return t;
  };
  const SchemaTable plainA = tableWith("my_ops::scale(Tensor self, int k=2) -> Tensor");
  const SchemaTable plainB = tableWith("my_ops::scale(Tensor self, int k=2) -> Tensor");  // equal, not the same
  const SchemaTable writes = tableWith("my_ops::scale(Tensor(a!) self, int k=3) -> Tensor(a!)");
  const SchemaTable none = builtinSchemas();
  const Node node = Node::call("s", "my_ops::scale", {Arg::ref(0)});
  detail::OpCache cache;
  const SchemaTable* order[] = {&plainA, &plainB, &plainA, &writes, &plainB, &none, &plainA, &plainA, &writes, &plainB};
  for (const SchemaTable* table : order) {
    cache.newUse();
    const detail::OpCache::Entry& e = cache.get(node, *table);
    const detail::OpInfo fresh = detail::classify(node, *table);
    EXPECT_EQ(e.info.schema, table->find("my_ops::scale", 1));
    EXPECT_EQ(e.info.schema, fresh.schema);
    EXPECT_EQ(e.info.annotated, fresh.annotated);
    EXPECT_EQ(e.info.resultWrites, fresh.resultWrites);
    EXPECT_EQ(&cache.get(node, *table), &e);  // the same entry within a use
    if (e.info.schema) {
      ASSERT_EQ(e.defaults.size(), 2u);
      EXPECT_EQ(e.defaults[1], Arg::ofInt(table == &writes ? 3 : 2));
    }
  }
}

TEST(OracleInputs, ExplicitValuesReplaceTheSeededElementsTheyName) {
  Program p = makeProgram({"b_s BUFFER s i64[4]", "x USER_INPUT i64[4]"},
                          {"out: \"i64[4]\" = torch.ops.aten.add.Tensor(b_s, x)"}, {"out USER_OUTPUT"});
  InputValues given;
  given.byName["x"] = {7, 8};  // elements 0 and 1; 2 and 3 stay seeded
  const RunResult r = runIt(p, Semantics::Par, ViewMode::CopyViews, Tier::Element, InputSet{0, 0, &given});
  const Values x = input("x", 4), s = input("b_s", 4);
  EXPECT_EQ(placeholder(r, "x"), (Values{7, 8, x[2], x[3]}));
  EXPECT_EQ(placeholder(r, "b_s"), s);
  EXPECT_EQ(output(r, 0), (Values{s[0] + 7, s[1] + 8, s[2] + x[2], s[3] + x[3]}));
  // Without them, the same run is the seeded one.
  EXPECT_EQ(placeholder(runIt(p, Semantics::Par), "x"), x);
}

TEST(OracleInputs, TheStorageTierTakesElementZeroAsTheDigest) {
  Program p = makeProgram({"b_s BUFFER s i64[4]", "x USER_INPUT i64[4]"},
                          {"out: \"i64[4]\" = torch.ops.aten.add.Tensor(b_s, x)"}, {"out USER_OUTPUT"});
  InputValues given;
  given.byName["x"] = {42};
  const RunResult r = runIt(p, Semantics::Par, ViewMode::CopyViews, Tier::Storage, InputSet{0, 0, &given});
  EXPECT_EQ(placeholder(r, "x"), (Values{42}));
  EXPECT_NE(placeholder(r, "b_s"), (Values{42}));
  EXPECT_NE(output(r, 0), output(runIt(p, Semantics::Par, ViewMode::CopyViews, Tier::Storage), 0));
}

}  // namespace
}  // namespace wb::oracle
