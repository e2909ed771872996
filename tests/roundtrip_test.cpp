// tests/roundtrip_test.cpp: read(write(p)) == p (core/text.h) on every program file of the
// project and on constructed edge cases, and the writer's exact output on golden files.
//
// Golden files live in tests/golden/; after an intended change of the writer, regenerate them
// with WBCHECK_UPDATE_GOLDEN=1 and review the diff.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>

#include "core/text.h"
#include "tests/testing.h"

namespace wb {
namespace {

namespace fs = std::filesystem;

void expectRoundTrip(const Program& p, const std::string& what) {
  std::string written = writeProgram(p);
  Result<Program> again = readProgram(written, what + " (written)");
  ASSERT_TRUE(again.ok()) << what << ":\n" << formatAll(again.errors) << "\n--- written:\n" << written;
  EXPECT_TRUE(*again == p) << what << ": read(write(p)) != p\n--- written:\n" << written
                           << "\n--- rewritten:\n" << writeProgram(*again);
  EXPECT_EQ(again->signatureInferred, p.signatureInferred) << what;
  EXPECT_EQ(writeProgram(*again), written) << what << ": the writer is not stable";
}

void expectFileRoundTrips(const fs::path& path) {
  Result<Program> r = readProgram(testing::readFile(path), path.string());
  ASSERT_TRUE(r.ok()) << formatAll(r.errors);
  expectRoundTrip(*r, path.string());
}

TEST(RoundTrip, EveryCorpusFile) {
  auto files = testing::filesUnder(testing::corpusDir());
  EXPECT_GE(files.size(), 16u);
  for (const fs::path& path : files) {
    SCOPED_TRACE(path.string());
    expectFileRoundTrips(path);
  }
}

TEST(RoundTrip, EverySharedRealGraph) {
  auto files = testing::filesUnder(testing::realGraphsDir());
  EXPECT_GE(files.size(), 11u);
  for (const fs::path& path : files) {
    SCOPED_TRACE(path.string());
    expectFileRoundTrips(path);
  }
}

// Forms 2 and 3 (what --pass-form gives a pass command) read back to the same program, or say
// why they cannot carry it (submodules); the text they print is that form's, not form 1's.
void expectFormsRoundTrip(const Program& p, const std::string& what) {
  for (ProgramForm form : {ProgramForm::GraphModuleCode, ProgramForm::StrGraph}) {
    const std::string why = programFormCannotCarry(p, form);
    if (!why.empty()) {
      EXPECT_FALSE(p.submodules.empty()) << what << ": " << why;
      continue;
    }
    const std::string written = writeProgram(p, form);
    EXPECT_EQ(written.rfind(form == ProgramForm::StrGraph ? "graph():\n" : "def forward(self", 0), 0u) << written;
    Result<Program> again = readProgram(written, what + " (written)");
    ASSERT_TRUE(again.ok()) << what << ", form " << static_cast<int>(form) << ":\n"
                            << formatAll(again.errors) << "\n--- written:\n" << written;
    EXPECT_TRUE(*again == p) << what << ", form " << static_cast<int>(form) << ": read(write(p)) != p\n--- written:\n"
                             << written << "\n--- read back, in form 1:\n" << writeProgram(*again);
    EXPECT_EQ(again->signatureInferred, p.signatureInferred) << what;
  }
}

TEST(RoundTrip, EveryCorpusFileInFormsTwoAndThree) {
  std::size_t withSubmodules = 0;
  for (const fs::path& path : testing::filesUnder(testing::corpusDir())) {
    SCOPED_TRACE(path.string());
    Result<Program> r = readProgram(testing::readFile(path), path.string());
    ASSERT_TRUE(r.ok()) << formatAll(r.errors);
    withSubmodules += !r->submodules.empty();
    expectFormsRoundTrip(*r, path.string());
  }
  EXPECT_GE(withSubmodules, 1u);  // the corpus has one (h5): the refusal is exercised
}

TEST(RoundTrip, EverySharedRealGraphInFormsTwoAndThree) {
  for (const fs::path& path : testing::filesUnder(testing::realGraphsDir())) {
    SCOPED_TRACE(path.string());
    Result<Program> r = readProgram(testing::readFile(path), path.string());
    ASSERT_TRUE(r.ok()) << formatAll(r.errors);
    expectFormsRoundTrip(*r, path.string());
  }
}

// --- Constructed programs: values the printouts rarely show ----------------------------------




Program edgeCaseProgram() {
  Program p;
  p.graph.nodes.push_back(Node::placeholder("b_s", "f32[4]"));
  p.graph.nodes.push_back(Node::placeholder("x", "f32[s0, 2*s0]"));
  p.graph.nodes.push_back(Node::placeholder("weird", "a \"quoted\" \\ type"));
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  p.graph.nodes.push_back(Node::call("floats", "aten::mystery.floats",
                               {Arg::ofFloat(-0.0), Arg::ofFloat(nan), Arg::ofFloat(-inf), Arg::ofFloat(5e-324),
                                Arg::ofFloat(1.7976931348623157e308), Arg::ofFloat(0.1 + 0.2), Arg::ofFloat(1e16),
                                Arg::ofFloat(123456.0), Arg::ofFloat(1e-5), Arg::ofFloat(-nan)}));
  p.graph.nodes.push_back(Node::call("ints", "my_ops::ints",
                               {Arg::ofInt(std::numeric_limits<std::int64_t>::min()),
                                Arg::ofInt(std::numeric_limits<std::int64_t>::max()), Arg::ofInt(0), Arg::ofInt(-1)}));
  p.graph.nodes.push_back(Node::call("strings", "my_ops::strings",
                               {Arg::ofString(""), Arg::ofString("it's \"q\""), Arg::ofString("tab\tnl\ncr\rbs\\"),
                                Arg::ofString(std::string("nul\0bell\x07" "del\x7f", 13)), Arg::ofString("ünï")}));
  p.graph.nodes.push_back(Node::call("nested", "aten::cat",
                               {Arg::list({Arg::tuple({}), Arg::tuple({testing::ref("x")}), Arg::list({Arg::list({Arg::none()})})}),
                                Arg::ofBool(false)},
                               {{"dtype", Arg::token("torch.bfloat16")}, {"device", Arg::token("device(type='cuda', index=0)")},
                                {"memory_format", Arg::token("torch.channels_last")}}));
  Node shared = Node::call("shared", "aten::add_.Tensor", {testing::ref("b_s"), testing::ref("x")});
  shared.meta = {{"_share_alloc_with_arg_idx", "0"}, {"other", "x y"}};
  shared.typeText = "f32[4]";
  p.graph.nodes.push_back(shared);
  p.graph.nodes.push_back(Node::call("item", "operator.getitem", {testing::ref("nested"), Arg::ofInt(-1)}));
  p.graph.nodes.push_back(Node::call("item2", "operator.getitem", {testing::ref("nested"), Arg::ofInt(0)}, {{"k", Arg::none()}}));
  p.graph.nodes.push_back(Node::call("delegate", "executorch_call_delegate", {testing::ref("x")}));
  p.graph.nodes.push_back(Node::call("hop", "higher_order::auto_functionalized",
                               {Arg::token("torch.ops.my_ops.foo.default")}, {{"x", testing::ref("x")}}));
  Node attr;
  attr.name = "_tensor_constant0";
  attr.op = NodeOp::GetAttr;
  attr.target = "sub.block._tensor_constant0";
  attr.typeText = "i64[]";
  p.graph.nodes.push_back(attr);
  Node module;
  module.name = "sub_block";
  module.op = NodeOp::CallModule;
  module.target = "sub.block";
  module.args = {testing::ref("x"), testing::ref("_tensor_constant0")};
  p.graph.nodes.push_back(module);
  p.graph.nodes.push_back(Node::call("sym", "operator.mul", {testing::ref("ints"), Arg::ofInt(2)}));
  Node out = Node::output({testing::ref("shared"), testing::ref("floats"), Arg::ofInt(3), Arg::none()});
  out.meta = {{"why", "output meta"}};
  p.graph.nodes.push_back(out);

  p.signature.inputs = {{InputKind::Buffer, "b_s", "s", false},
                        {InputKind::UserInput, "x", "", std::nullopt},
                        {InputKind::CustomObj, "weird", "torch.classes.x.Y", std::nullopt}};
  p.signature.outputs = {{OutputKind::BufferMutation, "shared", "s"},
                         {OutputKind::UserOutput, "floats", ""},
                         {OutputKind::UserOutput, "", ""},
                         {OutputKind::UserOutput, "", ""}};
  p.schemas = {"my_ops::ints(int a, int b, int c, int d) -> Tensor", "my_ops::strings(str[] s) -> Tensor"};
  p.rangeConstraints = "{s0: VR[2, int_oo]}";

  Submodule branch;
  branch.name = "true_graph_0";
  branch.graph.nodes = {Node::placeholder("a", "f32[4]"), Node::call("neg", "aten::neg", {testing::ref("a")}), Node::output({testing::ref("neg")})};
  p.submodules.push_back(branch);
  Submodule single;
  single.name = "false_graph_0";
  Node bare;
  bare.name = "output";
  bare.op = NodeOp::Output;
  bare.target = "output";
  bare.args = {testing::ref("a")};  // `return a`: a single value, not a tuple
  single.graph.nodes = {Node::placeholder("a"), bare};
  p.submodules.push_back(single);
  testing::resolveRefs(p);
  return p;
}

TEST(RoundTrip, ConstructedEdgeCases) { expectRoundTrip(edgeCaseProgram(), "edge cases"); }
TEST(RoundTrip, ConstructedEdgeCasesInFormsTwoAndThree) { expectFormsRoundTrip(edgeCaseProgram(), "edge cases"); }

TEST(RoundTrip, EmptySignatureAndEmptyReturn) {
  Program p;
  Node out;
  out.name = "output";
  out.op = NodeOp::Output;
  out.target = "output";
  p.graph.nodes = {out};
  expectRoundTrip(p, "empty");
  p.graph.nodes.back().args = {Arg::tuple({})};
  expectRoundTrip(p, "empty tuple");
}

// --- A signature printed on its own ------------------------------------------------------------
//
// `print(ep)` prints the graph and then `Graph signature:`; PyTorch's docstrings, and users who
// print `ep.graph_module` and `ep.graph_signature` one after the other, print the signature
// without the heading, in the text form (`# inputs` / `# outputs`) or the repr form
// (`ExportGraphSignature(...)`, one line or pretty-printed, with or without `persistent=`).
// Every one of them reads to the program print(ep) shows. Old placeholder names (`arg0_1`)
// and new ones (`b_buf`, `p_weight`) alike.

const char* kPrintedGraph = R"PY(ExportedProgram:
    class GraphModule(torch.nn.Module):
        def forward(self, p_weight: "f32[4]", b_buf: "f32[4]", arg0_1: "f32[4]", x: "f32[4]"):
            mul: "f32[4]" = torch.ops.aten.mul.Tensor(x, p_weight)
            add: "f32[4]" = torch.ops.aten.add.Tensor(b_buf, mul)
            add_1: "f32[4]" = torch.ops.aten.add.Tensor(arg0_1, 1)
            return (add, add_1, mul)
)PY";

const char* kTextForm = R"PY(# inputs
p_weight: PARAMETER target='weight'
b_buf: BUFFER target='buf' persistent=True
arg0_1: USER_INPUT
x: USER_INPUT

# outputs
add: BUFFER_MUTATION target='buf'
add_1: USER_INPUT_MUTATION target='arg0_1'
mul: USER_OUTPUT
)PY";

const char* kReprOneLine =
    "ExportGraphSignature(input_specs=[InputSpec(kind=<InputKind.PARAMETER: 2>, arg=TensorArgument(name='p_weight'), "
    "target='weight', persistent=None), InputSpec(kind=<InputKind.BUFFER: 3>, arg=TensorArgument(name='b_buf'), "
    "target='buf', persistent=True), InputSpec(kind=<InputKind.USER_INPUT: 1>, arg=TensorArgument(name='arg0_1'), "
    "target=None, persistent=None), InputSpec(kind=<InputKind.USER_INPUT: 1>, arg=TensorArgument(name='x'), "
    "target=None, persistent=None)], output_specs=[OutputSpec(kind=<OutputKind.BUFFER_MUTATION: 3>, "
    "arg=TensorArgument(name='add'), target='buf'), OutputSpec(kind=<OutputKind.USER_INPUT_MUTATION: 6>, "
    "arg=TensorArgument(name='add_1'), target='arg0_1'), OutputSpec(kind=<OutputKind.USER_OUTPUT: 1>, "
    "arg=TensorArgument(name='mul'), target=None)])\n";

// Pretty-printed, and without `persistent=` where it is None (older PyTorch prints no such field).
const char* kReprPretty = R"PY(ExportGraphSignature(
    input_specs=[
        InputSpec(
            kind=<InputKind.PARAMETER: 2>,
            arg=TensorArgument(name='p_weight'),
            target='weight',
        ),
        InputSpec(kind=<InputKind.BUFFER: 3>, arg=TensorArgument(name='b_buf'), target='buf', persistent=True),
        InputSpec(kind=<InputKind.USER_INPUT: 1>, arg=TensorArgument(name='arg0_1'), target=None),
        InputSpec(kind=<InputKind.USER_INPUT: 1>, arg=TensorArgument(name='x'), target=None),
    ],
    output_specs=[
        OutputSpec(kind=<OutputKind.BUFFER_MUTATION: 3>, arg=TensorArgument(name='add'), target='buf'),
        OutputSpec(kind=<OutputKind.USER_INPUT_MUTATION: 6>, arg=TensorArgument(name='add_1'), target='arg0_1'),
        OutputSpec(kind=<OutputKind.USER_OUTPUT: 1>, arg=TensorArgument(name='mul'), target=None),
    ],
)
)PY";

const char* kStrGraph = R"PY(graph():
    %p_weight : [num_users=1] = placeholder[target=p_weight]
    %b_buf : [num_users=1] = placeholder[target=b_buf]
    %arg0_1 : [num_users=1] = placeholder[target=arg0_1]
    %x : [num_users=1] = placeholder[target=x]
    %mul : [num_users=2] = call_function[target=torch.ops.aten.mul.Tensor](args = (%x, %p_weight), kwargs = {})
    %add : [num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%b_buf, %mul), kwargs = {})
    %add_1 : [num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%arg0_1, 1), kwargs = {})
    return (add, add_1, mul)
)PY";

Program readOk(const std::string& text, const std::string& what) {
  Result<Program> r = readProgram(text, what);
  EXPECT_TRUE(r.ok()) << what << ":\n" << formatAll(r.errors) << "\n" << text;
  return r.ok() ? *r : Program{};
}

TEST(RoundTrip, SignaturePrintedOnItsOwnReadsAsPrintEpShowsIt) {
  const std::string graph = kPrintedGraph;
  std::string indentedText;
  for (std::size_t start = 0; start < std::string(kTextForm).size();) {
    std::string_view all = kTextForm;
    std::size_t end = all.find('\n', start);
    std::string_view line = all.substr(start, end - start);
    indentedText += (line.empty() ? "" : "    ") + std::string(line) + "\n";
    start = end + 1;
  }
  const Program printed = readOk(graph + "\nGraph signature:\n" + indentedText + "Range constraints: {}\n", "print(ep)");
  ASSERT_FALSE(printed.signatureInferred);
  ASSERT_EQ(printed.signature.outputs.size(), 3u);
  EXPECT_EQ(printed.signature.outputs[1], (OutputSpec{OutputKind::UserInputMutation, "add_1", "arg0_1"}));
  const std::vector<std::pair<std::string, std::string>> bare = {
      {"text form", graph + "\n" + kTextForm + "Range constraints: {}\n"},
      {"text form, indented", graph + "\n" + indentedText + "Range constraints: {}\n"},
      {"repr form on one line", graph + kReprOneLine + "Range constraints: {}\n"},
      {"repr form pretty-printed", graph + "\n" + kReprPretty + "\nRange constraints: {}\n"},
      {"repr form after the heading", graph + "Graph signature: " + kReprOneLine + "Range constraints: {}\n"},
      {"pretty repr form after the heading", graph + "Graph signature:\n" + kReprPretty + "Range constraints: {}\n"},
  };
  for (const auto& [what, text] : bare) {
    SCOPED_TRACE(what);
    const Program p = readOk(text, what);
    EXPECT_FALSE(p.signatureInferred);
    EXPECT_TRUE(p == printed) << writeProgram(p);
    expectRoundTrip(p, what);
  }
  // str(graph) prints no annotations: the signature is the same, the types are not there.
  for (const std::string& signature : {std::string(kTextForm), std::string(kReprOneLine), std::string(kReprPretty)}) {
    const Program p = readOk(std::string(kStrGraph) + "\n" + signature, "str(graph)");
    EXPECT_FALSE(p.signatureInferred);
    EXPECT_EQ(p.signature, printed.signature);
    expectRoundTrip(p, "str(graph) with a bare signature");
  }
}

// An inferred signature stays known as inferred through the text: the writer notes it.
TEST(RoundTrip, AnInferredSignatureIsSaidToBeInferred) {
  const Program inferred = readOk(kStrGraph, "no signature");
  ASSERT_TRUE(inferred.signatureInferred);
  const std::string written = writeProgram(inferred);
  EXPECT_NE(written.find("inferred"), std::string::npos) << written;
  expectRoundTrip(inferred, "inferred");
  const Program printed = readOk(std::string(kStrGraph) + "\n" + kTextForm, "with its signature");
  EXPECT_EQ(writeProgram(printed).find("inferred"), std::string::npos);
}

TEST(RoundTrip, FormTwoIsModuleCodeWithItsDeletionsAndFormThreeIsStrGraph) {
  const Program p = readOk(std::string(kPrintedGraph) + "\nGraph signature:\n    # inputs\n"
                           "    p_weight: PARAMETER target='weight'\n    b_buf: BUFFER target='buf' persistent=True\n"
                           "    arg0_1: USER_INPUT\n    x: USER_INPUT\n\n    # outputs\n"
                           "    add: BUFFER_MUTATION target='buf'\n    add_1: USER_INPUT_MUTATION target='arg0_1'\n"
                           "    mul: USER_OUTPUT\n",
                           "print(ep)");
  const std::string code = writeProgram(p, ProgramForm::GraphModuleCode);
  EXPECT_NE(code.find("def forward(self, p_weight: \"f32[4]\", b_buf: \"f32[4]\", arg0_1: \"f32[4]\", x: \"f32[4]\"):\n"
                      "    mul: \"f32[4]\" = torch.ops.aten.mul.Tensor(x, p_weight);  x = p_weight = None\n"
                      "    add: \"f32[4]\" = torch.ops.aten.add.Tensor(b_buf, mul);  b_buf = None\n"),
            std::string::npos)
      << code;
  EXPECT_NE(code.find("\nGraph signature:\n"), std::string::npos) << code;
  const std::string graph = writeProgram(p, ProgramForm::StrGraph);
  EXPECT_NE(graph.find("    %b_buf : Tensor \"f32[4]\" [num_users=1] = placeholder[target=b_buf]\n"), std::string::npos) << graph;
  EXPECT_NE(graph.find("    %mul : Tensor \"f32[4]\" [num_users=2] = call_function[target=torch.ops.aten.mul.Tensor]"
                       "(args = (%x, %p_weight), kwargs = {})\n"),
            std::string::npos)
      << graph;
  EXPECT_NE(graph.find("    return (add, add_1, mul)\n"), std::string::npos) << graph;
  expectFormsRoundTrip(p, "print(ep)");
}

// --- Golden files: the writer's exact output ------------------------------------------------

struct GoldenCase {
  fs::path input;
  std::string golden;
};

std::vector<GoldenCase> goldenCases() {
  const fs::path real = testing::realGraphsDir();
  return {
      {real / "05-et-mutable-buffers-after-writeback.txt", "writer-05-after-writeback.txt"},
      {real / "16-pt-functionalize-batchnorm-running-stats-copy_.txt", "writer-16-batchnorm.txt"},
      {real / "23-exportdb-2.3-user-input-mutation-functional.txt", "writer-23-exportdb.txt"},
      {real / "h1-ep-module-code-batchnorm.txt", "writer-h1-ep-module-code.txt"},
      {real / "h5-cond-nested-submodule.txt", "writer-h5-cond.txt"},
  };
}

TEST(Golden, WriterOutput) {
  const fs::path dir = testing::sourceDir() / "tests" / "golden";
  const bool update = std::getenv("WBCHECK_UPDATE_GOLDEN") != nullptr;
  for (const GoldenCase& c : goldenCases()) {
    SCOPED_TRACE(c.golden);
    Result<Program> r = readProgram(testing::readFile(c.input), c.input.string());
    ASSERT_TRUE(r.ok()) << formatAll(r.errors);
    std::string written = writeProgram(*r);
    if (update) {
      std::ofstream(dir / c.golden, std::ios::binary) << written;
      continue;
    }
    EXPECT_EQ(written, testing::readFile(dir / c.golden));
  }
}

TEST(Golden, EdgeCaseProgram) {
  const fs::path path = testing::sourceDir() / "tests" / "golden" / "writer-edge-cases.txt";
  std::string written = writeProgram(edgeCaseProgram());
  if (std::getenv("WBCHECK_UPDATE_GOLDEN")) {
    std::ofstream(path, std::ios::binary) << written;
    return;
  }
  EXPECT_EQ(written, testing::readFile(path));
}

}  // namespace
}  // namespace wb
