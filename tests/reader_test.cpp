// tests/reader_test.cpp: the reader on every form PyTorch prints (core/text.h): the real
// printouts of corpus/real (shared/real-graphs and more) read to the expected structure.
#include <gtest/gtest.h>

#include <string>

#include "core/text.h"
#include "tests/testing.h"

namespace wb {
namespace {

using testing::readFile;

Program readText(const std::string& text) {
  Result<Program> r = readProgram(text, "<test>");
  EXPECT_TRUE(r.ok()) << formatAll(r.errors);
  return r.ok() ? *r : Program{};
}

Program readReal(const std::string& name) {
  auto path = testing::realGraphsDir() / name;
  Result<Program> r = readProgram(readFile(path), path.string());
  EXPECT_TRUE(r.ok()) << formatAll(r.errors);
  return r.ok() ? *r : Program{};
}

const Node& node(const Program& p, const std::string& name) {
  static const Node missing{};
  const Node* n = p.graph.find(name);
  EXPECT_NE(n, nullptr) << "no node " << name;
  return n ? *n : missing;
}

std::size_t countOp(const Graph& g, NodeOp op) {
  std::size_t n = 0;
  for (const Node& node : g.nodes) n += node.op == op;
  return n;
}

std::vector<std::string> returnedNames(const Program& p) {
  std::vector<std::string> names;
  for (const Arg& a : p.graph.returnedValues())
    names.push_back(a.isRef() ? testing::nameOf(p.graph, a) : "<" + formatArg(a, p.graph) + ">");
  return names;
}

OutputSpec out(OutputKind kind, std::string name, std::string target = "") { return {kind, std::move(name), std::move(target)}; }

// --- Real printouts ---------------------------------------------------------------------------

TEST(RealGraphs, StrGraphWithTextSignatureIsExplicit01) {
  Program p = readReal("01-sig-docstring-nonfunctional-add_.txt");
  EXPECT_FALSE(p.signatureInferred);
  EXPECT_EQ(p.graph.nodes.size(), 11u);
  EXPECT_EQ(countOp(p.graph, NodeOp::Placeholder), 5u);
  EXPECT_EQ(node(p, "add_").target, "aten::add_.Tensor");
  EXPECT_EQ(node(p, "add_").args[1], Arg::ofFloat(1.0));
  ASSERT_EQ(p.signature.inputs.size(), 5u);
  EXPECT_EQ(p.signature.inputs[0], (InputSpec{InputKind::Parameter, "p_my_parameter", "my_parameter", std::nullopt}));
  EXPECT_EQ(p.signature.inputs[2], (InputSpec{InputKind::Buffer, "b_my_buffer2", "my_buffer2", true}));
  EXPECT_EQ(p.signature.inputs[3], (InputSpec{InputKind::UserInput, "x1", "", std::nullopt}));
  ASSERT_EQ(p.signature.outputs.size(), 1u);
  EXPECT_EQ(p.signature.outputs[0], out(OutputKind::UserOutput, "add_1"));
}

TEST(RealGraphs, BufferMutationSignature02) {
  Program p = readReal("02-sig-docstring-functional-buffer-mutation.txt");
  ASSERT_EQ(p.signature.outputs.size(), 2u);
  EXPECT_EQ(p.signature.outputs[0], out(OutputKind::BufferMutation, "add_2", "my_buffer2"));
  EXPECT_EQ(returnedNames(p), (std::vector<std::string>{"add_2", "add_1"}));
}

TEST(RealGraphs, NodesOfOneOpShareOneTargetString02) {
  // The reader interns targets: copies of the program and passes over it then touch one
  // string per op, not one per node (core/shared_string.h).
  Program p = readReal("02-sig-docstring-functional-buffer-mutation.txt");
  EXPECT_EQ(node(p, "add").target, "aten::add.Tensor");
  EXPECT_TRUE(node(p, "add").target.sharesTextWith(node(p, "add_1").target));
  EXPECT_TRUE(node(p, "add").target.sharesTextWith(node(p, "add_2").target));
  Program text = readText(
      "graph():\n"
      "    %x : [num_users=2] = placeholder[target=x]\n"
      "    %a : [num_users=1] = call_function[target=torch.ops.aten.relu.default](args = (%x,), kwargs = {})\n"
      "    %b : [num_users=1] = call_function[target=torch.ops.aten.relu.default](args = (%x,), kwargs = {})\n"
      "    return (a, b)\n");
  EXPECT_TRUE(node(text, "a").target.sharesTextWith(node(text, "b").target));
}

TEST(RealGraphs, EdgeDialectTargetsAndKwargs04) {
  Program p = readReal("04-et-mutable-buffers-before-writeback.txt");
  EXPECT_TRUE(p.signatureInferred);
  EXPECT_EQ(node(p, "aten_add_tensor").target, "aten::add.Tensor");
  const Node& toDimOrder = node(p, "dim_order_ops__to_dim_order_copy_default");
  EXPECT_EQ(toDimOrder.target, "dim_order_ops::_to_dim_order_copy");
  ASSERT_EQ(toDimOrder.kwargs.size(), 2u);
  EXPECT_EQ(toDimOrder.kwargs[0], (std::pair<std::string, Arg>{"dtype", Arg::token("torch.float32")}));
  EXPECT_EQ(toDimOrder.kwargs[1], (std::pair<std::string, Arg>{"dim_order", Arg::list({})}));
  ASSERT_EQ(p.signature.inputs.size(), 4u);
  EXPECT_EQ(p.signature.inputs[0], (InputSpec{InputKind::Buffer, "b_state", "state", true}));
  EXPECT_EQ(p.signature.inputs[2].kind, InputKind::ConstantTensor);
  EXPECT_EQ(p.signature.inputs[3].kind, InputKind::UserInput);
  // No copies to lift: every returned value is a user output.
  ASSERT_EQ(p.signature.outputs.size(), 3u);
  for (const OutputSpec& s : p.signature.outputs) EXPECT_EQ(s.kind, OutputKind::UserOutput);
}

TEST(RealGraphs, TrailingCopiesBecomeBufferMutations05) {
  Program p = readReal("05-et-mutable-buffers-after-writeback.txt");
  EXPECT_TRUE(p.signatureInferred);
  EXPECT_EQ(p.graph.find("copy__default"), nullptr);
  EXPECT_EQ(p.graph.find("copy__default_1"), nullptr);
  EXPECT_EQ(p.graph.nodes.size(), 8u);
  ASSERT_EQ(p.signature.outputs.size(), 3u);
  EXPECT_EQ(p.signature.outputs[0], out(OutputKind::BufferMutation, "aten_add_tensor_1", "state"));
  EXPECT_EQ(p.signature.outputs[1], out(OutputKind::BufferMutation, "x", "direct_copy_from_input"));
  EXPECT_EQ(p.signature.outputs[2], out(OutputKind::UserOutput, "aten_add_tensor"));
  EXPECT_EQ(returnedNames(p), (std::vector<std::string>{"aten_add_tensor_1", "x", "aten_add_tensor"}));
}

TEST(RealGraphs, OldNamingCopyIsUserInputMutation07) {
  Program p = readReal("07-et-mutable-buffer-2024-after-writeback.txt");
  ASSERT_EQ(p.signature.outputs.size(), 2u);
  EXPECT_EQ(p.signature.outputs[0], out(OutputKind::UserInputMutation, "aten_add_tensor_1", "arg0_1"));
  EXPECT_EQ(p.signature.outputs[1], out(OutputKind::UserOutput, "aten_add_tensor"));
}

TEST(RealGraphs, FunctorchCodeWithDefaultOverloadsAndGetAttr08) {
  Program p = readReal("08-functorch-functionalize-view-input-copy_.txt");
  EXPECT_EQ(node(p, "view_copy").target, "aten::view_copy");
  EXPECT_EQ(node(p, "view_copy").args[1], Arg::list({Arg::ofInt(4), Arg::ofInt(2)}));
  EXPECT_EQ(node(p, "add").target, "aten::add");
  EXPECT_EQ(node(p, "_tensor_constant0").op, NodeOp::GetAttr);
  EXPECT_EQ(node(p, "_tensor_constant0").target, "_tensor_constant0");
  EXPECT_EQ(p.graph.find("copy_"), nullptr);
  ASSERT_EQ(p.signature.outputs.size(), 2u);
  EXPECT_EQ(p.signature.outputs[0], out(OutputKind::UserInputMutation, "view_copy_1", "x_1"));
  EXPECT_EQ(p.signature.outputs[1], out(OutputKind::UserOutput, "view_copy_1"));
}

TEST(RealGraphs, FileCommentsAndAnnotations12) {
  Program p = readReal("12-et-issue11700-inplace-relu-user-input.txt");
  EXPECT_EQ(p.graph.nodes.size(), 4u);
  EXPECT_EQ(node(p, "x").typeText, "f32[3, 4, 5]");
  EXPECT_EQ(node(p, "relu_").target, "aten::relu_");
  EXPECT_EQ(node(p, "relu_").typeText, "f32[3, 4, 5]");
  EXPECT_TRUE(p.signatureInferred);
}

TEST(RealGraphs, BatchNormCopiesAreTwoUserInputMutations16) {
  Program p = readReal("16-pt-functionalize-batchnorm-running-stats-copy_.txt");
  const Node& empty = node(p, "empty");
  ASSERT_EQ(empty.kwargs.size(), 3u);
  EXPECT_EQ(empty.kwargs[2], (std::pair<std::string, Arg>{"device", Arg::token("device(type='cpu')")}));
  EXPECT_EQ(empty.kwargs[1].second, Arg::token("torch.strided"));
  const Node& bn = node(p, "_native_batch_norm_legit_functional");
  ASSERT_EQ(bn.args.size(), 8u);
  EXPECT_EQ(bn.args[1], Arg::none());
  EXPECT_EQ(bn.args[5], Arg::ofBool(true));
  EXPECT_EQ(bn.args[7], Arg::ofFloat(1e-05));
  const Node& getitem = node(p, "getitem_4");
  EXPECT_EQ(getitem.target, "operator.getitem");
  EXPECT_EQ(getitem.args, (std::vector<Arg>{testing::refTo(p.graph, "_native_batch_norm_legit_functional"), Arg::ofInt(4)}));
  ASSERT_EQ(p.signature.outputs.size(), 3u);
  EXPECT_EQ(p.signature.outputs[0], out(OutputKind::UserInputMutation, "getitem_3", "arg1_1"));
  EXPECT_EQ(p.signature.outputs[1], out(OutputKind::UserInputMutation, "getitem_4", "arg2_1"));
  EXPECT_EQ(p.signature.outputs[2], out(OutputKind::UserOutput, "getitem"));
}

TEST(RealGraphs, IndexPutWithNoneFreeListAndReturnWithoutTuple19) {
  Program p = readReal("19-pt-functionalize-index_put-on-view-copy_.txt");
  EXPECT_EQ(node(p, "index_put").args[1], Arg::list({testing::refTo(p.graph, "arange")}));
  EXPECT_EQ(node(p, "arange").kwargs[1].second, Arg::ofBool(false));
  ASSERT_EQ(p.signature.outputs.size(), 2u);
  EXPECT_EQ(p.signature.outputs[0], out(OutputKind::UserInputMutation, "view_copy_1", "arg0_1"));
}

TEST(RealGraphs, ExportDbQuirkyIndentationAndReprSignature23) {
  Program p = readReal("23-exportdb-2.3-user-input-mutation-functional.txt");
  EXPECT_FALSE(p.signatureInferred);
  EXPECT_EQ(p.graph.nodes.size(), 4u);
  ASSERT_EQ(p.signature.inputs.size(), 1u);
  EXPECT_EQ(p.signature.inputs[0], (InputSpec{InputKind::UserInput, "arg0_1", "", std::nullopt}));
  ASSERT_EQ(p.signature.outputs.size(), 2u);
  EXPECT_EQ(p.signature.outputs[0], out(OutputKind::UserInputMutation, "mul", "arg0_1"));
  EXPECT_EQ(p.signature.outputs[1], out(OutputKind::UserOutput, "cos"));
  EXPECT_EQ(p.rangeConstraints, "{}");
}

// --- Hand-made printouts in corpus/real (forms shared/ does not cover) -------------------------

TEST(HandMade, UnliftedModuleCodeLiftsMutatedAttributes) {
  Program p = readReal("h1-ep-module-code-batchnorm.txt");
  EXPECT_TRUE(p.signatureInferred);
  // Mutated buffers become BUFFER placeholders in front; the others stay attribute reads.
  ASSERT_EQ(p.signature.inputs.size(), 4u);
  EXPECT_EQ(p.signature.inputs[0], (InputSpec{InputKind::Buffer, "bn_running_mean", "bn.running_mean", true}));
  EXPECT_EQ(p.signature.inputs[2], (InputSpec{InputKind::Buffer, "bn_num_batches_tracked", "bn.num_batches_tracked", true}));
  EXPECT_EQ(p.signature.inputs[3].name, "x");
  EXPECT_EQ(p.graph.nodes[0].name, "bn_running_mean");
  EXPECT_EQ(node(p, "bn_weight").op, NodeOp::GetAttr);
  EXPECT_EQ(node(p, "bn_weight").target, "bn.weight");
  ASSERT_EQ(p.signature.outputs.size(), 4u);
  EXPECT_EQ(p.signature.outputs[2], out(OutputKind::BufferMutation, "add", "bn.num_batches_tracked"));
  EXPECT_EQ(p.signature.outputs[3], out(OutputKind::UserOutput, "relu"));
}

TEST(HandMade, MinifierRepro) {
  Program p = readReal("h2-minifier-repro.txt");
  EXPECT_EQ(countOp(p.graph, NodeOp::Placeholder), 3u);
  EXPECT_EQ(node(p, "_tensor_constant0").op, NodeOp::GetAttr);
  ASSERT_EQ(p.signature.outputs.size(), 3u);
  EXPECT_EQ(p.signature.outputs[0], out(OutputKind::UserInputMutation, "add", "arg0_1"));
  EXPECT_EQ(p.signature.outputs[1], out(OutputKind::UserInputMutation, "add_1", "arg2_1"));
}

TEST(HandMade, PrettyPrintedReprSignature) {
  Program p = readReal("h3-repr-signature-pretty.txt");
  EXPECT_FALSE(p.signatureInferred);
  ASSERT_EQ(p.signature.inputs.size(), 3u);
  EXPECT_EQ(p.signature.inputs[0], (InputSpec{InputKind::Buffer, "b_k_cache", "k_cache", true}));
  EXPECT_EQ(p.signature.outputs[0], out(OutputKind::BufferMutation, "index_put", "k_cache"));
  EXPECT_EQ(node(p, "index_put").args[1], Arg::list({Arg::none(), testing::refTo(p.graph, "input_pos")}));
}

TEST(HandMade, OldWalrusStrGraph) {
  Program p = readReal("h4-str-graph-old-walrus.txt");
  EXPECT_EQ(node(p, "getitem").target, "operator.getitem");
  EXPECT_EQ(node(p, "_tensor_constant0").op, NodeOp::GetAttr);
  EXPECT_EQ(node(p, "clamp_default").kwargs[1], (std::pair<std::string, Arg>{"max", Arg::none()}));
  ASSERT_EQ(p.signature.outputs.size(), 2u);
  EXPECT_EQ(p.signature.outputs[0], out(OutputKind::UserInputMutation, "clamp_default", "y_1"));
}

TEST(HandMade, CondBranchesAreSubmodules) {
  Program p = readReal("h5-cond-nested-submodule.txt");
  ASSERT_EQ(p.submodules.size(), 2u);
  EXPECT_EQ(p.submodules[0].name, "true_graph_0");
  EXPECT_EQ(p.submodules[1].name, "false_graph_0");
  EXPECT_EQ(p.submodules[1].graph.nodes.size(), 4u);
  const Node& cond = node(p, "cond");
  EXPECT_EQ(cond.target, "higher_order::cond");
  EXPECT_EQ(cond.args[3], Arg::tuple({testing::refTo(p.graph, "b_scale"), testing::refTo(p.graph, "x")}));
  EXPECT_EQ(node(p, "true_graph_0").op, NodeOp::GetAttr);
}

// --- Single features ---------------------------------------------------------------------------

TEST(Targets, Normalisation) {
  EXPECT_EQ(normaliseTarget("torch.ops.aten.add.Tensor"), "aten::add.Tensor");
  EXPECT_EQ(normaliseTarget("torch.ops.aten.add"), "aten::add");
  EXPECT_EQ(normaliseTarget("torch.ops.aten.add.default"), "aten::add");
  EXPECT_EQ(normaliseTarget("torch.ops.aten.copy_.default"), "aten::copy_");
  EXPECT_EQ(normaliseTarget("executorch.exir.dialects.edge._ops.aten.add.Tensor"), "aten::add.Tensor");
  EXPECT_EQ(normaliseTarget("executorch.exir.dialects.edge._ops.dim_order_ops._to_dim_order_copy.default"),
            "dim_order_ops::_to_dim_order_copy");
  EXPECT_EQ(normaliseTarget("torch.ops.higher_order.cond"), "higher_order::cond");
  EXPECT_EQ(normaliseTarget("torch.ops.higher_order.executorch_call_delegate"), "executorch_call_delegate");
  EXPECT_EQ(normaliseTarget("torch.ops.my_ops.mystery.default"), "my_ops::mystery");
  EXPECT_EQ(normaliseTarget("operator.getitem"), "operator.getitem");
  EXPECT_EQ(normaliseTarget("_operator.getitem"), "operator.getitem");
  EXPECT_EQ(normaliseTarget("<built-in function getitem>"), "operator.getitem");
  EXPECT_EQ(normaliseTarget("aten::add.Tensor"), "aten::add.Tensor");
}

TEST(Targets, PrintingInvertsNormalisation) {
  EXPECT_EQ(printTarget("aten::add.Tensor"), "torch.ops.aten.add.Tensor");
  EXPECT_EQ(printTarget("aten::copy_"), "torch.ops.aten.copy_.default");
  EXPECT_EQ(printTarget("higher_order::cond"), "torch.ops.higher_order.cond");
  EXPECT_EQ(printTarget("executorch_call_delegate"), "torch.ops.higher_order.executorch_call_delegate");
  EXPECT_EQ(printTarget("operator.getitem"), "operator.getitem");
  for (std::string t : {"aten::add.Tensor", "aten::copy_", "higher_order::cond", "executorch_call_delegate",
                        "my_ops::mystery", "llama::update_cache", "operator.getitem"})
    EXPECT_EQ(normaliseTarget(printTarget(t)), t);
  // A name that ends in `.default` itself (text_program_fuzzer read
  // `torch.ops.aten.view_copytorch.ops.aten.alias_copy.default.default`): printed with one
  // more, or it reads back as another op.
  for (std::string t : {"aten::view_copytorch.ops.aten.alias_copy.default", "aten::f.default", "higher_order::g.default"})
    EXPECT_EQ(normaliseTarget(printTarget(t)), t) << printTarget(t);
}

// A reference is the index of the node its name names, in lists, keyword arguments and the
// output tuple too; the writer prints the names back.
TEST(Args, ReferencesAreTheIndicesOfTheNodesTheirNamesName) {
  const std::string text = R"PY(def forward(self, x, y):
    add = torch.ops.aten.add.Tensor(x, y)
    cat = torch.ops.aten.cat.default([add, x], dim = 0)
    mul = torch.ops.aten.mul.Tensor(cat, other = add)
    return (mul, add)
)PY";
  Program p = readText(text);
  ASSERT_EQ(p.graph.nodes.size(), 6u);
  EXPECT_EQ(node(p, "add").args, (std::vector<Arg>{Arg::ref(0), Arg::ref(1)}));
  EXPECT_EQ(node(p, "cat").args[0], Arg::list({Arg::ref(2), Arg::ref(0)}));
  EXPECT_EQ(node(p, "mul").args[0], Arg::ref(3));
  EXPECT_EQ(node(p, "mul").kwargs[0].second, Arg::ref(2));
  EXPECT_EQ(p.graph.returnedValues(), (std::vector<Arg>{Arg::ref(4), Arg::ref(2)}));
  const std::string written = writeProgram(p);
  EXPECT_NE(written.find("torch.ops.aten.cat.default([add, x], dim = 0)"), std::string::npos) << written;
  EXPECT_NE(written.find("return (mul, add)"), std::string::npos) << written;
}

// A submodule's references index its own graph.
TEST(Args, SubmoduleReferencesIndexTheirOwnGraph) {
  Program p = readReal("h5-cond-nested-submodule.txt");
  ASSERT_FALSE(p.submodules.empty());
  for (const Submodule& sub : p.submodules) {
    std::size_t refs = 0;
    for (std::size_t i = 0; i < sub.graph.nodes.size(); ++i)
      for (const Arg& a : sub.graph.nodes[i].args)
        forEachRef(a, [&](NodeId r) {
          ++refs;
          EXPECT_LT(r, i) << sub.name << ": " << sub.graph.nodes[i].name;
        });
    EXPECT_GT(refs, 0u) << sub.name;
  }
  EXPECT_TRUE(validate(p).empty());
}

TEST(Args, PythonFloatFormatting) {
  EXPECT_EQ(formatArg(Arg::ofFloat(1.0), Graph{}), "1.0");
  EXPECT_EQ(formatArg(Arg::ofFloat(0.1), Graph{}), "0.1");
  EXPECT_EQ(formatArg(Arg::ofFloat(1e-05), Graph{}), "1e-05");
  EXPECT_EQ(formatArg(Arg::ofFloat(0.0001), Graph{}), "0.0001");
  EXPECT_EQ(formatArg(Arg::ofFloat(1e16), Graph{}), "1e+16");
  EXPECT_EQ(formatArg(Arg::ofFloat(123456789012345.0), Graph{}), "123456789012345.0");
  EXPECT_EQ(formatArg(Arg::ofFloat(-2.5), Graph{}), "-2.5");
  EXPECT_EQ(formatArg(Arg::ofFloat(-0.0), Graph{}), "-0.0");
  EXPECT_EQ(formatArg(Arg::ofFloat(1.0 / 0.0), Graph{}), "inf");
  EXPECT_EQ(formatArg(Arg::ofString("it's"), Graph{}), "'it\\'s'");
  const Graph withX{{Node::placeholder("x")}};
  EXPECT_EQ(formatArg(Arg::tuple({Arg::ref(0)}), withX), "(x,)");
  EXPECT_EQ(formatArg(Arg::ref(1), withX), "<no node #1>");
  EXPECT_EQ(formatArg(Arg::list({Arg::none(), Arg::ofInt(-3)}), Graph{}), "[None, -3]");
}

TEST(Forms, HigherOrderOpWithKeywordArguments) {
  Program p = readText(R"PY(def forward(self, pred, x):
    true_graph_0 = self.true_graph_0
    false_graph_0 = self.false_graph_0
    cond = torch.ops.higher_order.cond(pred, true_graph_0, false_graph_0, (x,), dim = 0)
    getitem = cond[0]
    return getitem
)PY");
  const Node& cond = node(p, "cond");
  EXPECT_EQ(cond.kwargs.size(), 1u);
  EXPECT_EQ(cond.args[3], Arg::tuple({testing::refTo(p.graph, "x")}));
  // `return x` stays a single value, not a tuple.
  ASSERT_NE(p.graph.outputNode(), nullptr);
  EXPECT_EQ(p.graph.outputNode()->args[0], testing::refTo(p.graph, "getitem"));
}

TEST(Forms, MetaExtensionAndSchemas) {
  Program p = readText(R"PY(ExportedProgram:
    class GraphModule(torch.nn.Module):
        def forward(self, b_s: "f32[4]", x: "f32[4]"):
            y: "f32[4]" = torch.ops.my_ops.scale.default(x)  # meta: _share_alloc_with_arg_idx=0, note=a b
            return (y,)

Graph signature:
    # inputs
    b_s: BUFFER target='s' persistent=False
    x: USER_INPUT

    # outputs
    y: BUFFER_MUTATION target='s'

Schemas:
    my_ops::scale(Tensor(a!) self) -> Tensor(a!)
    my_ops::other(Tensor x, int[2] k=[1, 1]) -> Tensor
)PY");
  const Node& y = node(p, "y");
  EXPECT_EQ(y.shareAllocArgIndex(), 0);
  EXPECT_EQ(y.meta.at("note"), "a b");
  ASSERT_EQ(p.schemas.size(), 2u);
  EXPECT_EQ(p.schemas[1], "my_ops::other(Tensor x, int[2] k=[1, 1]) -> Tensor");
  EXPECT_EQ(p.signature.inputs[0].persistent, false);
  EXPECT_TRUE(p.rangeConstraints.empty());
}

TEST(Forms, StrGraphWithTypesAndOldUserCount) {
  Program p = readText(R"PY(graph():
    %x : [#users=1] = placeholder[target=x]
    %y : Tensor "f32[3][1]cpu" [num_users=1] = placeholder[target=y]
    %add : [num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%x, %y), kwargs = {alpha: 2})
    %sym : [num_users=1] = call_function[target=<built-in function getitem>](args = (%add, 0), kwargs = {})
    return add
)PY");
  EXPECT_EQ(node(p, "y").typeText, "f32[3]");
  EXPECT_EQ(node(p, "sym").target, "operator.getitem");
  EXPECT_EQ(node(p, "add").kwargs[0].second, Arg::ofInt(2));
}

TEST(Forms, InfixOperatorsOnSymbolicSizes) {
  Program p = readText(R"PY(def forward(self, x: "f32[s0, 4]"):
    sym_size_int: "Sym(s0)" = torch.ops.aten.sym_size.int(x, 0)
    mul: "Sym(2*s0)" = sym_size_int * 2
    neg = -sym_size_int
    return (mul, neg)
)PY");
  EXPECT_EQ(node(p, "mul").target, "operator.mul");
  EXPECT_EQ(node(p, "mul").args, (std::vector<Arg>{testing::refTo(p.graph, "sym_size_int"), Arg::ofInt(2)}));
  EXPECT_EQ(node(p, "neg").target, "operator.neg");
  EXPECT_EQ(node(p, "x").typeText, "f32[s0, 4]");
}

TEST(Forms, DelegateCallAndUnquotedAnnotations) {
  Program p = readText(R"PY(class GraphModule(torch.nn.Module):
    def forward(self, x: f32[2, 2]):
        lowered_module_0 = self.lowered_module_0
        executorch_call_delegate = torch.ops.higher_order.executorch_call_delegate(lowered_module_0, x);  lowered_module_0 = x = None
        getitem: f32[2, 2] = executorch_call_delegate[0]
        return (getitem,)
)PY");
  EXPECT_EQ(node(p, "executorch_call_delegate").target, "executorch_call_delegate");
  EXPECT_EQ(node(p, "x").typeText, "f32[2, 2]");
  EXPECT_EQ(node(p, "getitem").typeText, "f32[2, 2]");
}

TEST(Forms, ExtremeLiterals) {
  Program p = readText(R"PY(def forward(self, x):
    a = torch.ops.aten.full.default([2], -9223372036854775808, dtype = torch.int64)
    b = torch.ops.aten.clamp.default(x, -inf, inf)
    c = torch.ops.aten.div.Tensor_mode(x, 2, rounding_mode = 'floor')
    d = torch.ops.aten.mul.Scalar(x, 1e999)
    return (a, b, c, d)
)PY");
  EXPECT_EQ(node(p, "a").args[1], Arg::ofInt(INT64_MIN));
  EXPECT_EQ(node(p, "b").args[1].real, -1.0 / 0.0);
  EXPECT_EQ(node(p, "c").kwargs[0].second, Arg::ofString("floor"));
  EXPECT_EQ(node(p, "d").args[1].real, 1.0 / 0.0);
}

TEST(Forms, SignatureFollowsGraphWithoutHeading) {
  Program p = readText(R"PY(graph():
    %b_c : [num_users=1] = placeholder[target=b_c]
    %add : [num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%b_c, 1), kwargs = {})
    return (add,)

# inputs
b_c: BUFFER target='c' persistent=True

# outputs
add: BUFFER_MUTATION target='c'
)PY");
  EXPECT_FALSE(p.signatureInferred);
  EXPECT_EQ(p.signature.outputs[0], out(OutputKind::BufferMutation, "add", "c"));
}

TEST(Inference, ReturnedCopyIsDroppedFromUserOutputsAndParameterCopyIsKept) {
  Program p = readText(R"PY(def forward(self, p_w, b_buf, x):
    add = torch.ops.aten.add.Tensor(x, p_w)
    copy_ = torch.ops.aten.copy_.default(p_w, add)
    copy__1 = torch.ops.aten.copy_.default(b_buf, add)
    return (copy__1, add)
)PY");
  // The copy into the parameter is not a mutation kind export knows: it stays, and ends the block.
  EXPECT_NE(p.graph.find("copy_"), nullptr);
  EXPECT_EQ(p.graph.find("copy__1"), nullptr);
  ASSERT_EQ(p.signature.outputs.size(), 2u);
  EXPECT_EQ(p.signature.outputs[0], out(OutputKind::BufferMutation, "add", "buf"));
  EXPECT_EQ(p.signature.outputs[1], out(OutputKind::UserOutput, "add"));
  EXPECT_EQ(p.signature.inputs[0], (InputSpec{InputKind::Parameter, "p_w", "w", std::nullopt}));
}

TEST(Inference, CopyReturnedInsideANestedTupleIsNotLifted) {
  Program p = readText(R"PY(def forward(self, b_buf, x):
    add = torch.ops.aten.add.Tensor(b_buf, x)
    copy_ = torch.ops.aten.copy_.default(b_buf, add)
    return (add, (copy_, x))
)PY");
  EXPECT_NE(p.graph.find("copy_"), nullptr);
  ASSERT_EQ(p.signature.outputs.size(), 2u);
  EXPECT_EQ(p.signature.outputs[0], out(OutputKind::UserOutput, "add"));
}

TEST(Inference, CopyNotAtTheEndIsNotLifted) {
  Program p = readText(R"PY(def forward(self, b_buf, x):
    copy_ = torch.ops.aten.copy_.default(b_buf, x)
    add = torch.ops.aten.add.Tensor(b_buf, x)
    return (add,)
)PY");
  EXPECT_NE(p.graph.find("copy_"), nullptr);
  ASSERT_EQ(p.signature.outputs.size(), 1u);
  EXPECT_EQ(p.signature.outputs[0].kind, OutputKind::UserOutput);
}

}  // namespace
}  // namespace wb
