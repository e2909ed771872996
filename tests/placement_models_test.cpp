// tests/placement_models_test.cpp: the models of upstream, PR #20744 and draft #13857 do
// exactly what the real code does (executorch-semantics §2, §4, §8), bugs included.
//
// What every model makes of every file of corpus/hazards/ is stated in the files
// (tests/hazards_test.cpp). Here each hazard of executorch-semantics §4.4 is built as a program
// in C++, one mechanism per test: where each model puts each copy and by which rule, which
// specs it skips, the output tuple and the spec names, with the reason in a comment. The
// upstream tests of §8 and the two tests PR #20744 adds are rebuilt as assertions on the models.
#include <gtest/gtest.h>

#include <cstdint>
#include <iterator>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "core/placement.h"
#include "core/placement_models.h"
#include "core/schema.h"
#include "core/text.h"
#include "tests/builder.h"
#include "tests/testing.h"

namespace wb {
namespace {

using testing::bufferMut;
using testing::Builder;
using testing::I;
using testing::inputMut;
using testing::L;
using testing::Out;
using testing::R;
using testing::userOut;

SchemaTable tableFor(const Program& program, const SchemaTable& base = builtinSchemas()) {
  SchemaTable table = base;
  for (const std::string& s : program.schemas) table.addAll(s, "<test>");
  return table;
}

PlacedProgram upstream(const Program& p) { return placeUpstream(p, tableFor(p)); }
PlacedProgram pr(const Program& p) { return placePr20744(p, tableFor(p)); }
PlacedProgram draft(const Program& p) { return placeDraft13857(p, tableFor(p)); }

// ---------------------------------------------------------------------------------------------
// Queries on a placed program.

std::vector<std::string> nodeNames(const PlacedProgram& placed) {
  std::vector<std::string> names;
  for (const Node& n : placed.program.graph.nodes) names.push_back(n.name);
  return names;
}

std::vector<std::string> returnedNames(const PlacedProgram& placed) {
  std::vector<std::string> names;
  for (const Arg& a : placed.program.graph.returnedValues()) names.push_back(testing::nameOf(placed.program.graph, a));
  return names;
}

std::vector<std::string> specNames(const PlacedProgram& placed) {
  std::vector<std::string> names;
  for (const OutputSpec& s : placed.program.signature.outputs) names.push_back(s.name);
  return names;
}

std::size_t pos(const PlacedProgram& placed, const std::string& name) {
  std::optional<std::size_t> i = placed.program.graph.indexOf(name);
  EXPECT_TRUE(i.has_value()) << "no node " << name;
  return i.value_or(0);
}

// The node right before `name`, i.e. what a copy was inserted after.
std::string before(const PlacedProgram& placed, const std::string& name) {
  std::size_t i = pos(placed, name);
  return i == 0 ? "" : placed.program.graph.nodes[i - 1].name;
}

const Node& node(const PlacedProgram& placed, const std::string& name) {
  return placed.program.graph.nodes.at(pos(placed, name));
}

// Asserts that `copy` is `aten::copy_(buffer, value)`.
void expectCopy(const PlacedProgram& placed, const std::string& copy, const std::string& buffer,
                const std::string& value) {
  const Node& n = node(placed, copy);
  EXPECT_EQ(n.target, "aten::copy_");
  ASSERT_EQ(n.args.size(), 2u);
  EXPECT_EQ(testing::nameOf(placed.program.graph, n.args[0]), buffer) << copy;
  EXPECT_EQ(testing::nameOf(placed.program.graph, n.args[1]), value) << copy;
}

const CopyExplanation* explanationOf(const PlacedProgram& placed, const std::string& copy) {
  for (const CopyExplanation& e : placed.copies)
    if (e.copyNode == copy) return &e;
  ADD_FAILURE() << "no explanation for " << copy;
  return nullptr;
}

void expectRule(const PlacedProgram& placed, const std::string& copy, CopyRule rule,
                const std::string& bindingNode) {
  const CopyExplanation* e = explanationOf(placed, copy);
  if (!e) return;
  EXPECT_EQ(e->rule, rule) << e->text;
  EXPECT_EQ(e->bindingNode, bindingNode) << e->text;
  EXPECT_FALSE(e->text.empty());
}

using Names = std::vector<std::string>;

// ---------------------------------------------------------------------------------------------
// executorch-semantics §8: upstream's test_mutable_buffers, and PR #20744's changes to it.

Program mutableStateModule() {
  // y = x + state; state.add_(1); direct_copy_from_input.copy_(x); return y
  return Builder()
      .buffer("b_state", "state")
      .buffer("b_direct_copy_from_input", "direct_copy_from_input")
      .input("x")
      .call("add", "aten::add.Tensor", {R("x"), R("b_state")})
      .call("add_1", "aten::add.Tensor", {R("b_state"), I(1)})
      .returns({bufferMut("add_1", "state"), bufferMut("x", "direct_copy_from_input"), userOut("add")});
}

TEST(UpstreamModel, TestMutableBuffers) {
  PlacedProgram placed = upstream(mutableStateModule());
  ASSERT_FALSE(placed.failure);
  EXPECT_TRUE(placed.skipped.empty());
  ASSERT_EQ(placed.copies.size(), 2u);
  // Both copies just before the output, in spec order; the direct copy reads the placeholder x.
  EXPECT_EQ(nodeNames(placed),
            (Names{"b_state", "b_direct_copy_from_input", "x", "add", "add_1", "copy_", "copy__1", "output"}));
  expectCopy(placed, "copy_", "b_state", "add_1");
  expectCopy(placed, "copy__1", "b_direct_copy_from_input", "x");
  EXPECT_EQ(returnedNames(placed), (Names{"copy_", "copy__1", "add"}));
  EXPECT_EQ(specNames(placed), (Names{"copy_", "copy__1", "add"}));
  expectRule(placed, "copy_", CopyRule::End, "");
}

TEST(Pr20744Model, TestMutableBuffersExpectedGraph) {
  // The PR's edit of the expected-graph comment: the copy of the placeholder x sits right after
  // the placeholders, the copy of add_1 right after add_1.
  PlacedProgram placed = pr(mutableStateModule());
  ASSERT_FALSE(placed.failure);
  EXPECT_EQ(nodeNames(placed),
            (Names{"b_state", "b_direct_copy_from_input", "x", "copy__1", "add", "add_1", "copy_", "output"}));
  expectCopy(placed, "copy__1", "b_direct_copy_from_input", "x");
  expectRule(placed, "copy__1", CopyRule::R0, "x");
  expectRule(placed, "copy_", CopyRule::R1, "add_1");
  EXPECT_EQ(returnedNames(placed), (Names{"copy_", "copy__1", "add"}));
  EXPECT_EQ(specNames(placed), (Names{"copy_", "copy__1", "add"}));
}

TEST(Pr20744Model, WriteBackIsInsertedEarly) {
  // state.add_(1); x = x + 1 three times; return x
  Program program = Builder()
                        .buffer("b_state", "state")
                        .input("x")
                        .call("add", "aten::add.Tensor", {R("b_state"), I(1)})
                        .call("add_1", "aten::add.Tensor", {R("x"), I(1)})
                        .call("add_2", "aten::add.Tensor", {R("add_1"), I(1)})
                        .call("add_3", "aten::add.Tensor", {R("add_2"), I(1)})
                        .returns({bufferMut("add", "state"), userOut("add_3")});
  PlacedProgram placed = pr(program);
  ASSERT_FALSE(placed.failure);
  ASSERT_EQ(placed.copies.size(), 1u);
  const std::string copy = placed.copies[0].copyNode;
  const Node& c = node(placed, copy);
  ASSERT_EQ(c.args.size(), 2u);
  EXPECT_EQ(pos(placed, copy), c.args[1].node + 1u);
  EXPECT_LT(pos(placed, copy), pos(placed, "add_3"));
  EXPECT_LT(pos(placed, copy), pos(placed, "output"));
}

TEST(Pr20744Model, WriteBackAfterOldValueReads) {
  // new = x * 2; old_plus = state + x; state.copy_(new); return old_plus
  Program program = Builder()
                        .buffer("b_state", "state")
                        .input("x")
                        .call("mul", "aten::mul.Tensor", {R("x"), I(2)})
                        .call("add", "aten::add.Tensor", {R("b_state"), R("x")})
                        .returns({bufferMut("mul", "state"), userOut("add")});
  PlacedProgram placed = pr(program);
  ASSERT_FALSE(placed.failure);
  ASSERT_EQ(placed.copies.size(), 1u);
  const std::string copy = placed.copies[0].copyNode;
  for (const Node& n : placed.program.graph.nodes) {
    if (n.name == copy || n.isOutput()) continue;
    bool usesState = false;
    for (const Arg& a : n.args)
      forEachRef(a, [&](NodeId r) { usesState |= placed.program.graph.nodes[r].name == "b_state"; });
    if (usesState) {
      EXPECT_LT(pos(placed, n.name), pos(placed, copy)) << n.name;
    }
  }
}

// The real printouts of upstream's test_mutable_buffers before and after the pass
// (corpus/real 04 and 05, from shared/real-graphs: ExecuTorch's own test): the model reproduces
// the "after" graph.
Program readReal(const std::string& file) {
  const std::filesystem::path path = testing::realGraphsDir() / file;
  Result<Program> read = readProgram(testing::readFile(path), path.string());
  EXPECT_TRUE(read.ok()) << formatAll(read.errors);
  return read.ok() ? *read : Program{};
}

TEST(UpstreamModel, ReproducesTheRealTestMutableBuffersGraph) {
  Program before = readReal("04-et-mutable-buffers-before-writeback.txt");
  // Reading the "after" printout lifts its trailing copy_ block back into mutation outputs
  // (signature inference), which gives the signature export produced for "before".
  const Program after = readReal("05-et-mutable-buffers-after-writeback.txt");
  ASSERT_EQ(before.graph, after.graph);
  ASSERT_EQ(after.signature.outputs.size(), 3u);
  before.signature = after.signature;
  EXPECT_EQ(before.signature.outputs[1].name, "x");
  PlacedProgram placed = upstream(before);
  ASSERT_FALSE(placed.failure);
  // 05, with FX's current copy names (it printed copy__default, copy__default_1 then).
  EXPECT_EQ(nodeNames(placed),
            (Names{"b_state", "b_direct_copy_from_input", "_lifted_tensor_constant2", "x", "aten_add_tensor",
                   "dim_order_ops__to_dim_order_copy_default", "aten_add_tensor_1", "copy_", "copy__1", "output"}));
  expectCopy(placed, "copy_", "b_state", "aten_add_tensor_1");
  expectCopy(placed, "copy__1", "b_direct_copy_from_input", "x");
  EXPECT_EQ(returnedNames(placed), (Names{"copy_", "copy__1", "aten_add_tensor"}));
}

// ---------------------------------------------------------------------------------------------
// Upstream bugs B1 and B2, and the lifted-input name collision (§2.1, §2.2, §2.3).

TEST(UpstreamModel, B1LineageAcceptsAnyBuffer) {
  // y = x + self.a; self.a.copy_(self.b); return y  → the mutation output of a IS b_b.
  Program program = Builder()
                        .buffer("b_a", "a")
                        .buffer("b_b", "b")
                        .input("x")
                        .call("add", "aten::add.Tensor", {R("x"), R("b_a")})
                        .returns({bufferMut("b_b", "a"), userOut("add")});
  for (PlacedProgram placed : {upstream(program), pr(program), draft(program)}) {
    ASSERT_FALSE(placed.failure);
    EXPECT_TRUE(placed.copies.empty());
    ASSERT_EQ(placed.skipped.size(), 1u);
    EXPECT_NE(placed.skipped[0].find("B1"), std::string::npos) << placed.skipped[0];
    EXPECT_EQ(nodeNames(placed), (Names{"b_a", "b_b", "x", "add", "output"}));
    EXPECT_EQ(returnedNames(placed), (Names{"b_b", "add"}));
    EXPECT_EQ(specNames(placed), (Names{"b_b", "add"}));
  }
}

TEST(UpstreamModel, B1UserInputAnalogue) {
  // x.copy_(y) with two user inputs: USER_INPUT_MUTATION(x) whose value is the placeholder y.
  Program program = Builder()
                        .input("x")
                        .input("y")
                        .call("mul", "aten::mul.Tensor", {R("x"), R("y")})
                        .returns({inputMut("y", "x"), userOut("mul")});
  PlacedProgram placed = upstream(program);
  ASSERT_FALSE(placed.failure);
  EXPECT_TRUE(placed.copies.empty());
  ASSERT_EQ(placed.skipped.size(), 1u);
  EXPECT_NE(placed.skipped[0].find("B1"), std::string::npos);
}

TEST(UpstreamModel, InplaceLineageOfItsOwnTargetIsSkipped) {
  // index_put_ on the buffer itself, as reinplace produces (test_index_put_reinplace): 0 copies.
  Program program = Builder()
                        .buffer("b_state", "state", "f32[5]")
                        .input("i", "i64[1]")
                        .input("v", "f32[1]")
                        .call("index_put_", "aten::index_put_", {R("b_state"), L({R("i")}), R("v")}, "f32[5]")
                        .returns({bufferMut("index_put_", "state")});
  PlacedProgram placed = upstream(program);
  ASSERT_FALSE(placed.failure);
  EXPECT_TRUE(placed.copies.empty());
  ASSERT_EQ(placed.skipped.size(), 1u);
  EXPECT_NE(placed.skipped[0].find("the target itself"), std::string::npos) << placed.skipped[0];
}

Program b2Program() {
  // Reinplaced index_put_ on the cache (skipped), then a copied user-input mutation.
  return Builder()
      .buffer("b_cache", "cache")
      .input("x")
      .input("i", "i64[1]")
      .call("index_put_", "aten::index_put_", {R("b_cache"), L({R("i")}), R("x")})
      .call("add", "aten::add.Tensor", {R("x"), I(1)})
      .call("mul", "aten::mul.Tensor", {R("x"), I(2)})
      .returns({bufferMut("index_put_", "cache"), inputMut("add", "x"), userOut("mul")});
}

TEST(UpstreamModel, B2CopiesFirstAndPositionalRenaming) {
  PlacedProgram placed = upstream(b2Program());
  ASSERT_FALSE(placed.failure);
  ASSERT_EQ(placed.copies.size(), 1u);
  ASSERT_EQ(placed.skipped.size(), 1u);
  expectCopy(placed, "copy_", "x", "add");
  EXPECT_EQ(before(placed, "output"), "copy_");
  // The tuple becomes (copy_x, index_put_, mul); the BUFFER_MUTATION spec now names copy_ and
  // the USER_INPUT_MUTATION spec names index_put_: the emitter drops the user-input copy.
  EXPECT_EQ(returnedNames(placed), (Names{"copy_", "index_put_", "mul"}));
  EXPECT_EQ(specNames(placed), (Names{"copy_", "index_put_", "mul"}));
  EXPECT_EQ(placed.program.signature.outputs[0].kind, OutputKind::BufferMutation);
  EXPECT_EQ(placed.program.signature.outputs[1].kind, OutputKind::UserInputMutation);
}

TEST(Pr20744Model, B2ProgramKeepsPositions) {
  PlacedProgram placed = pr(b2Program());
  ASSERT_FALSE(placed.failure);
  ASSERT_EQ(placed.copies.size(), 1u);
  expectCopy(placed, "copy_", "x", "add");
  // index_put_(b_cache, [i], x) "aliases every input" (H11), so it counts as an alias of x;
  // mul is the last direct reader of x.
  expectRule(placed, "copy_", CopyRule::R2, "mul");
  EXPECT_EQ(before(placed, "copy_"), "mul");
  EXPECT_EQ(returnedNames(placed), (Names{"index_put_", "copy_", "mul"}));
  EXPECT_EQ(specNames(placed), (Names{"index_put_", "copy_", "mul"}));
}

TEST(Draft13857Model, B2ProgramKeepsPositions) {
  PlacedProgram placed = draft(b2Program());
  ASSERT_FALSE(placed.failure);
  expectRule(placed, "copy_", CopyRule::R2, "mul");
  EXPECT_EQ(returnedNames(placed), (Names{"index_put_", "copy_", "mul"}));
}

TEST(UpstreamModel, BufferNameCollidesWithUserInput) {
  // Buffer FQN "x" and user input "x" share upstream's dict; the user input wins, so the
  // write-back of buffer x writes the user input.
  Program program = Builder()
                        .buffer("b_x", "x")
                        .input("x")
                        .call("add", "aten::add.Tensor", {R("b_x"), R("x")})
                        .call("mul", "aten::mul.Tensor", {R("x"), I(2)})
                        .returns({bufferMut("add", "x"), userOut("mul")});
  for (PlacedProgram placed : {upstream(program), pr(program), draft(program)}) {
    ASSERT_FALSE(placed.failure);
    ASSERT_EQ(placed.copies.size(), 1u);
    expectCopy(placed, "copy_", "x", "add");
    EXPECT_EQ(placed.copies[0].buffer, "x");
    EXPECT_EQ(placed.program.signature.outputs[0].kind, OutputKind::BufferMutation);
    EXPECT_EQ(placed.program.signature.outputs[0].target, "x");
    EXPECT_EQ(placed.program.signature.inputs, program.signature.inputs);
  }
}

// ---------------------------------------------------------------------------------------------
// FX dead-code elimination after upstream's insertion (§2.1 step 5).

TEST(UpstreamModel, DeadCodeElimination) {
  Program program = Builder()
                        .buffer("b_s", "s")
                        .input("x")
                        .getAttr("lowered_module_0")
                        .call("dead_view", "aten::view_copy", {R("x"), L({I(2), I(2)})}, "f32[2, 2]")
                        .call("dead_add", "aten::add.Tensor", {R("x"), I(1)})
                        .call("dead_mul", "aten::mul.Tensor", {R("dead_add"), I(2)})
                        .call("relu_", "aten::relu_", {R("x")})
                        .call("assert_async", "aten::_assert_async.msg", {R("x"), Arg::ofString("m")}, "")
                        .call("mystery", "my_ops::mystery", {R("x")})
                        .call("delegate", "executorch_call_delegate", {R("lowered_module_0"), R("x")}, "")
                        .getitem("getitem", "delegate", 0)
                        .call("v", "aten::mul.Tensor", {R("x"), I(2)})
                        .returns({bufferMut("v", "s")});
  PlacedProgram placed = upstream(program);
  ASSERT_FALSE(placed.failure);
  // Removed: pure nodes without users (a chain too), the schema-less delegate call with its
  // getitem, then the get_attr that only fed it. Kept: mutable schemas, FX's side-effectful
  // asserts, and an op overload whose schema we lack (it might be mutable in torch).
  EXPECT_EQ(nodeNames(placed), (Names{"b_s", "x", "relu_", "assert_async", "mystery", "v", "copy_", "output"}));
}

// The hazards of executorch-semantics §4.4 are corpus files (corpus/hazards/), each stating what
// every placement makes of it; tests/hazards_test.cpp runs them.

TEST(Pr20744Model, CopiesAtTheSameAnchorComeOutReversed) {
  // Two independent write-backs whose latest node is the same: each inserting_after(mul)
  // pushes the earlier copy down.
  Program program = Builder()
                        .buffer("b_a", "a")
                        .buffer("b_b", "b")
                        .input("x")
                        .call("mul", "aten::mul.Tensor", {R("x"), I(2)})
                        .call("add", "aten::add.Tensor", {R("mul"), I(1)})
                        .returns({bufferMut("mul", "a"), bufferMut("mul", "b"), userOut("add")});
  PlacedProgram p = pr(program);
  ASSERT_FALSE(p.failure);
  EXPECT_EQ(nodeNames(p), (Names{"b_a", "b_b", "x", "mul", "copy__1", "copy_", "add", "output"}));
  expectCopy(p, "copy_", "b_a", "mul");
  expectCopy(p, "copy__1", "b_b", "mul");
  // Explanations come in graph order.
  ASSERT_EQ(p.copies.size(), 2u);
  EXPECT_EQ(p.copies[0].copyNode, "copy__1");
  EXPECT_EQ(returnedNames(p), (Names{"copy_", "copy__1", "add"}));
}

// ---------------------------------------------------------------------------------------------
// Totality: whatever the program, no model throws, and every copy it reports is in the graph.

Program randomProgram(std::mt19937& rng) {
  auto pick = [&](std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng); };
  Builder b;
  b.schema("my_ops::scale_all_(Tensor(a!)[] self, Scalar s) -> ()");
  std::vector<std::string> values;
  const std::size_t buffers = pick(3);
  for (std::size_t i = 0; i < buffers; ++i) {
    b.buffer("b_" + std::to_string(i), "s" + std::to_string(i));
    values.push_back("b_" + std::to_string(i));
  }
  const std::size_t inputs = pick(3);
  for (std::size_t i = 0; i < inputs; ++i) {
    b.input("x" + std::to_string(i));
    values.push_back("x" + std::to_string(i));
  }
  const char* unary[] = {"aten::relu", "aten::relu_", "aten::view_copy", "aten::expand", "my_ops::mystery",
                         "aten::clone"};
  const std::size_t nodes = pick(8);
  for (std::size_t i = 0; i < nodes; ++i) {
    std::string name = "n" + std::to_string(i);
    if (values.empty()) {
      b.call(name, "aten::ones", {L({I(4)})});
    } else {
      const std::string a = values[pick(values.size())];
      const std::string c = values[pick(values.size())];
      switch (pick(5)) {
        case 0: b.call(name, "aten::add.Tensor", {R(a), R(c)}); break;
        case 1: b.call(name, "aten::add_.Tensor", {R(a), R(c)}); break;
        case 2: b.call(name, "my_ops::scale_all_", {L({R(a), R(c)}), I(2)}, ""); break;
        case 3: b.call(name, "executorch_call_delegate", {R(a)}, ""); break;
        default: b.call(name, unary[pick(std::size(unary))], {R(a), L({I(4)})}); break;
      }
    }
    values.push_back(name);
  }
  std::vector<Out> outs;
  for (std::size_t i = 0; i < buffers; ++i)
    if (pick(2) && !values.empty()) outs.push_back(bufferMut(values[pick(values.size())], "s" + std::to_string(i)));
  for (std::size_t i = 0; i < inputs; ++i)
    if (pick(3) == 0 && !values.empty()) outs.push_back(inputMut(values[pick(values.size())], "x" + std::to_string(i)));
  if (!values.empty()) outs.push_back(userOut(values[pick(values.size())]));
  return b.returns(outs);
}

TEST(PlacementModels, TotalOnRandomPrograms) {
  std::mt19937 rng(20744);
  const SchemaTable builtins = builtinSchemas();
  for (int i = 0; i < 2000; ++i) {
    Program program = randomProgram(rng);
    const bool hasPlaceholders = !program.signature.inputs.empty();
    const SchemaTable table = tableFor(program, builtins);
    for (Placement placement : {Placement::Upstream, Placement::Pr20744, Placement::Draft13857}) {
      PlacedProgram placed;
      if (placement == Placement::Upstream) placed = placeUpstream(program, table);
      if (placement == Placement::Pr20744) placed = placePr20744(program, table);
      if (placement == Placement::Draft13857) placed = placeDraft13857(program, table);
      if (placed.failure) {
        EXPECT_EQ(placement, Placement::Pr20744) << *placed.failure;
        EXPECT_FALSE(hasPlaceholders) << *placed.failure;
        EXPECT_EQ(placed.program, program);
        continue;
      }
      const Graph& g = placed.program.graph;
      ASSERT_FALSE(g.nodes.empty());
      EXPECT_TRUE(g.nodes.back().isOutput());
      std::size_t previous = 0;
      for (const CopyExplanation& e : placed.copies) {
        std::optional<std::size_t> at = g.indexOf(e.copyNode);
        ASSERT_TRUE(at.has_value()) << e.copyNode;
        EXPECT_GE(*at, previous);
        previous = *at;
        EXPECT_EQ(g.nodes[*at].target, "aten::copy_");
        // Every copy comes after its value and after every placeholder.
        if (!e.value.empty()) {
          EXPECT_LT(*g.indexOf(e.value), *at);
        }
        for (std::size_t k = *at; k < g.nodes.size(); ++k) EXPECT_FALSE(g.nodes[k].isPlaceholder());
      }
      EXPECT_EQ(placed.program.signature.outputs.size(), program.signature.outputs.size());
      EXPECT_EQ(g.returnedValues().size(), program.signature.outputs.size());
    }
  }
}

}  // namespace
}  // namespace wb
