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
// The PR at ff2892d4 (executorch-semantics §4.2), and at a given version.
PlacedProgram pr(const Program& p) { return placePr20744(p, Pr20744Version::Ff2892d4, tableFor(p)); }
PlacedProgram prAt(Pr20744Version version, const Program& p) { return placePr20744(p, version, tableFor(p)); }
constexpr Pr20744Version kEveryVersion[] = {Pr20744Version::Ff2892d4, Pr20744Version::B6457f4,
                                            Pr20744Version::At82a8901};
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
            (Names{"b_state", "b_direct_copy_from_input", "x", "add", "add_1", "copy__default", "copy__default_1", "output"}));
  expectCopy(placed, "copy__default", "b_state", "add_1");
  expectCopy(placed, "copy__default_1", "b_direct_copy_from_input", "x");
  EXPECT_EQ(returnedNames(placed), (Names{"copy__default", "copy__default_1", "add"}));
  EXPECT_EQ(specNames(placed), (Names{"copy__default", "copy__default_1", "add"}));
  expectRule(placed, "copy__default", CopyRule::End, "");
}

TEST(Pr20744Model, TestMutableBuffersExpectedGraph) {
  // The PR's edit of the expected-graph comment: the copy of the placeholder x sits right after
  // the placeholders, the copy of add_1 right after add_1.
  PlacedProgram placed = pr(mutableStateModule());
  ASSERT_FALSE(placed.failure);
  EXPECT_EQ(nodeNames(placed),
            (Names{"b_state", "b_direct_copy_from_input", "x", "copy__default_1", "add", "add_1", "copy__default", "output"}));
  expectCopy(placed, "copy__default_1", "b_direct_copy_from_input", "x");
  expectRule(placed, "copy__default_1", CopyRule::R0, "x");
  expectRule(placed, "copy__default", CopyRule::R1, "add_1");
  EXPECT_EQ(returnedNames(placed), (Names{"copy__default", "copy__default_1", "add"}));
  EXPECT_EQ(specNames(placed), (Names{"copy__default", "copy__default_1", "add"}));
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
// (corpus/real 04-07, from shared/real-graphs: ExecuTorch's own tests). corpus/real-signed holds
// each verbatim with its graph signature written in (the printouts have none): the model
// applied to a "before" must give its "after" exactly, FX's copy names included.
Program readSigned(const std::string& file) {
  const std::filesystem::path path = testing::corpusDir() / "real-signed" / file;
  const std::string text = testing::readFile(path);
  // The graph is ExecuTorch's printout verbatim, after the comment header.
  std::size_t body = 0;
  while (body < text.size() && text[body] == '#') body = std::min(text.find('\n', body), text.size() - 1) + 1;
  const std::string printout = testing::readFile(testing::realGraphsDir() / file);
  EXPECT_EQ(text.substr(body, printout.size()), printout) << file << " is not the printout verbatim";
  Result<Program> read = readProgram(text, path.string());
  EXPECT_TRUE(read.ok()) << formatAll(read.errors);
  return read.ok() ? *read : Program{};
}

TEST(UpstreamModel, ReproducesExecuTorchsAfterPrintoutsWithFxNames) {
  const std::pair<const char*, const char*> pairs[] = {
      {"04-et-mutable-buffers-before-writeback.txt", "05-et-mutable-buffers-after-writeback.txt"},
      {"06-et-mutable-buffer-2024-before-writeback.txt", "07-et-mutable-buffer-2024-after-writeback.txt"},
  };
  for (const auto& [beforeFile, afterFile] : pairs) {
    SCOPED_TRACE(afterFile);
    const Program before = readSigned(beforeFile);
    const Program after = readSigned(afterFile);
    ASSERT_FALSE(before.signatureInferred);
    ASSERT_FALSE(after.signatureInferred);
    PlacedProgram placed = upstream(before);
    ASSERT_FALSE(placed.failure);
    // The same nodes with the same names, targets and arguments in the same order, the same
    // output tuple, and the same specs.
    EXPECT_EQ(nodeNames(placed), [&] {
      Names names;
      for (const Node& n : after.graph.nodes) names.push_back(n.name);
      return names;
    }());
    EXPECT_EQ(placed.program.graph, after.graph);
    EXPECT_EQ(placed.program.signature, after.signature);
  }
  // Spelled out for 04 -> 05: both copies before the output, in spec order, named by FX.
  PlacedProgram placed = upstream(readSigned("04-et-mutable-buffers-before-writeback.txt"));
  expectCopy(placed, "copy__default", "b_state", "aten_add_tensor_1");
  expectCopy(placed, "copy__default_1", "b_direct_copy_from_input", "x");
  EXPECT_EQ(returnedNames(placed), (Names{"copy__default", "copy__default_1", "aten_add_tensor"}));
  EXPECT_EQ(specNames(placed), (Names{"copy__default", "copy__default_1", "aten_add_tensor"}));
}

TEST(Pr20744Model, EveryVersionPlacesTestMutableBuffersAsThePrsExpectedGraph) {
  // The PR's edit of test_mutable_buffers' "After" comment: copy__default_1 (from the
  // placeholder x) right after the placeholders, copy__default right after its value.
  const Program before = readSigned("04-et-mutable-buffers-before-writeback.txt");
  for (Pr20744Version version : kEveryVersion) {
    PlacedProgram placed = prAt(version, before);
    ASSERT_FALSE(placed.failure);
    EXPECT_EQ(nodeNames(placed),
              (Names{"b_state", "b_direct_copy_from_input", "_lifted_tensor_constant2", "x", "copy__default_1",
                     "aten_add_tensor", "dim_order_ops__to_dim_order_copy_default", "aten_add_tensor_1",
                     "copy__default", "output"}));
    EXPECT_EQ(returnedNames(placed), (Names{"copy__default", "copy__default_1", "aten_add_tensor"}));
  }
}

TEST(UpstreamModel, FxNamesSkipNamesTheGraphHas) {
  // A graph that already has copy__default (a program placed once) gets copy__default_1 next,
  // as FX's namespace gives it; `early` keeps wbcheck's own names.
  Program program = Builder()
                        .buffer("b_s", "s")
                        .input("x")
                        .call("copy__default", "aten::add.Tensor", {R("x"), I(1)})
                        .call("mul", "aten::mul.Tensor", {R("copy__default"), I(2)})
                        .returns({bufferMut("mul", "s")});
  PlacedProgram placed = upstream(program);
  ASSERT_EQ(placed.copies.size(), 1u);
  EXPECT_EQ(placed.copies[0].copyNode, "copy__default_1");
  PlacedProgram ours = placeEarly(program, tableFor(program));
  ASSERT_EQ(ours.copies.size(), 1u);
  EXPECT_EQ(ours.copies[0].copyNode, "copy_");
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
  expectCopy(placed, "copy__default", "x", "add");
  EXPECT_EQ(before(placed, "output"), "copy__default");
  // The tuple becomes (copy_x, index_put_, mul); the BUFFER_MUTATION spec now names copy_ and
  // the USER_INPUT_MUTATION spec names index_put_: the emitter drops the user-input copy.
  EXPECT_EQ(returnedNames(placed), (Names{"copy__default", "index_put_", "mul"}));
  EXPECT_EQ(specNames(placed), (Names{"copy__default", "index_put_", "mul"}));
  EXPECT_EQ(placed.program.signature.outputs[0].kind, OutputKind::BufferMutation);
  EXPECT_EQ(placed.program.signature.outputs[1].kind, OutputKind::UserInputMutation);
}

TEST(Pr20744Model, B2EveryVersionKeepsUpstreamsOutputLayout) {
  // The PR changes where `_insert_copy` puts the copies, not the tuple it builds nor the
  // positional renaming: B2 is the PR's too, in every version.
  for (Pr20744Version version : kEveryVersion) {
    PlacedProgram placed = prAt(version, b2Program());
    ASSERT_FALSE(placed.failure);
    ASSERT_EQ(placed.copies.size(), 1u);
    expectCopy(placed, "copy__default", "x", "add");
    // index_put_(b_cache, [i], x) "aliases every input" (H11), so it counts as an alias of x;
    // mul is the last direct reader of x.
    expectRule(placed, "copy__default", CopyRule::R2, "mul");
    EXPECT_EQ(before(placed, "copy__default"), "mul");
    EXPECT_EQ(returnedNames(placed), (Names{"copy__default", "index_put_", "mul"}));
    EXPECT_EQ(specNames(placed), (Names{"copy__default", "index_put_", "mul"}));
    EXPECT_EQ(placed.program.signature.outputs[0].kind, OutputKind::BufferMutation);
  }
}

TEST(Draft13857Model, B2KeepsUpstreamsOutputLayout) {
  PlacedProgram placed = draft(b2Program());
  ASSERT_FALSE(placed.failure);
  expectRule(placed, "copy__default", CopyRule::R2, "mul");
  EXPECT_EQ(returnedNames(placed), (Names{"copy__default", "index_put_", "mul"}));
  EXPECT_EQ(specNames(placed), (Names{"copy__default", "index_put_", "mul"}));
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
    expectCopy(placed, "copy__default", "x", "add");
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
  EXPECT_EQ(nodeNames(placed), (Names{"b_s", "x", "relu_", "assert_async", "mystery", "v", "copy__default", "output"}));
}

// The hazards of executorch-semantics §4.4 are corpus files (corpus/hazards/), each stating what
// every placement makes of it; tests/hazards_test.cpp runs them.

TEST(Pr20744Model, TheOutputNodeIsAnAliasOnlyAtFf2892d4) {
  // b_b is returned as a user output, so the output node uses it; both values are returned.
  // At ff2892d4 the output node joins the forward aliases of b_b and of the first value, so
  // the guard sees a dependence and sends both copies to the end; from b6457f4 on it does not.
  Program program = Builder()
                        .buffer("b_a", "a")
                        .buffer("b_b", "b")
                        .input("x")
                        .call("mul", "aten::mul.Tensor", {R("x"), I(2)})
                        .call("add", "aten::add.Tensor", {R("x"), I(1)})
                        .call("sub", "aten::sub.Tensor", {R("x"), I(1)})
                        .returns({bufferMut("mul", "a"), bufferMut("add", "b"), userOut("b_b"), userOut("sub")});
  PlacedProgram old = prAt(Pr20744Version::Ff2892d4, program);
  ASSERT_FALSE(old.failure);
  EXPECT_EQ(nodeNames(old),
            (Names{"b_a", "b_b", "x", "mul", "add", "sub", "copy__default", "copy__default_1", "output"}));
  expectRule(old, "copy__default", CopyRule::End, "");
  EXPECT_NE(explanationOf(old, "copy__default")->text.find("%output aliases the buffer b_b"), std::string::npos)
      << explanationOf(old, "copy__default")->text;
  for (Pr20744Version version : {Pr20744Version::B6457f4, Pr20744Version::At82a8901}) {
    PlacedProgram placed = prAt(version, program);
    ASSERT_FALSE(placed.failure);
    EXPECT_EQ(nodeNames(placed),
              (Names{"b_a", "b_b", "x", "mul", "copy__default", "add", "copy__default_1", "sub", "output"}));
    expectRule(placed, "copy__default", CopyRule::R1, "mul");
    expectRule(placed, "copy__default_1", CopyRule::R1, "add");
    EXPECT_EQ(returnedNames(placed), (Names{"copy__default", "copy__default_1", "b_b", "sub"}));
  }
}


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
  EXPECT_EQ(nodeNames(p), (Names{"b_a", "b_b", "x", "mul", "copy__default_1", "copy__default", "add", "output"}));
  expectCopy(p, "copy__default", "b_a", "mul");
  expectCopy(p, "copy__default_1", "b_b", "mul");
  // Explanations come in graph order.
  ASSERT_EQ(p.copies.size(), 2u);
  EXPECT_EQ(p.copies[0].copyNode, "copy__default_1");
  EXPECT_EQ(returnedNames(p), (Names{"copy__default", "copy__default_1", "add"}));
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
    for (Placement placement : allPlacements()) {
      if (!isModelOfRealCode(placement)) continue;
      PlacedProgram placed = place(program, placement, table);
      if (placed.failure) {
        EXPECT_EQ(placement, Placement::Pr20744_ff2892d4) << *placed.failure;
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
