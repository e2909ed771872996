// tests/malformed_input_test.cpp: the reader on bad input (core/text.h). Every malformed text
// gets one diagnostic at the right line and column with a message that says what is wrong;
// nothing crashes, hangs or recurses without bound (also run under ASan+UBSan).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/text.h"
#include "tests/testing.h"

namespace wb {
namespace {

struct Case {
  std::string name;
  std::string text;
  int line;
  // The column is where `marker` first occurs in that line (1-based); or `column` if no marker.
  std::string marker;
  int column;
  std::string message;  // a substring of the diagnostic's message
  ReadLimits limits = {};
};

const std::string kDef = "def forward(self, x):\n";

std::string formOne(const std::string& signatureBody) {
  return "ExportedProgram:\n"
         "    class GraphModule(torch.nn.Module):\n"
         "        def forward(self, b_s: \"f32[4]\", x: \"f32[4]\"):\n"
         "            add: \"f32[4]\" = torch.ops.aten.add.Tensor(b_s, x)\n"
         "            return (add,)\n"
         "\n"
         "Graph signature:\n" +
         signatureBody;
}

ReadLimits smallLimits() {
  ReadLimits limits;
  limits.maxListLength = 10;
  limits.maxNodes = 3;
  limits.maxBytes = 4096;
  return limits;
}

std::vector<Case> cases() {
  const std::string deepBrackets = "    y = torch.ops.aten.cat.default(" + std::string(100, '[') + std::string(100, ']') + ")\n";
  const std::string deepMinus = "    y = torch.ops.aten.mul.Tensor(x, " + std::string(200, '-') + "1)\n";
  std::string manyDims = "f32[";
  for (int i = 0; i < 17; ++i) manyDims += i ? ", 1" : "1";
  manyDims += "]";
  ReadLimits tiny;
  tiny.maxBytes = 10;
  return {
      {"empty file", "", 1, "", 1, "empty input"},
      {"only comments and blanks", "# a header\n\n   \n", 1, "", 1, "empty input"},
      {"not a program", "hello world\nthis is prose\n", 1, "", 1, "no program found"},
      {"binary garbage", "graph():\n    %x\x01\x02 : [num_users=1]\n", 2, "\x01", 0, "binary data (byte 0x01)"},
      {"NUL bytes first", std::string("\0\0ELF\x02", 6), 1, "", 1, "binary data (byte 0x00)"},
      {"input too large", kDef + "    return x\n", 1, "", 1, "exceeds the limit of 10", tiny},
      {"truncated call", kDef + "    y = torch.ops.aten.add.Tensor(x,\n", 2, "(", 0, "'(' is never closed"},
      {"truncated assignment", kDef + "    y = \n", 2, "", 9, "expected an expression after '='"},
      {"input ends before return", kDef + "    y = torch.ops.aten.relu.default(x)\n", 1, "def", 0,
       "forward() has no 'return'"},
      {"forward ends before return",
       "class M(torch.nn.Module):\n    def forward(self, x):\n        y = torch.ops.aten.relu.default(x)\n    def other(self):\n        pass\n",
       4, "def", 0, "expected 'return' before the end of forward()"},
      {"unmatched closing bracket", kDef + "    y = torch.ops.aten.relu.default(x))\n    return y\n", 2, "", 39,
       "unmatched ')'"},
      {"mismatched bracket", kDef + "    y = torch.ops.aten.cat.default([x, x)\n    return y\n", 2, "", 41,
       "mismatched ')': expected ']' to close '[' from line 2, column 36"},
      {"unterminated string", kDef + "    y = torch.ops.aten.div.Tensor_mode(x, 2, rounding_mode = 'floor)\n    return y\n", 2,
       "'floor", 0, "unterminated string"},
      {"unknown input spec kind", formOne("    # inputs\n    b_s: BUFFER target='s' persistent=True\n    x: USER_INPT\n"), 10,
       "USER_INPT", 0, "unknown input spec kind 'USER_INPT'"},
      {"unknown output spec kind",
       formOne("    # inputs\n    b_s: BUFFER target='s'\n    x: USER_INPUT\n    # outputs\n    add: BUFFER_MUTATON target='s'\n"),
       12, "BUFFER_MUTATON", 0, "unknown output spec kind 'BUFFER_MUTATON'"},
      {"spec line before a part heading", formOne("    x: USER_INPUT\n"), 8, "x", 0, "signature line before '# inputs'"},
      {"unknown signature field", formOne("    # inputs\n    x: USER_INPUT targte='x'\n"), 9, "targte", 0,
       "unknown signature field 'targte'"},
      {"signature names a missing placeholder",
       formOne("    # inputs\n    b_s: BUFFER target='s'\n    q: USER_INPUT\n    # outputs\n    add: USER_OUTPUT\n"), 10, "q", 0,
       "signature input 'q' names no placeholder"},
      {"signature names a missing output node",
       formOne("    # inputs\n    b_s: BUFFER target='s'\n    x: USER_INPUT\n    # outputs\n    nope: USER_OUTPUT\n"), 12,
       "nope", 0, "signature output 'nope' names no node"},
      {"second signature", formOne("    # inputs\n    x: USER_INPUT\n\nGraph signature:\n    # inputs\n"), 11, "G", 0,
       "a second graph signature"},
      {"bad kind in repr signature",
       "def forward(self, x):\n    return (x,)\nGraph signature: ExportGraphSignature(input_specs=[InputSpec(kind=<InputKind.BUFER: 3>, "
       "arg=TensorArgument(name='x'), target=None)], output_specs=[])\n",
       3, "<InputKind", 0, "unknown input spec kind 'BUFER'"},
      {"used before definition", kDef + "    y = torch.ops.aten.relu.default(z)\n    z = torch.ops.aten.relu.default(x)\n    return y\n",
       2, "z)", 0, "'z' is used before its definition at line 3"},
      {"undefined name", kDef + "    y = torch.ops.aten.add.Tensor(x, w)\n    return y\n", 2, "w)", 0, "undefined name 'w'"},
      {"undefined name in return", kDef + "    return (x, ghost)\n", 2, "ghost", 0, "undefined name 'ghost'"},
      {"duplicate node name", kDef + "    y = torch.ops.aten.relu.default(x)\n    y = torch.ops.aten.relu.default(x)\n    return y\n", 3,
       "y", 0, "duplicate node name 'y' (first defined at line 2)"},
      {"duplicate placeholder", "def forward(self, x, x):\n    return x\n", 1, "x)", 0, "duplicate node name 'x'"},
      {"huge dimension", "def forward(self, x: \"f32[99999999999999999999, 2]\"):\n    return x\n", 1, "\"f32", 0,
       "dimension size 99999999999999999999 exceeds the limit"},
      {"too many dimensions", "def forward(self, x: \"" + manyDims + "\"):\n    return x\n", 1, "\"f32", 0, "more than 16 dimensions"},
      {"brackets nested too deeply", kDef + deepBrackets + "    return y\n", 2, "", 35 + 64, "brackets nested too deeply (limit 64)"},
      {"unary minus nested too deeply", kDef + deepMinus + "    return y\n", 2, "", 38 + 70, "expression nested too deeply"},
      {"list too long", kDef + "    y = torch.ops.aten.cat.default([x, x, x, x, x, x, x, x, x, x, x])\n    return y\n", 2, "[", 0,
       "list too long (limit 10 items)", smallLimits()},
      {"too many nodes",
       kDef + "    a = torch.ops.aten.relu.default(x)\n    b = torch.ops.aten.relu.default(a)\n    c = torch.ops.aten.relu.default(b)\n    return c\n",
       4, "c", 0, "too many nodes (limit 3)", smallLimits()},
      {"unknown node kind", "graph():\n    %x : [num_users=1] = placehold[target=x]\n    return (x,)\n", 2, "placehold", 0,
       "unknown node kind 'placehold'"},
      {"str(graph) line without %", "graph():\n    x = 1\n    return (x,)\n", 2, "x", 0, "expected a node line"},
      {"str(graph) args not a tuple",
       "graph():\n    %x : [num_users=1] = placeholder[target=x]\n    %y : [num_users=1] = call_function[target=torch.ops.aten.relu.default](args = %x, kwargs = {})\n    return (y,)\n",
       3, "args", 0, "'args' must be a tuple"},
      {"str(graph) empty target", "graph():\n    %x : [num_users=1] = placeholder[target=]\n    return (x,)\n", 2, "", 45,
       "empty target"},
      {"node line after return", "graph():\n    %x : [num_users=1] = placeholder[target=x]\n    return (x,)\n    %y : [num_users=0] = placeholder[target=y]\n",
       4, "%", 0, "node line after 'return'"},
      {"statement after return", kDef + "    return (x,)\n    y = torch.ops.aten.relu.default(x)\n", 3, "y", 0,
       "statement after 'return'"},
      {"malformed meta", kDef + "    y = torch.ops.aten.relu.default(x)  # meta: oops\n    return y\n", 2, "#", 0,
       "malformed '# meta:' entry 'oops'"},
      {"integer too large", kDef + "    y = torch.ops.aten.full.default([2], 99999999999999999999)\n    return y\n", 2, "999", 0,
       "does not fit in 64 bits"},
      {"unexpected character", kDef + "    y = torch.ops.aten.relu.default(x) $\n    return y\n", 2, "$", 0, "unexpected character '$'"},
      {"malformed exponent", kDef + "    y = torch.ops.aten.mul.Tensor(x, 1e)\n    return y\n", 2, "e)", 0, "exponent has no digits"},
      {"digits run into a name", kDef + "    y = torch.ops.aten.mul.Tensor(x, 12abc)\n    return y\n", 2, "abc", 0,
       "malformed number"},
      {"missing '='", kDef + "    y torch.ops.aten.relu.default(x)\n    return y\n", 2, "torch", 0,
       "expected '=' after the node name 'y'"},
      {"positional after keyword", kDef + "    y = torch.ops.aten.sum.dim_IntList(x, dim = [0], True)\n    return y\n", 2, "True", 0,
       "positional argument after keyword argument"},
      {"forward without self", "def forward(x):\n    return x\n", 1, "x)", 0, "expected 'self'"},
      {"dictionary as an argument", kDef + "    y = torch.ops.my.op.default(x, {1: 2})\n    return y\n", 2, "{", 0,
       "unsupported argument '{1: 2}'"},
      {"malformed deletion", kDef + "    y = torch.ops.aten.relu.default(x);  x = 3\n    return y\n", 2, "3", 0,
       "expected a name in a ';  x = None' deletion"},
      {"ExportedProgram without a class", "ExportedProgram:\n    def forward(self, x):\n        return x\n", 2, "def", 0,
       "expected 'class GraphModule(torch.nn.Module):'"},
      {"class without forward", "class M(torch.nn.Module):\n    def __init__(self):\n        pass\n", 1, "class", 0,
       "class M has no forward()"},
      {"stray line in a class", "class M(torch.nn.Module):\n    x = 1\n    def forward(self, x):\n        return x\n", 2, "x", 0,
       "unexpected line in the body of class M"},
      {"graph without return", "graph():\n    %x : [num_users=1] = placeholder[target=x]\n", 1, "graph", 0, "graph() has no 'return'"},
      {"malformed str(graph) target",
       "graph():\n    %x : [num_users=1] = placeholder[target=x]\n    %y : [num_users=1] = call_function[target=torch,ops.aten.relu](args = (%x,), kwargs = {})\n    return (y,)\n",
       3, "torch", 0, "malformed target 'torch,ops.aten.relu'"},
      {"class line that is only a keyword", "class # GraphModule\n    def forward(self, x):\n        return x\n", 1, "class", 0,
       "class without a name"},
      {"unsupported right-hand side", kDef + "    y = 3\n    return y\n", 2, "3", 0, "expected a call, 'self.attribute' or 'x[i]'"},
  };
}

// Text the reader does not understand is never skipped: after each of the three forms, between
// the graph and its signature, before the program, and in the signature itself (a bare one, in
// either form, included). Every case names the line of the offending text or spec.
const std::string kGarbage = "This is not part of the program; it must not be skipped.\n";

std::string strGraph() {
  return "graph():\n"
         "    %b_s : [num_users=1] = placeholder[target=b_s]\n"
         "    %x : [num_users=1] = placeholder[target=x]\n"
         "    %add : [num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%b_s, %x), kwargs = {})\n"
         "    return (add,)\n";
}

std::string formOneGraph() {
  return "ExportedProgram:\n"
         "    class GraphModule(torch.nn.Module):\n"
         "        def forward(self, b_s: \"f32[4]\", x: \"f32[4]\"):\n"
         "            add: \"f32[4]\" = torch.ops.aten.add.Tensor(b_s, x)\n"
         "            return (add,)\n";
}

std::string moduleCode() {
  return "def forward(self, b_s, x):\n"
         "    add = torch.ops.aten.add.Tensor(b_s, x)\n"
         "    return (add,)\n";
}

std::string reprSpec(const std::string& kind, const std::string& name, const std::string& target) {
  bool input = kind.rfind("Input", 0) == 0;
  return std::string(input ? "InputSpec" : "OutputSpec") + "(kind=<" + kind + ": 1>, arg=TensorArgument(name='" + name +
         "'), target=" + target + (input ? ", persistent=None" : "") + ")";
}

std::string reprSignature(const std::vector<std::string>& inputs, const std::vector<std::string>& outputs) {
  std::string out = "ExportGraphSignature(input_specs=[";
  for (std::size_t i = 0; i < inputs.size(); ++i) out += (i ? ", " : "") + inputs[i];
  out += "], output_specs=[";
  for (std::size_t i = 0; i < outputs.size(); ++i) out += (i ? ", " : "") + outputs[i];
  return out + "])\n";
}

const std::string kTextSignature =
    "# inputs\nb_s: BUFFER target='s' persistent=True\nx: USER_INPUT\n\n# outputs\nadd: BUFFER_MUTATION target='s'\n";

std::string goodRepr() {
  return reprSignature({reprSpec("InputKind.BUFFER", "b_s", "'s'"), reprSpec("InputKind.USER_INPUT", "x", "None")},
                       {reprSpec("OutputKind.BUFFER_MUTATION", "add", "'s'")});
}

std::vector<Case> unreadTextCases() {
  const std::string formThree = strGraph();  // 5 lines
  const std::string formOne = formOneGraph();  // 5 lines
  const std::string formTwo = moduleCode();  // 3 lines
  const std::string notPython = "expected a Python statement outside the program";
  const std::string after = "unexpected text after the program";
  return {
      {"garbage after str(graph)", formThree + "\n" + kGarbage, 7, "This", 0, after},
      {"garbage after print(ep)", formOne + "\n" + kGarbage, 7, "This", 0, after},
      {"garbage after module code", formTwo + "\n" + kGarbage, 5, "", 6, notPython},
      {"indented garbage after module code", formTwo + "\n  some words\n", 5, "some", 0, "statement after 'return'"},
      {"indented garbage after a repro's driver", formTwo + "mod = Repro()\n  some words\n", 5, "words", 0,
       notPython},
      {"garbage after a text signature", formOne + "\nGraph signature:\n" + kTextSignature + kGarbage, 14, "This", 0,
       "expected ':' after the name in a signature line"},
      {"garbage after a bare text signature", formThree + "\n" + kTextSignature + kGarbage, 13, "This", 0,
       "expected ':' after the name in a signature line"},
      {"garbage after a bare repr signature", formThree + "\n" + goodRepr() + kGarbage, 8, "This", 0, after},
      {"garbage after a repr signature on the same line", formThree + "\nGraph signature: " +
           goodRepr().substr(0, goodRepr().size() - 1) + " trailing words\n", 7, "trailing", 0,
       "unexpected 'trailing' after the graph signature"},
      {"garbage after range constraints", formOne + "\nRange constraints: {} and more\n", 7, "and", 0,
       "unexpected 'and' after the range constraints"},
      {"garbage between graph and signature", formOne + "\n" + kGarbage + "\nGraph signature:\n" + kTextSignature, 7, "This",
       0, after},
      {"garbage between str(graph) and a bare repr signature", formThree + "by the way\n" + goodRepr(), 6, "by", 0, after},
      {"text before print(ep)", "some words first\n" + formOne, 1, "some", 0, "unexpected text before the program"},
      {"text before str(graph)", "import torch\n" + formThree, 1, "import", 0, "unexpected text before the program"},
      {"prose before module code", "Here is my model:\n" + formTwo, 1, "is", 0, notPython},
      {"prose after a repro's driver", "import torch\n" + formTwo + "mod = Repro()\nprint it please\n", 6, "it", 0,
       notPython},
      {"a block without a body after module code", formTwo + "if True:\n", 4, "if", 0, "the 'if' block has no body"},
      {"range constraints that are not a dictionary", formOne + "Range constraints: whatever\n", 6, "whatever", 0,
       "expected '{' after 'Range constraints:'"},
      {"truncated repr signature", formThree + "\n" + goodRepr().substr(0, 60) + "\n", 7, "(kind", 0, "'(' is never closed"},
      {"truncated pretty repr signature",
       formOne + "Graph signature: ExportGraphSignature(\n    input_specs=[\n        " +
           reprSpec("InputKind.USER_INPUT", "x", "None") + ",\n",
       7, "[", 0, "'[' is never closed"},
      {"truncated text signature", formThree + "\n# inputs\nb_s: BUFFER target='s' persistent=True\n", 7, "#", 0,
       "the graph signature has no input spec for placeholder 'x'"},
      {"bare repr signature with an unknown input", formThree + reprSignature({reprSpec("InputKind.BUFFER", "b_s", "'s'"),
                                                                              reprSpec("InputKind.USER_INPUT", "y", "None")},
                                                                             {reprSpec("OutputKind.USER_OUTPUT", "add", "None")}),
       6, "InputSpec(kind=<InputKind.USER_INPUT", 0, "signature input 'y' names no placeholder"},
      {"bare repr signature names a placeholder twice",
       formThree + reprSignature({reprSpec("InputKind.BUFFER", "b_s", "'s'"), reprSpec("InputKind.USER_INPUT", "x", "None"),
                                  reprSpec("InputKind.USER_INPUT", "x", "None")},
                                 {reprSpec("OutputKind.USER_OUTPUT", "add", "None")}),
       6, "InputSpec(kind=<InputKind.USER_INPUT: 1>, arg=TensorArgument(name='x'), target=None, persistent=None)]", 0, "names the same placeholder as the input spec at line 6"},
      {"bare repr signature misses a placeholder",
       formThree + reprSignature({reprSpec("InputKind.BUFFER", "b_s", "'s'")}, {reprSpec("OutputKind.USER_OUTPUT", "add", "None")}),
       6, "Export", 0, "no input spec for placeholder 'x'"},
      {"bare repr signature with an unknown output", formThree + reprSignature({reprSpec("InputKind.BUFFER", "b_s", "'s'"),
                                                                               reprSpec("InputKind.USER_INPUT", "x", "None")},
                                                                              {reprSpec("OutputKind.USER_OUTPUT", "sub", "None")}),
       6, "OutputSpec", 0, "signature output 'sub' names no node"},
      {"bare repr signature with too many outputs",
       formThree + reprSignature({reprSpec("InputKind.BUFFER", "b_s", "'s'"), reprSpec("InputKind.USER_INPUT", "x", "None")},
                                 {reprSpec("OutputKind.BUFFER_MUTATION", "add", "'s'"), reprSpec("OutputKind.USER_OUTPUT", "x", "None")}),
       6, "OutputSpec(kind=<OutputKind.USER_OUTPUT", 0, "is spec #1 but the graph returns 1 value(s)"},
      {"bare text signature with too few outputs", formThree + "# inputs\nb_s: BUFFER target='s'\nx: USER_INPUT\n# outputs\n", 6,
       "#", 0, "has 0 output spec(s) but the graph returns 1 value(s)"},
      {"text signature names a placeholder twice", formOne + "Graph signature:\n    # inputs\n    b_s: BUFFER target='s'\n"
                                                             "    b_s: BUFFER target='t'\n    x: USER_INPUT\n",
       9, "b_s", 0, "names the same placeholder as the input spec at line 8"},
      {"unknown field of a repr spec",
       formThree + "ExportGraphSignature(input_specs=[InputSpec(kind=<InputKind.USER_INPUT: 1>, arg=TensorArgument(name='x'), "
                   "targett=None)], output_specs=[])\n",
       6, "None)]", 0, "unknown field 'targett' of InputSpec"},
      {"repr signature without output_specs",
       formThree + "ExportGraphSignature(input_specs=[])\n", 6, "Export", 0, "without output_specs"},
      {"a bare repr signature after a text signature", formThree + "\n" + kTextSignature + goodRepr(), 13, "Export", 0,
       "a second graph signature"},
  };
}

int expectedColumn(const Case& c, const std::string& lineText) {
  if (c.marker.empty()) return c.column;
  std::size_t at = lineText.find(c.marker);
  EXPECT_NE(at, std::string::npos) << "marker '" << c.marker << "' not in line: " << lineText;
  return static_cast<int>(at + 1);
}

std::string lineOf(const std::string& text, int line) {
  std::size_t start = 0;
  for (int i = 1; i < line && start != std::string::npos; ++i) {
    start = text.find('\n', start);
    if (start != std::string::npos) ++start;
  }
  if (start == std::string::npos || start > text.size()) return "";
  return text.substr(start, text.find('\n', start) - start);
}

void expectPositionedDiagnostic(const Case& c) {
  {
    SCOPED_TRACE(c.name);
    Result<Program> r = readProgram(c.text, "bad.txt", c.limits);
    ASSERT_FALSE(r.ok()) << "accepted:\n" << writeProgram(*r);
    ASSERT_EQ(r.errors.size(), 1u);
    const Diagnostic& d = r.errors[0];
    EXPECT_EQ(d.file, "bad.txt");
    EXPECT_EQ(d.line, c.line) << d.format();
    EXPECT_EQ(d.column, expectedColumn(c, lineOf(c.text, c.line))) << d.format();
    EXPECT_NE(d.message.find(c.message), std::string::npos) << d.format();
    if (c.line > 0 && !c.text.empty() && c.message.find("limit of 10") == std::string::npos) {
      EXPECT_EQ(d.lineText, lineOf(c.text, c.line));
    }
    std::string formatted = d.format();
    EXPECT_EQ(formatted.rfind("bad.txt:" + std::to_string(c.line) + ":" + std::to_string(d.column) + ": ", 0), 0u) << formatted;
  }
}

TEST(Malformed, EveryCaseGetsAPositionedDiagnostic) {
  const std::vector<Case> all = cases();
  EXPECT_GE(all.size(), 30u);
  for (const Case& c : all) expectPositionedDiagnostic(c);
}

TEST(Malformed, NoTextIsLeftUnread) {
  const std::vector<Case> all = unreadTextCases();
  EXPECT_GE(all.size(), 25u);
  for (const Case& c : all) expectPositionedDiagnostic(c);
}

// The well-formed pieces the cases above spoil read: the failures come from the spoiling.
TEST(Malformed, TheUnspoiltPiecesRead) {
  for (const std::string& text : {strGraph() + "\n" + kTextSignature, strGraph() + "\n" + goodRepr(),
                                  formOneGraph() + "\nGraph signature:\n" + kTextSignature + "Range constraints: {}\n",
                                  "import torch\n" + moduleCode() + "mod = Repro()\nif True:\n    run(mod)\n" + goodRepr()}) {
    Result<Program> r = readProgram(text, "good.txt");
    ASSERT_TRUE(r.ok()) << formatAll(r.errors) << "\n" << text;
    EXPECT_FALSE(r->signatureInferred);
    ASSERT_EQ(r->signature.outputs.size(), 1u);
    EXPECT_EQ(r->signature.outputs[0], (OutputSpec{OutputKind::BufferMutation, "add", "s"}));
  }
}

// Every prefix of every real printout either reads or gets a diagnostic inside the text: a
// truncated paste never crashes the reader or yields a position outside the input.
TEST(Malformed, EveryTruncationOfRealPrintouts) {
  auto files = testing::filesUnder(testing::corpusDir() / "real");
  ASSERT_FALSE(files.empty());
  std::size_t rejected = 0;
  for (const auto& path : files) {
    std::string text = testing::readFile(path);
    for (std::size_t n = 0; n < text.size(); ++n) {
      std::string prefix = text.substr(0, n);
      Result<Program> r = readProgram(prefix, "prefix");
      if (r.ok()) continue;
      ++rejected;
      ASSERT_EQ(r.errors.size(), 1u);
      const Diagnostic& d = r.errors[0];
      ASSERT_GE(d.line, 1) << path << " at " << n << ": " << d.format();
      ASSERT_GE(d.column, 1) << path << " at " << n << ": " << d.format();
      ASSERT_FALSE(d.message.empty());
    }
  }
  EXPECT_GT(rejected, 1000u);
}

// Single-byte corruptions: no crash, and every diagnostic has a position.
TEST(Malformed, ByteCorruptionsOfRealPrintouts) {
  const std::string replacements = "()[]{}'\",:=%#\n \x01\xff";
  for (const auto& path : testing::filesUnder(testing::corpusDir() / "real")) {
    std::string text = testing::readFile(path);
    for (std::size_t i = 0; i < text.size(); i += 7) {
      for (char replacement : replacements) {
        std::string mutated = text;
        mutated[i] = replacement;
        Result<Program> r = readProgram(mutated, "mutated");
        if (r.ok()) {
          // Whatever is accepted must be writable and read back equal.
          Result<Program> again = readProgram(writeProgram(*r), "again");
          ASSERT_TRUE(again.ok()) << path << " byte " << i << ":\n" << formatAll(again.errors);
          ASSERT_TRUE(*again == *r) << path << " byte " << i;
          continue;
        }
        ASSERT_GE(r.errors[0].line, 1) << r.errors[0].format();
      }
    }
  }
}

// The bytes a printout never has are the control characters other than tab, line feed, form
// feed and carriage return, and DEL; bytes from 0x80 up are text (UTF-8). The reader finds
// them many at a time: each byte value is tried at 17 consecutive positions (every lane of a
// vector of 16 bytes) and must be reported at its own line and column.
TEST(Malformed, BinaryBytesAreTheControlCharactersAndDelInEveryPosition) {
  const std::string program = "graph():\n    %x : [num_users=0] = placeholder[target=x]\n    return ()\n";
  const std::size_t comment = program.find("    return");
  for (int u = 0; u < 256; ++u) {
    const bool binary = (u < 0x20 && u != '\t' && u != '\n' && u != '\f' && u != '\r') || u == 0x7f;
    for (std::size_t offset = 0; offset < 17; ++offset) {
      // A comment line of `offset` spaces, the byte, and the rest of the 17 columns, inserted
      // before the return: the byte sits in each lane, and in the tail for the last offsets.
      std::string line = "    #" + std::string(offset, 'a') + static_cast<char>(u) + std::string(16 - offset, 'b') + "\n";
      std::string text = program.substr(0, comment) + line + program.substr(comment);
      Result<Program> read = readProgram(text, "bytes.txt");
      const std::string what = "byte " + std::to_string(u) + " at offset " + std::to_string(offset);
      if (!binary) {
        if (!read.ok()) {
          EXPECT_EQ(read.errors[0].message.find("binary data"), std::string::npos) << what;
        }
        continue;
      }
      ASSERT_FALSE(read.ok()) << what;
      EXPECT_NE(read.errors[0].message.find("binary data"), std::string::npos) << what << ": " << formatAll(read.errors);
      EXPECT_EQ(read.errors[0].line, 3) << what;
      EXPECT_EQ(read.errors[0].column, static_cast<int>(6 + offset)) << what;
    }
  }
}

// The same at the end of the input, after a first line of 0 to 15 bytes more: the reader reads
// sixteen bytes at a time, then eight, then one, so the byte must be found in the last partial
// vector, word and tail too, at every lane.
TEST(Malformed, BinaryBytesAreFoundAtTheEndOfTheInputInEveryPosition) {
  const std::string program = "graph():\n    %x : [num_users=0] = placeholder[target=x]\n    return ()\n";
  for (int u : {0x00, 0x01, 0x08, 0x0b, 0x0e, 0x1f, 0x7f}) {
    for (std::size_t pad = 0; pad < 16; ++pad) {
      for (std::size_t offset = 0; offset < 17; ++offset) {
        const std::string text = "#" + std::string(pad, ' ') + "\n" + program + "    #" + std::string(offset, 'a') +
                                 static_cast<char>(u) + std::string(16 - offset, 'b');
        Result<Program> read = readProgram(text, "bytes.txt");
        const std::string what =
            "byte " + std::to_string(u) + " at offset " + std::to_string(offset) + " after " + std::to_string(pad);
        ASSERT_FALSE(read.ok()) << what;
        EXPECT_NE(read.errors[0].message.find("binary data"), std::string::npos) << what << ": " << formatAll(read.errors);
        EXPECT_EQ(read.errors[0].line, 5) << what;
        EXPECT_EQ(read.errors[0].column, static_cast<int>(6 + offset)) << what;
      }
    }
  }
}

TEST(Malformed, DeepInputsDoNotExhaustTheStack) {
  // Far beyond any limit: must fail fast with a diagnostic, not recurse.
  std::string text = kDef + "    y = f(" + std::string(100000, '(') + "\n";
  Result<Program> r = readProgram(text);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.errors[0].message.find("nested too deeply"), std::string::npos);
  std::string minus = kDef + "    y = torch.ops.aten.mul.Tensor(x, " + std::string(100000, '-') + "1)\n    return y\n";
  r = readProgram(minus);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.errors[0].message.find("nested too deeply"), std::string::npos);
  std::string classes;
  for (int i = 0; i < 200; ++i) classes += std::string(static_cast<std::size_t>(4 * i), ' ') + "class C(torch.nn.Module):\n";
  r = readProgram(classes);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.errors[0].message.find("nested too deeply"), std::string::npos) << r.errors[0].format();
}

}  // namespace
}  // namespace wb
