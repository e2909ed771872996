// tests/validate_test.cpp: structural validation of programs (core/validate.h). Every program
// is built in C++, so these tests do not depend on the text reader.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/validate.h"
#include "tests/testing.h"

namespace wb {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;




// References are written by name (testing::ref) and resolved just before validate() runs
// (validated()): a name no node of the graph has becomes a reference to no node.
Arg ref(const std::string& name) { return testing::ref(name); }

InputSpec input(InputKind kind, std::string name, std::string target = "") {
  InputSpec s;
  s.kind = kind;
  s.name = std::move(name);
  s.target = std::move(target);
  if (kind == InputKind::Buffer) s.persistent = true;
  return s;
}

OutputSpec outputSpec(OutputKind kind, std::string name, std::string target = "") {
  return OutputSpec{kind, std::move(name), std::move(target)};
}

// b_s: BUFFER s, x: USER_INPUT
//   mul = mul.Tensor(x, 2); add = add.Tensor(b_s, x) [share arg 0]; split = split.Tensor(x, 2)
//   getitem = split[0]; add_ = add_.Tensor(x, mul)
//   return (mul @BUFFER_MUTATION(s), add_ @USER_INPUT_MUTATION(x), add, getitem, 3)
Program validProgram() {
  Program p;
  p.graph.nodes = {
      Node::placeholder("b_s"),
      Node::placeholder("x"),
      Node::call("mul", "aten::mul.Tensor", {ref("x"), Arg::ofInt(2)}),
      Node::call("add", "aten::add.Tensor", {ref("b_s"), ref("x")}, {{"alpha", Arg::ofInt(1)}}),
      Node::call("split", "aten::split.Tensor", {ref("x"), Arg::ofInt(2)}),
      Node::call("getitem", "operator.getitem", {ref("split"), Arg::ofInt(0)}),
      Node::call("add_", "aten::add_.Tensor", {ref("x"), ref("mul")}),
      Node::call("cat", "aten::cat", {Arg::list({ref("mul"), ref("add")}), Arg::ofInt(0)}),
      Node::output({ref("mul"), ref("add_"), ref("add"), ref("getitem"), ref("cat"), Arg::ofInt(3)}),
  };
  p.graph.nodes[3].meta["_share_alloc_with_arg_idx"] = "0";
  p.signature.inputs = {input(InputKind::Buffer, "b_s", "s"), input(InputKind::UserInput, "x")};
  p.signature.outputs = {
      outputSpec(OutputKind::BufferMutation, "mul", "s"),
      outputSpec(OutputKind::UserInputMutation, "add_", "x"),
      outputSpec(OutputKind::UserOutput, "add"),
      outputSpec(OutputKind::UserOutput, "getitem"),
      outputSpec(OutputKind::UserOutput, "cat"),
      outputSpec(OutputKind::UserOutput, ""),  // the constant 3
  };
  Submodule branch;
  branch.name = "true_graph_0";
  branch.graph.nodes = {Node::placeholder("a"), Node::call("neg", "aten::neg", {ref("a")}), Node::output({ref("neg")})};
  p.submodules.push_back(branch);
  testing::resolveRefs(p);
  return p;
}

std::vector<std::string> messages(const std::vector<Diagnostic>& errors) {
  std::vector<std::string> out;
  for (const Diagnostic& d : errors) {
    EXPECT_EQ(d.line, 0) << d.message;  // whole-program checks carry no position
    out.push_back(d.message);
  }
  return out;
}

std::vector<Diagnostic> validated(Program p, const ValidateLimits& limits = {}) {
  testing::resolveRefs(p, testing::MissingName::NoNode);
  return validate(p, limits);
}

std::vector<std::string> check(const Program& p) { return messages(validated(p)); }

std::size_t indexOf(const Program& p, std::string_view name) { return *p.graph.indexOf(name); }

// ---------------------------------------------------------------------------------------------

TEST(Validate, ValidProgramHasNoErrors) {
  EXPECT_THAT(check(validProgram()), IsEmpty());
}

TEST(Validate, ProgramWithoutPlaceholdersIsValid) {
  Program p;
  p.graph.nodes = {Node::call("ones", "aten::ones", {Arg::list({Arg::ofInt(2)})}), Node::output({ref("ones")})};
  p.signature.outputs = {outputSpec(OutputKind::UserOutput, "ones")};
  EXPECT_THAT(check(p), IsEmpty());
}

TEST(Validate, BufferTargetMayEqualAUserInputName) {
  Program p;
  p.graph.nodes = {Node::placeholder("b_x"), Node::placeholder("x"), Node::call("add", "aten::add.Tensor", {ref("b_x"), ref("x")}),
                   Node::output({ref("add")})};
  p.signature.inputs = {input(InputKind::Buffer, "b_x", "x"), input(InputKind::UserInput, "x")};
  p.signature.outputs = {outputSpec(OutputKind::BufferMutation, "add", "x")};
  EXPECT_THAT(check(p), IsEmpty());
}

TEST(Validate, EmptyName) {
  Program p = validProgram();
  p.graph.nodes[indexOf(p, "getitem")].name = "";
  // Its user, the output node, still refers to it (by index); the output spec naming it no
  // longer matches.
  EXPECT_THAT(check(p), ElementsAre("node #5 has an empty name",
                                    "output spec #3 (USER_OUTPUT) names 'getitem' but the graph returns '' at position 3"));
}

TEST(Validate, DuplicateName) {
  Program p = validProgram();
  p.graph.nodes[indexOf(p, "split")].name = "mul";
  std::vector<std::string> errors = check(p);
  ASSERT_FALSE(errors.empty());
  EXPECT_EQ(errors[0], "duplicate node name 'mul' (nodes #2 and #4)");
}

TEST(Validate, UndefinedReferenceInArgsListsAndKwargs) {
  Program p = validProgram();
  p.graph.nodes[indexOf(p, "mul")].args[1] = ref("nowhere");
  p.graph.nodes[indexOf(p, "cat")].args[0].items[1] = ref("ghost");
  p.graph.nodes[indexOf(p, "add")].kwargs[0].second = ref("phantom");
  EXPECT_THAT(check(p), ElementsAre("node 'mul' uses undefined value (no node) in argument 1 (the graph has 9 nodes)",
                                    "node 'add' uses undefined value (no node) in keyword argument 'alpha' (the graph has 9 nodes)",
                                    "node 'cat' uses undefined value (no node) in argument 0 (the graph has 9 nodes)"));
  // An index past the graph, as a hand-built or edited program may hold.
  Program q = validProgram();
  q.graph.nodes[indexOf(q, "mul")].args[1] = Arg::ref(9);
  EXPECT_THAT(check(q), ElementsAre("node 'mul' uses undefined value #9 in argument 1 (the graph has 9 nodes)"));
}

TEST(Validate, UseBeforeDefinition) {
  Program p = validProgram();
  p.graph.nodes[indexOf(p, "mul")].args[1] = ref("getitem");
  p.graph.nodes[indexOf(p, "add")].args[1] = ref("add");
  EXPECT_THAT(check(p), ElementsAre("node 'mul' uses 'getitem' before its definition (node #5) in argument 1",
                                    "node 'add' uses itself in argument 1"));
}

// The references validate settles without checkArgument (one index comparison, flat lists)
// still report what is wrong with them: a duplicate name is reported but the references by
// index are right, a flat list with a later item is reported, and a flat list under
// maxNesting = 0 is too deep.
TEST(Validate, PlainArgumentsStillReported) {
  Program p = validProgram();
  // "split" renamed "add": "getitem" (just after it) still refers to it, by index.
  p.graph.nodes[indexOf(p, "split")].name = "add";
  std::vector<std::string> errors = check(p);
  ASSERT_FALSE(errors.empty());
  EXPECT_EQ(errors[0], "duplicate node name 'add' (nodes #3 and #4)");
  for (const std::string& e : errors) EXPECT_EQ(e.find("getitem"), std::string::npos) << e;

  Program q = validProgram();
  q.graph.nodes[indexOf(q, "cat")].args[0].items[0] = ref("cat");
  q.graph.nodes[indexOf(q, "mul")].args[1] = Arg::list({ref("x"), ref("getitem"), Arg::ofInt(1)});
  EXPECT_THAT(check(q), ElementsAre("node 'mul' uses 'getitem' before its definition (node #5) in argument 1",
                                    "node 'cat' uses itself in argument 0"));

  Program flat = validProgram();
  flat.submodules.clear();
  ValidateLimits limits;
  limits.maxNesting = 0;
  EXPECT_THAT(messages(validated(flat, limits)),
              ElementsAre("node 'cat' nests lists more than 0 deep in argument 0",
                          "output node 'output' nests lists more than 0 deep in argument 0"));
}

TEST(Validate, PlaceholdersNotFirst) {
  Program p = validProgram();
  insertNode(p.graph, 3, Node::placeholder("late"));
  p.signature.inputs.push_back(input(InputKind::UserInput, "late"));
  EXPECT_THAT(check(p), ElementsAre("placeholder 'late' comes after node 'mul'; placeholders must come first"));
}

TEST(Validate, NoOutputNode) {
  Program p = validProgram();
  p.graph.nodes.pop_back();
  EXPECT_THAT(check(p), ElementsAre("the graph has no output node"));
}

TEST(Validate, OutputNotLast) {
  Program p = validProgram();
  p.graph.nodes.push_back(Node::call("extra", "aten::relu", {ref("mul")}));
  EXPECT_THAT(check(p), ElementsAre("output node 'output' is not the last node (followed by node 'extra')"));
}

TEST(Validate, MoreThanOneOutputNode) {
  Program p = validProgram();
  Node second = Node::output({ref("mul")});
  second.name = "output_1";
  insertNode(p.graph, p.graph.nodes.size() - 1, second);
  EXPECT_THAT(check(p),
              ElementsAre("the graph has 2 output nodes (output node 'output_1' and output node 'output')",
                          "output node 'output_1' is not the last node (followed by output node 'output')"));
}

TEST(Validate, OutputArgumentsNotASingleValue) {
  Program p = validProgram();
  p.graph.nodes.back().args.push_back(ref("mul"));
  EXPECT_THAT(check(p), ElementsAre("output node 'output' must have exactly one argument (a tuple, a list "
                                    "or a single value), has 2"));
  p.graph.nodes.back().args.clear();
  EXPECT_THAT(check(p), ElementsAre("output node 'output' must have exactly one argument (a tuple, a list "
                                    "or a single value), has 0"));
  // A single value that is not a tuple is fine: it is the one returned value.
  Program single;
  single.graph.nodes = {Node::placeholder("x"), Node::output({})};
  single.graph.nodes.back().args = {ref("x")};
  single.signature.inputs = {input(InputKind::UserInput, "x")};
  single.signature.outputs = {outputSpec(OutputKind::UserOutput, "x")};
  EXPECT_THAT(check(single), IsEmpty());
}

TEST(Validate, PlaceholderOrGetAttrWithArguments) {
  Program p = validProgram();
  p.graph.nodes[0].args = {Arg::ofInt(1)};
  Node attr;
  attr.name = "_tensor_constant0";
  attr.op = NodeOp::GetAttr;
  attr.target = "_tensor_constant0";
  attr.kwargs = {{"k", ref("x")}};
  insertNode(p.graph, 2, attr);
  EXPECT_THAT(check(p), ElementsAre("placeholder 'b_s' has arguments",
                                    "get_attr node '_tensor_constant0' has arguments"));
}

TEST(Validate, CallWithoutTarget) {
  Program p = validProgram();
  p.graph.nodes[indexOf(p, "mul")].target.clear();
  EXPECT_THAT(check(p), ElementsAre("node 'mul' has no target"));
}

TEST(Validate, InputSpecCountMismatch) {
  Program p = validProgram();
  p.signature.inputs.pop_back();
  EXPECT_THAT(check(p), ElementsAre("the signature has 1 input spec(s) but the graph has 2 placeholder(s)",
                                    "output spec #1 (USER_INPUT_MUTATION of 'add_') targets 'x', but no "
                                    "USER_INPUT has that name"));
  p = validProgram();
  p.signature.inputs.push_back(input(InputKind::Parameter, "p_w", "w"));
  EXPECT_THAT(check(p), ElementsAre("the signature has 3 input spec(s) but the graph has 2 placeholder(s)",
                                    "input spec #2 names 'p_w', which is not a placeholder"));
}

TEST(Validate, InputSpecNamesMismatchInOrder) {
  Program p = validProgram();
  std::swap(p.signature.inputs[0], p.signature.inputs[1]);
  EXPECT_THAT(check(p), ElementsAre("input spec #0 (USER_INPUT) names 'x' but placeholder #0 is 'b_s'",
                                    "input spec #1 (BUFFER) names 'b_s' but placeholder #1 is 'x'"));
}

TEST(Validate, OutputSpecCountMismatch) {
  Program p = validProgram();
  p.signature.outputs.pop_back();
  EXPECT_THAT(check(p), ElementsAre("the signature has 5 output spec(s) but the graph returns 6 value(s)"));
}

TEST(Validate, OutputSpecNamesAnotherValue) {
  Program p = validProgram();
  p.signature.outputs[2].name = "getitem";
  p.signature.outputs[5].name = "three";  // the constant output must have an empty name
  EXPECT_THAT(check(p), ElementsAre("output spec #2 (USER_OUTPUT) names 'getitem' but the graph returns 'add' "
                                    "at position 2",
                                    "output spec #5 (USER_OUTPUT) names 'three' but the graph returns a "
                                    "constant at position 5"));
}

TEST(Validate, MutationTargetDoesNotResolve) {
  Program p = validProgram();
  p.signature.outputs[0].target = "nope";
  p.signature.outputs[1].target = "b_s";  // a buffer placeholder is not a USER_INPUT
  EXPECT_THAT(check(p), ElementsAre("output spec #0 (BUFFER_MUTATION of 'mul') targets 'nope', but no BUFFER "
                                    "input has that target",
                                    "output spec #1 (USER_INPUT_MUTATION of 'add_') targets 'b_s', but no "
                                    "USER_INPUT has that name"));
}

TEST(Validate, DuplicateInputTargetsOfTheSameKind) {
  Program p = validProgram();
  insertNode(p.graph, 2, Node::placeholder("b_s2"));
  insertNode(p.graph, 3, Node::placeholder("p_s"));
  p.signature.inputs.push_back(input(InputKind::Buffer, "b_s2", "s"));
  p.signature.inputs.push_back(input(InputKind::Parameter, "p_s", "s"));  // another kind: fine
  EXPECT_THAT(check(p), ElementsAre("input specs #0 and #2 are both BUFFER with target 's'"));
}

// Several repeated targets, interleaved: each repeat names the first spec with its kind and
// target, and the repeats are reported in the order of the specs (validate() finds them by
// sorting, not in a map).
TEST(Validate, RepeatedInputTargetsAreReportedInSpecOrder) {
  Program p = validProgram();
  const std::vector<std::pair<InputKind, std::string>> more = {
      {InputKind::Buffer, "t"}, {InputKind::Parameter, "s"}, {InputKind::Buffer, "t"},
      {InputKind::Buffer, "s"}, {InputKind::Parameter, "s"}, {InputKind::Buffer, "s"}};
  for (std::size_t k = 0; k < more.size(); ++k) {
    const std::string name = "extra" + std::to_string(k);
    insertNode(p.graph, 2 + k, Node::placeholder(name));
    p.signature.inputs.push_back(input(more[k].first, name, more[k].second));
  }
  EXPECT_THAT(check(p), ElementsAre("input specs #2 and #4 are both BUFFER with target 't'",
                                    "input specs #0 and #5 are both BUFFER with target 's'",
                                    "input specs #3 and #6 are both PARAMETER with target 's'",
                                    "input specs #0 and #7 are both BUFFER with target 's'"));
}

TEST(Validate, InputMutatedTwice) {
  Program p = validProgram();
  p.signature.outputs[2] = outputSpec(OutputKind::BufferMutation, "add", "s");
  EXPECT_THAT(check(p), ElementsAre("output specs #0 and #2 both mutate 's'"));
}

TEST(Validate, ListLongerThanTheCap) {
  Program p = validProgram();
  std::vector<Arg> many(7, ref("mul"));
  p.graph.nodes[indexOf(p, "cat")].args[0] = Arg::list(many);
  ValidateLimits limits;
  limits.maxListLength = 6;  // the output tuple has 6 items
  EXPECT_THAT(messages(validated(p, limits)),
              ElementsAre("node 'cat' has a list of 7 items in argument 0 (the limit is 6)"));
  limits.maxListLength = 7;
  EXPECT_THAT(messages(validated(p, limits)), IsEmpty());
}

TEST(Validate, ListsNestedTooDeep) {
  Program p = validProgram();
  Arg nested = ref("mul");
  for (int i = 0; i < 70; ++i) nested = Arg::list({nested});
  p.graph.nodes[indexOf(p, "cat")].args[0] = nested;
  EXPECT_THAT(check(p), ElementsAre("node 'cat' nests lists more than 64 deep in argument 0"));
}

TEST(Validate, ShareAllocIndexMustNameANodeArgument) {
  Program p = validProgram();
  p.graph.nodes[indexOf(p, "add")].meta["_share_alloc_with_arg_idx"] = "2";
  p.graph.nodes[indexOf(p, "mul")].meta["_share_alloc_with_arg_idx"] = "1";  // the literal 2
  p.graph.nodes[indexOf(p, "split")].meta["_share_alloc_with_arg_idx"] = "first";
  p.graph.nodes[indexOf(p, "getitem")].meta["_share_alloc_with_arg_idx"] = "-1";
  EXPECT_THAT(check(p), ElementsAre("node 'mul' has _share_alloc_with_arg_idx=1 but argument 1 is not a node "
                                    "(the result would share its storage)",
                                    "node 'add' has _share_alloc_with_arg_idx=2 but only 2 argument(s)",
                                    "node 'split' has _share_alloc_with_arg_idx=first, which is not a "
                                    "non-negative integer",
                                    "node 'getitem' has _share_alloc_with_arg_idx=-1, which is not a "
                                    "non-negative integer"));
}

TEST(Validate, SubmoduleGraphsAreChecked) {
  Program p = validProgram();
  Graph& branch = p.submodules[0].graph;
  branch.nodes[1].args[0] = ref("x");  // a name of the outer graph is not visible inside
  branch.nodes.pop_back();
  EXPECT_THAT(check(p), ElementsAre("in submodule 'true_graph_0': the graph has no output node",
                                    "in submodule 'true_graph_0': node 'neg' uses undefined value (no node) in "
                                    "argument 0 (the graph has 2 nodes)"));
}

TEST(Validate, ReportsEveryErrorNotJustTheFirst) {
  Program p = validProgram();
  p.graph.nodes[indexOf(p, "mul")].args[0] = ref("missing");
  p.graph.nodes[0].args = {Arg::ofInt(0)};
  p.signature.outputs.pop_back();
  p.signature.inputs[1].name = "y";
  // The renamed input spec also leaves the USER_INPUT_MUTATION of 'x' without a target.
  EXPECT_THAT(check(p), ElementsAre("placeholder 'b_s' has arguments",
                                    "node 'mul' uses undefined value (no node) in argument 0 (the graph has 9 nodes)",
                                    "input spec #1 (USER_INPUT) names 'y' but placeholder #1 is 'x'",
                                    "the signature has 5 output spec(s) but the graph returns 6 value(s)",
                                    "output spec #1 (USER_INPUT_MUTATION of 'add_') targets 'x', but no "
                                    "USER_INPUT has that name"));
}

TEST(Validate, ErrorCountIsCapped) {
  Program p;
  for (int i = 0; i < 50; ++i) p.graph.nodes.push_back(Node::call("n" + std::to_string(i), "aten::relu", {ref("none")}));
  p.graph.nodes.push_back(Node::output({}));
  ValidateLimits limits;
  limits.maxErrors = 10;
  std::vector<std::string> errors = messages(validated(p, limits));
  ASSERT_EQ(errors.size(), 11u);
  EXPECT_EQ(errors.back(), "40 more structural error(s) not shown");
}

TEST(Validate, LargeProgramIsLinear) {
  // 200k nodes in a chain: the checks use hash maps, not per-use scans.
  Program p;
  p.graph.nodes.reserve(200'002);
  p.graph.nodes.push_back(Node::placeholder("x"));
  std::string prev = "x";
  for (int i = 0; i < 200'000; ++i) {
    std::string name = "n" + std::to_string(i);
    p.graph.nodes.push_back(Node::call(name, "aten::relu", {testing::ref(prev)}));
    prev = name;
  }
  p.graph.nodes.push_back(Node::output({testing::ref(prev)}));
  p.signature.inputs = {input(InputKind::UserInput, "x")};
  p.signature.outputs = {outputSpec(OutputKind::UserOutput, prev)};
  EXPECT_THAT(check(p), IsEmpty());
}

}  // namespace
}  // namespace wb
