// tests/reader_paths_test.cpp: the reader's two paths for a node line of forward() read every
// input alike. Nearly every line of a printout goes the direct way (readCommonNodeLine,
// core/text_node_line.cpp), the rest through tokens and Exprs; with the direct way off
// (text::readProgramWith(..., false)) every line takes the general one. On every program file of
// the project, the text fuzzer's seeds, generated programs, and thousands of corrupted variants
// of all of them, both must give the same program and node locations, or the same error at the
// same position.
#include <gtest/gtest.h>

#include <charconv>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "core/text.h"
#include "core/text_syntax.h"
#include "gen/generator.h"
#include "gen/scaled.h"
#include "tests/testing.h"

namespace wb {
namespace {

namespace fs = std::filesystem;

struct Outcome {
  Result<Program> program = Result<Program>::failure(Diagnostic{});
  std::vector<SourceLocation> locations;
};

Outcome readBy(std::string_view text, bool commonLines, const ReadLimits& limits) {
  Outcome out;
  out.program = text::readProgramWith(text, "input", limits, &out.locations, commonLines);
  return out;
}

std::string describe(const Result<Program>& r) {
  return r.ok() ? "a program:\n" + writeProgram(*r) : "an error: " + formatAll(r.errors);
}

// Both paths agree on `text`; returns whether the text read (for the callers' counts).
bool expectSamePaths(std::string_view text, const std::string& what, const ReadLimits& limits = {}) {
  const Outcome direct = readBy(text, true, limits);
  const Outcome general = readBy(text, false, limits);
  if (direct.program.ok() != general.program.ok()) {
    ADD_FAILURE() << what << ": the direct path gives " << describe(direct.program) << "\nthe general path gives "
                  << describe(general.program) << "\n--- input:\n" << text;
    return false;
  }
  if (!direct.program.ok()) {
    const Diagnostic& a = direct.program.errors.front();
    const Diagnostic& b = general.program.errors.front();
    EXPECT_EQ(direct.program.errors.size(), general.program.errors.size()) << what;
    EXPECT_TRUE(a.file == b.file && a.line == b.line && a.column == b.column && a.message == b.message &&
                a.lineText == b.lineText)
        << what << ": the direct path says " << formatAll(direct.program.errors) << "the general path says "
        << formatAll(general.program.errors) << "--- input:\n" << text;
    return false;
  }
  EXPECT_TRUE(*direct.program == *general.program)
      << what << ": the paths read different programs\n--- direct:\n" << writeProgram(*direct.program)
      << "\n--- general:\n" << writeProgram(*general.program);
  EXPECT_EQ(direct.program->signatureInferred, general.program->signatureInferred) << what;
  bool sameLocations = direct.locations.size() == general.locations.size();
  for (std::size_t i = 0; sameLocations && i < direct.locations.size(); ++i)
    sameLocations = direct.locations[i].line == general.locations[i].line &&
                    direct.locations[i].column == general.locations[i].column;
  EXPECT_TRUE(sameLocations) << what << ": different node locations";
  // Sharing of targets is not part of ==: the direct path interns them as the general one does.
  return true;
}

// What a node line is made of, and what breaks it: the corruptions below insert these.
constexpr std::string_view kInserted[] = {",", "[", "]", "(", ")", "-", "'", "\"", "#", ";", "=", ".", " ",
                                          "1", "x", "\\", ":", "\t", "None", "1e", "9999999999999999999",
                                          ", )", "[,]", "= None", "  # meta: k", "\r", "%", "+", "==", "0.5"};

// `count` corruptions of `text`, each one edit at a random place (seeded: the same every run).
std::vector<std::string> corruptions(const std::string& text, std::size_t count, std::uint64_t seed) {
  std::mt19937_64 random(seed);
  std::vector<std::string> out;
  if (text.empty()) return out;
  for (std::size_t k = 0; k < count; ++k) {
    std::string variant = text;
    const std::size_t at = random() % variant.size();
    switch (random() % 4) {
      case 0: variant.erase(at, 1 + random() % 3); break;
      case 1: variant.insert(at, kInserted[random() % std::size(kInserted)]); break;
      case 2: variant[at] = kInserted[random() % std::size(kInserted)][0]; break;
      default: {  // a line repeated: duplicate names, a second definition
        const std::size_t start = variant.rfind('\n', at);
        const std::size_t end = variant.find('\n', at);
        if (start == std::string::npos || end == std::string::npos) break;
        variant.insert(end, variant.substr(start, end - start));
        break;
      }
    }
    out.push_back(std::move(variant));
  }
  return out;
}

std::vector<fs::path> inputFiles() {
  std::vector<fs::path> files = testing::filesUnder(testing::corpusDir());
  for (const auto& entry : fs::recursive_directory_iterator(testing::sourceDir() / "fuzz" / "corpus" / "text"))
    if (entry.is_regular_file()) files.push_back(entry.path());
  return files;
}

TEST(ReaderPaths, EveryProgramFileAndFuzzSeed) {
  const std::vector<fs::path> files = inputFiles();
  EXPECT_GE(files.size(), 100u);
  std::size_t read = 0;
  for (const fs::path& path : files) read += expectSamePaths(testing::readFile(path), path.string());
  EXPECT_GE(read, 100u) << "most of the corpus should read";
}

TEST(ReaderPaths, GeneratedPrograms) {
  for (std::uint64_t seed = 0; seed < 300; ++seed) {
    const std::string text = writeProgram(gen::generateFromSeed(seed));
    EXPECT_TRUE(expectSamePaths(text, "generated program, seed " + std::to_string(seed))) << text;
  }
  EXPECT_TRUE(expectSamePaths(writeProgram(gen::decoderProgram(3'000, 30)), "decoder of 3,000 nodes"));
  EXPECT_TRUE(expectSamePaths(writeProgram(gen::chainProgram(500, 5)), "chain of 500 nodes"));
}

TEST(ReaderPaths, CorruptedProgramFiles) {
  std::uint64_t seed = 1;
  std::size_t variants = 0;
  for (const fs::path& path : inputFiles()) {
    const std::string text = testing::readFile(path);
    if (text.size() > 64 * 1024) continue;
    for (const std::string& variant : corruptions(text, 40, seed++)) {
      expectSamePaths(variant, path.string() + " (corrupted, seed " + std::to_string(seed - 1) + ")");
      ++variants;
    }
    if (::testing::Test::HasFailure()) break;  // one file's differences say enough
  }
  EXPECT_GE(variants, 4'000u);
}

TEST(ReaderPaths, CorruptedGeneratedPrograms) {
  for (std::uint64_t seed = 0; seed < 100 && !::testing::Test::HasFailure(); ++seed) {
    const std::string text = writeProgram(gen::generateFromSeed(seed));
    for (const std::string& variant : corruptions(text, 20, 1000 + seed))
      expectSamePaths(variant, "generated program, seed " + std::to_string(seed) + " (corrupted)");
  }
}

// Limits bind on the direct path as on the general one (it leaves a line at a limit to the
// general path, which reports it).
TEST(ReaderPaths, TightLimits) {
  const std::string text = writeProgram(gen::decoderProgram(1'000, 10));  // lists ([pos]), integers
  const std::string lines =
      "graph():\n"
      "    %x : [num_users=1] = placeholder[target=x]\n"
      "    return (x,)\n";
  for (std::size_t nesting : {0, 1, 2, 3}) {
    ReadLimits limits;
    limits.maxNesting = nesting;
    expectSamePaths(text, "maxNesting " + std::to_string(nesting), limits);
  }
  for (std::size_t length : {0, 1, 2, 3}) {
    ReadLimits limits;
    limits.maxListLength = length;
    expectSamePaths(text, "maxListLength " + std::to_string(length), limits);
  }
  for (std::size_t nodes : {1, 50, 500}) {
    ReadLimits limits;
    limits.maxNodes = nodes;
    expectSamePaths(text, "maxNodes " + std::to_string(nodes), limits);
  }
  ReadLimits dims;
  dims.maxDims = 1;
  expectSamePaths(text, "maxDims 1", dims);
  dims.maxDims = 16;
  dims.maxDimSize = 3;
  expectSamePaths(text, "maxDimSize 3", dims);
  expectSamePaths(lines, "str(graph)");
}

// Lines that are in the direct path's form, or just outside it, one at a time in a small
// program: the forms the corpus has few of.
TEST(ReaderPaths, NodeLineForms) {
  const std::string_view kLines[] = {
      "y: \"f32[4]\" = torch.ops.aten.add.Tensor(x, x)",
      "y = torch.ops.aten.add.Tensor(x, x)",
      "y: 'f32[4]' = torch.ops.aten.add.Tensor(x, x)",
      "y: \"f32[4]\" = torch.ops.aten.add.Tensor(x, x);  x = None",
      "y: \"f32[4]\" = torch.ops.aten.add.Tensor(x, x);  x = z = None",
      "y: \"f32[4]\" = torch.ops.aten.add.Tensor(x, x);  x = None;  w = None",
      "y: \"f32[4]\" = torch.ops.aten.add.Tensor(x, x);  x = None  # meta: _share_alloc_with_arg_idx=0",
      "y: \"f32[4]\" = torch.ops.aten.add.Tensor(x, x)  # a comment",
      "y: \"f32[4]\" = torch.ops.aten.add.Tensor(x, x)  # meta: broken",
      "y: \"f32[4]\" = torch.ops.aten.add.Tensor(x, x)  ",
      "y: \"f32[4]\" = torch.ops.aten.add.Tensor( x ,x )",
      "y: \"f32[4]\" = torch.ops.aten.add.Tensor(x, x,)",
      "y: \"f32[4]\" = torch.ops.aten.add.Tensor(x, alpha = 2)",
      "y: \"f32[4]\" = torch.ops.aten.add.Tensor(x, alpha=-2.5e-3)",
      "y: \"f32[4]\" = torch.ops.aten.add.Tensor(alpha = 2, x)",
      "y: \"f32[4]\" = torch.ops.aten.add.Tensor(x, alpha == 2)",
      "y: \"f32[4]\" = torch.ops.aten.mul.Tensor(x, -0)",
      "y: \"f32[4]\" = torch.ops.aten.mul.Tensor(x, -0.0)",
      "y: \"f32[4]\" = torch.ops.aten.mul.Tensor(x, .5)",
      "y: \"f32[4]\" = torch.ops.aten.mul.Tensor(x, 1.)",
      "y: \"f32[4]\" = torch.ops.aten.mul.Tensor(x, 1e999)",
      "y: \"f32[4]\" = torch.ops.aten.mul.Tensor(x, 1e-999)",
      "y: \"f32[4]\" = torch.ops.aten.mul.Tensor(x, 1e)",
      "y: \"f32[4]\" = torch.ops.aten.mul.Tensor(x, 1x)",
      "y: \"f32[4]\" = torch.ops.aten.mul.Tensor(x, 999999999999999999)",
      "y: \"f32[4]\" = torch.ops.aten.mul.Tensor(x, 9223372036854775807)",
      "y: \"f32[4]\" = torch.ops.aten.mul.Tensor(x, -9223372036854775808)",
      "y: \"f32[4]\" = torch.ops.aten.mul.Tensor(x, 9223372036854775808)",
      "y: \"f32[4]\" = torch.ops.aten.mul.Tensor(x, inf)",
      "y: \"f32[4]\" = torch.ops.aten.mul.Tensor(x, -inf)",
      "y: \"f32[4]\" = torch.ops.aten.mul.Tensor(x, nan)",
      "y: \"f32[4]\" = torch.ops.aten.mul.Tensor(x, True, False, None)",
      "y: \"f32[4]\" = torch.ops.aten.mul.Tensor(x, None.x)",
      "y: \"f32[4]\" = torch.ops.aten.view.default(x, [4])",
      "y: \"f32[4]\" = torch.ops.aten.view.default(x, [])",
      "y: \"f32[4]\" = torch.ops.aten.view.default(x, [[1, 2], [x]])",
      "y: \"f32[4]\" = torch.ops.aten.view.default(x, [1,])",
      "y: \"f32[4]\" = torch.ops.aten.view.default(x, (1, 2))",
      "y: \"f32[4]\" = torch.ops.aten.to.dtype(x, torch.float32)",
      "y: \"f32[4]\" = torch.ops.aten.to.dtype(x, dtype = torch.float32, layout = torch.strided)",
      "y: \"f32[4]\" = torch.ops.aten.to.dtype(x, torch .float32)",
      "y: \"f32[4]\" = torch.ops.aten.to.dtype(x, device(type='cpu'))",
      "y: \"f32[4]\" = torch.ops.aten.div.Tensor_mode(x, x, rounding_mode = 'floor')",
      "y: \"f32[4]\" = torch.ops.aten.div.Tensor_mode(x, x, rounding_mode = 'fl\\'oor')",
      "y: \"f32[4]\" = torch.ops.aten.div.Tensor_mode(x, x, rounding_mode = 'fl' 'oor')",
      "y: \"f32[4]\" = torch.ops.aten.div.Tensor_mode(x, x, rounding_mode = 'floor",
      "y: \"f32[4]\" = torch.ops.aten.add.Tensor(x, later)",
      "y: \"f32[4]\" = torch.ops.aten.add.Tensor(x, nowhere)",
      "y: \"f32[4]\" = torch.ops.aten.add.Tensor(x, y)",
      "x: \"f32[4]\" = torch.ops.aten.add.Tensor(x, x)",
      "y: \"f32[99999999999999]\" = torch.ops.aten.add.Tensor(x, x)",
      "y: \"f32[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17]\" = torch.ops.aten.add.Tensor(x, x)",
      "y: \"f\\\"32\" = torch.ops.aten.add.Tensor(x, x)",
      "y: \"f32\" \"[4]\" = torch.ops.aten.add.Tensor(x, x)",
      "y: f32[4] = torch.ops.aten.add.Tensor(x, x)",
      "y:= torch.ops.aten.add.Tensor(x, x)",
      "y == torch.ops.aten.add.Tensor(x, x)",
      "y: \"f32[4]\" = torch.ops.aten.add.Tensor(x, x)(x)",
      "y: \"f32[4]\" = torch.ops.aten.add.Tensor(x, x)[0]",
      "y: \"f32[4]\" = torch.ops.aten.add.Tensor(x, x) + 1",
      "y: \"f32[4]\" = torch.ops.aten.add.Tensor (x, x)",
      "y: \"f32[4]\" = torch. ops.aten.add.Tensor(x, x)",
      "y: \"f32[4]\" = None.add(x, x)",
      "y: \"f32[4]\" = self.sub(x)",
      "y: \"f32[4]\" = self(x)",
      "y: \"f32[4]\" = operator.getitem(x, 0)",
      "y: \"f32[4]\" = torch.ops.aten.add.Tensor(x,",
      "y: \"f32[4]\" = torch.ops.aten.add.Tensor(x, [x,",
      "y: \"f32[4]\" = torch.ops.aten.add.Tensor(x, x);",
      "y: \"f32[4]\" = torch.ops.aten.add.Tensor(x, x);  x = y",
      "y: \"f32[4]\" = torch.ops.aten.add.Tensor(x, x);  None = None",
      "y: \"f32[4]\" = torch.ops.aten.add.Tensor(x, x) x",
      "return: \"f32[4]\" = torch.ops.aten.add.Tensor(x, x)",
      "None: \"f32[4]\" = torch.ops.aten.add.Tensor(x, x)",
      "y: \"f32[4]\" = torch.ops.aten.add.Tensor(x, x\r)",
      "y: \"f32[4]\" = torch.ops.aten.add.Tensor(x, \xc3\xa9)",
      "y: \"f32[4]\" = torch.ops.aten.add.Tensor(x, '\xc3\xa9')",
      "y\t:\t\"f32[4]\"\t=\ttorch.ops.aten.add.Tensor(\tx\t,\fx\t)",
  };
  // Each line first as the first call of its op, then after lines that called its op (and
  // others) already: the direct path remembers the callees it read and takes a callee it knows
  // without scanning it again (scanCallee).
  const std::string knownCallees =
      "        a0 = torch.ops.aten.add.Tensor(x, x)\n"
      "        a1 = torch.ops.aten.mul.Tensor(x, x)\n"
      "        a2 = torch.ops.aten.view.default(x, [4])\n"
      "        a3 = torch.ops.aten.to.dtype(x, torch.float32)\n"
      "        a4 = torch.ops.aten.div.Tensor_mode(x, x, rounding_mode = 'floor')\n"
      "        a5 = operator.getitem(x, 0)\n";
  for (const std::string& before : {std::string(), knownCallees}) {
    for (std::string_view line : kLines) {
      const std::string text = "class M(torch.nn.Module):\n    def forward(self, x: \"f32[4]\", z):\n" + before +
                               "        " + std::string(line) +
                               "\n        later = torch.ops.aten.neg.default(x)\n        return (x,)\n";
      expectSamePaths(text, std::string(line));
    }
  }
}

// Signature lines in the writer's form, or just outside it, one at a time in a small program:
// the direct path (readCommonSpecLine, core/text_spec_line.cpp) reads what it accepts as the
// lexer and readTextSpec do, and leaves the rest to them, errors and all.
TEST(ReaderPaths, SignatureLineForms) {
  const std::string_view kInputLines[] = {
      "b_x: BUFFER target='x' persistent=True",
      "b_x: BUFFER target=\"x\" persistent=True",
      "b_x: BUFFER target='x' persistent=False",
      "b_x: BUFFER target='x' persistent=None",
      "b_x: BUFFER target='x' persistent=None persistent=True",
      "b_x: BUFFER target='x'",
      "b_x: BUFFER persistent=True target='x'",
      "b_x: BUFFER target='x' target='y' persistent=True",
      "b_x: BUFFER target=None persistent=True",
      "b_x: BUFFER target='x' target=None",
      "b_x: BUFFER target='' persistent=True",
      "b_x: BUFFER target = 'x'  persistent = True  ",
      "b_x :BUFFER target='x' persistent=True",
      "b_x:BUFFER target='x'persistent=True",
      "b_x:\tBUFFER\ttarget='x'\fpersistent=True",
      "b_x: BUFFER target='x' persistent=True  # a comment",
      "b_x: BUFFER target='x#y' persistent=True",
      "b_x: BUFFER target='x y' persistent=True",
      "b_x: BUFFER target='\xc3\xa9' persistent=True",
      "b_x: BUFFER target='x' persistent=True,",
      "b_x: BUFFER target='x', persistent=True",
      "b_x: BUFFER target='x' persistent=Tru",
      "b_x: BUFFER target='x' persistent=Truex",
      "b_x: BUFFER target='x' persistent=1",
      "b_x: BUFFER target='x' persistent='True'",
      "b_x: BUFFER target=x persistent=True",
      "b_x: BUFFER target=True",
      "b_x: BUFFER target=1",
      "b_x: BUFFER target='x' 'y'",
      "b_x: BUFFER target='x''y'",
      "b_x: BUFFER target='x\\'y'",
      "b_x: BUFFER target='x\\\\'",
      "b_x: BUFFER target='x",
      "b_x: BUFFER target=\"x'",
      "b_x: BUFFER target=='x'",
      "b_x: BUFFER target 'x'",
      "b_x: BUFFER target=",
      "b_x: BUFFER targets='x'",
      "b_x: BUFFER Target='x'",
      "b_x: BUFFER target='x' persistent=True extra=1",
      "b_x: BUFFER target='x' persistent=True.x",
      "b_x: BUFFER target='x' persistent=True $",
      "b_x: BUFFER target='x' persistent=True\rx",
      "b_x: BUFFER.x target='x'",
      "b_x: BUFER target='x'",
      "b_x: USER_OUTPUT",
      "b_x: InputKind.BUFFER target='x' persistent=True",
      "b_x: 1BUFFER",
      "b_x: 'BUFFER'",
      "b_x: BUFFER(target='x')",
      "b_x: BUFFER target=('x')",
      "b_x: BUFFER target=['x'",
      "b_x:= BUFFER",
      "b_x: = BUFFER",
      "b_x BUFFER",
      "b_x:",
      "b_x: target='x'",
      ": BUFFER target='x'",
      "1b_x: BUFFER target='x'",
      "b_y: BUFFER target='x' persistent=True",
      "x: BUFFER target='x' persistent=True",
      "return: BUFFER target='x'",
  };
  const std::string_view kOutputLines[] = {
      "add: BUFFER_MUTATION target='x'",
      "add: BUFFER_MUTATION target=None",
      "add: BUFFER_MUTATION target='x' persistent=True",
      "add: BUFFER_MUTATION",
      "add: USER_OUTPUT",
      "add: USER_INPUT_MUTATION target='x'",
      "add: OutputKind.USER_OUTPUT",
      "add: BUFFER target='x'",
      "add: BUFFER_MUTATION target='x' # a comment",
      "add: BUFFER_MUTATION target='x' persistent=Maybe",
      "nothere: USER_OUTPUT",
      ": USER_OUTPUT",
  };
  auto program = [](std::string_view input, std::string_view output) {
    return "ExportedProgram:\n"
           "    class GraphModule(torch.nn.Module):\n"
           "        def forward(self, b_x: \"f32[4]\", x: \"f32[4]\"):\n"
           "            add: \"f32[4]\" = torch.ops.aten.add.Tensor(b_x, x)\n"
           "            return (add,)\n"
           "\n"
           "Graph signature:\n"
           "    # inputs\n"
           "    " + std::string(input) + "\n"
           "    x: USER_INPUT\n"
           "\n"
           "    # outputs\n"
           "    " + std::string(output) + "\n";
  };
  std::size_t read = 0;
  for (std::string_view line : kInputLines)
    read += expectSamePaths(program(line, kOutputLines[0]), "input spec line: " + std::string(line));
  for (std::string_view line : kOutputLines)
    read += expectSamePaths(program(kInputLines[0], line), "output spec line: " + std::string(line));
  // Both outcomes are exercised: forms that read, and forms that are errors.
  EXPECT_GE(read, 20u);
  EXPECT_LE(read, 45u);
}

// The header and the return line of forward() in the writer's form, or just outside it: the
// direct paths (readCommonForwardHeader, readCommonReturnLine) read what they accept as
// readForwardHeader and readReturn do, and leave the rest to them.
TEST(ReaderPaths, ForwardHeaderAndReturnForms) {
  const std::string_view kHeaders[] = {
      "def forward(self, x: \"f32[4]\", z: \"f32[4]\"):",
      "def forward(self, x, z):",
      "def forward(self, x: 'f32[4]', z):",
      "def forward(self, x: \"f32[4]\"):",
      "def forward(self):",
      "def forward(self, x: \"f32[4]\",):",
      "def forward(self, x: \"f32[4]\", *args):",
      "def forward(self, x: \"f32[4]\") -> None:",
      "def forward(self, x: \"f32[4]\"):  # a comment",
      "def forward(self, x: \"f32[4]\" ):  ",
      "def forward( self , x : \"f32[4]\" ) :",
      "def forward(self,x:\"f32[4]\",z):",
      "def forward(self,\tx,\fz):",
      "def forward(self, x: \"f32[99999999999999]\"):",
      "def forward(self, x: \"f32[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17]\", z: \"f32[99999999999999]\"):",
      "def forward(self, x: \"f\\\"32\"):",
      "def forward(self, x: \"f32\" \"[4]\"):",
      "def forward(self, x: f32[4]):",
      "def forward(self, x: \"f32[4]\" = None):",
      "def forward(self, x = 1):",
      "def forward(self, x: \"\"):",
      "def forward(self, x: \"\xc3\xa9\"):",
      "def forward(self, x:):",
      "def forward(self, x: \"f32[4]\", x):",
      "def forward(self, None, x):",
      "def forward(self, 1x):",
      "def forward(self x):",
      "def forward(x):",
      "def forward(self, x: \"f32[4]\"",
      "def forward(self, x: \"f32[4]\"):x",
      "def forward(self, x: \"f32[4]\")",
      "def forward(self, x: \"f32[4]\"); y = None:",
      "def  forward(self, x):",
      "def forward (self, x):",
  };
  const std::string_view kReturns[] = {
      "return (y,)",
      "return (y, x)",
      "return (y, x, z)",
      "return (y, x,)",
      "return (y)",
      "return ()",
      "return (,)",
      "return y",
      "return y, x",
      "return",
      "return (y, None)",
      "return (True,)",
      "return (y, inf)",
      "return (y, x.z)",
      "return (y, [x])",
      "return (y, 1)",
      "return (y, (x,))",
      "return (nowhere,)",
      "return (y, y)",
      "return (y,)  # meta: _share_alloc_with_arg_idx=0",
      "return (y,)  # a comment",
      "return(y,)",
      "return ( y , x )",
      "return\t(y,\tx)\t",
      "return (y,,)",
      "return (y x)",
      "return (y, x) x",
      "return (y, x",
      "return (y, x))",
      "returnx (y,)",
      "return (y, x); x = None",
  };
  std::size_t read = 0;
  for (std::string_view header : kHeaders) {
    const std::string text = "class M(torch.nn.Module):\n    " + std::string(header) +
                             "\n        y = torch.ops.aten.add.Tensor(x, x)\n        return (y,)\n";
    read += expectSamePaths(text, "header: " + std::string(header));
  }
  for (std::string_view ret : kReturns) {
    const std::string text = "class M(torch.nn.Module):\n    def forward(self, x: \"f32[4]\", z):\n"
                             "        y = torch.ops.aten.add.Tensor(x, x)\n        " + std::string(ret) + "\n";
    read += expectSamePaths(text, "return: " + std::string(ret));
  }
  EXPECT_GE(read, 20u);
  EXPECT_LE(read, 55u);
  // A tuple longer than the limit is the general parser's error.
  for (std::size_t length : {1, 2, 3}) {
    ReadLimits limits;
    limits.maxListLength = length;
    expectSamePaths("class M(torch.nn.Module):\n    def forward(self, x, z):\n        return (x, z, x)\n",
                    "return of 3 values, maxListLength " + std::to_string(length), limits);
  }
}

// What checkShape lets through, against a model of the check as first written (trim the
// brackets' text, split it at commas, parse each dimension that is all digits): the reader's
// one-scan test of a shape within the limits (core/text_graph.cpp) must pass no shape that the
// model rejects, and the model's check then gives the error.
bool modelAcceptsShape(std::string_view type, const ReadLimits& limits) {
  auto trim = [](std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
  };
  const std::size_t open = type.find('[');
  if (open == std::string_view::npos) return true;
  const std::size_t close = type.find(']', open);
  if (close == std::string_view::npos) return true;
  std::string_view body = trim(type.substr(open + 1, close - open - 1));
  if (body.empty()) return true;
  std::size_t dims = 0;
  while (true) {
    const std::size_t comma = body.find(',');
    const std::string_view dim = trim(body.substr(0, comma));
    if (++dims > limits.maxDims) return false;
    if (!dim.empty() && dim.find_first_not_of("0123456789") == std::string_view::npos) {
      std::int64_t value = 0;
      const auto [ptr, ec] = std::from_chars(dim.data(), dim.data() + dim.size(), value);
      if (ec != std::errc() || value > limits.maxDimSize) return false;
    }
    if (comma == std::string_view::npos) return true;
    body = body.substr(comma + 1);
  }
}

TEST(ReaderPaths, ShapeLimitsAsTheModelChecksThem) {
  const std::string_view kTypes[] = {
      "f32[4]", "f32[3]", "f32[ 4 ]", "f32[\t4\t]", "f32[1, 4]", "f32[4, 1]", "f32[s4]", "f32[4s]", "f32[2*s0]",
      "f32[s0*4]", "f32[1,2,3]", "f32[1,2]", "f32[]", "f32[ ]", "f32[1,,2]", "f32[,]", "f32[4 4]", "f32[-4]",
      "f32[00004]", "i64[0]", "f32[99999999999999999999]", "f32[9223372036854775807]", "f32[9223372036854775808]",
      "f32[999999999999999999]", "f32[1099511627776]", "f32[1099511627777]", "f32[4]cpu", "f32[3][1]cpu",
      "f32[1, 2][99]", "f32[4", "f32]4[", "f32", "", "[5]", "f32[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16]",
      "f32[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17]"};
  std::vector<ReadLimits> limits(6);
  limits[1].maxDimSize = 3;
  limits[2].maxDims = 2;
  limits[3].maxDims = 0;
  limits[4].maxDimSize = 0;
  limits[5].maxDims = 1;
  limits[5].maxDimSize = 1;
  for (std::size_t l = 0; l < limits.size(); ++l) {
    for (std::string_view type : kTypes) {
      const std::string text = "def forward(self, x: \"" + std::string(type) + "\"):\n    y: \"" + std::string(type) +
                               "\" = torch.ops.aten.neg.default(x)\n    return (y,)\n";
      const bool accepts = modelAcceptsShape(type, limits[l]);
      for (bool commonLines : {true, false}) {
        const Result<Program> read = text::readProgramWith(text, "input", limits[l], nullptr, commonLines);
        EXPECT_EQ(read.ok(), accepts) << "limits #" << l << ", type '" << type << "': "
                                      << (read.ok() ? std::string("read") : formatAll(read.errors));
      }
    }
  }
}

}  // namespace
}  // namespace wb
