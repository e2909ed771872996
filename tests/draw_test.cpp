// tests/draw_test.cpp: `wbcheck draw` and draw/: the marks of a refuted placement (refute), the
// DOT text on golden files (stable node order and colours), every corpus program rendered to
// SVG by graphviz (exit 0, well-formed XML, every node named), and the command's exit codes.
//
// Golden files live in tests/golden/draw/; after an intended change of the picture, regenerate
// them with WBCHECK_UPDATE_GOLDEN=1 and review the diff (and a rendering of it).
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "campaign/campaign.h"
#include "core/placement.h"
#include "draw/draw.h"
#include "draw/refutation.h"
#include "draw/render.h"
#include "oracle/oracle.h"
#include "tests/testing.h"

namespace wb::draw {
namespace {

namespace fs = std::filesystem;
using testing::corpusDir;
using testing::readFile;

fs::path hazard(const std::string& name) { return corpusDir() / "hazards" / name; }

struct Checked {
  Program program;
  SchemaTable schemas;
  PlacedProgram placed, early;
  oracle::CheckReport report;
  Refutation refutation;
};

Checked checkAndRefute(const fs::path& file, Placement placement) {
  Checked c;
  c.program = testing::loadProgram(file);
  c.schemas = schemasFor(c.program, builtinSchemas());
  c.placed = place(c.program, placement, c.schemas);
  c.early = place(c.program, Placement::Early, c.schemas);
  oracle::CheckOptions options;
  options.placement = placement;
  c.report = oracle::check(c.program, options, c.schemas);
  c.refutation = refute(c.program, c.placed, c.early, c.report, c.schemas);
  return c;
}

// ---------------------------------------------------------------------------------------------
// refute(): what a picture marks.

TEST(DrawRefutation, H5CopyBeforeTheReaderOfTheViewIsTheBrokenDependence) {
  const Checked c = checkAndRefute(hazard("h05_view_copy_becomes_view.txt"), Placement::Pr20744_ff2892d4);
  ASSERT_TRUE(c.refutation.refuted());
  ASSERT_EQ(c.refutation.broken.size(), 1u);
  EXPECT_EQ(c.refutation.broken[0].first, "sum_1");
  EXPECT_EQ(c.refutation.broken[0].offending, "copy__default");
  EXPECT_EQ(c.refutation.broken[0].reason, "must follow %sum_1, which reads b_s through %view_copy (early, R2)");
  EXPECT_EQ(c.refutation.offendingCopies, std::vector<std::string>{"copy__default"});
  EXPECT_TRUE(c.refutation.missing.empty());
  // The oracle sees the user output (%sum_1, at position 1 of the tuple) differ once the
  // view_copy is a view.
  ASSERT_EQ(c.refutation.divergences.size(), 1u);
  const Divergence& d = c.refutation.divergences[0];
  EXPECT_EQ(d.viewModes, oracle::ViewModeSet::AliasViews);
  EXPECT_TRUE(d.isOutput);
  ASSERT_TRUE(d.position.has_value());
  EXPECT_EQ(*d.position, 1u);
  EXPECT_EQ(d.firstDivergingNode, "sum_1");
}

TEST(DrawRefutation, H8CopiesInTheWrongOrderBreakTheCopyToCopyDependence) {
  // end writes a before b, but the copy into b reads a: it must go first (early orders it so).
  const Checked c = checkAndRefute(hazard("h08_copy_reads_other_copys_buffer.txt"), Placement::End);
  ASSERT_TRUE(c.refutation.refuted());
  ASSERT_EQ(c.refutation.broken.size(), 1u);
  EXPECT_EQ(c.refutation.broken[0].first, "copy__1");
  EXPECT_EQ(c.refutation.broken[0].offending, "copy_");
  EXPECT_NE(c.refutation.broken[0].reason.find("reads the old b_a"), std::string::npos) << c.refutation.broken[0].reason;
  EXPECT_EQ(c.refutation.offendingCopies, std::vector<std::string>{"copy_"});
  ASSERT_FALSE(c.refutation.divergences.empty());
  EXPECT_EQ(c.refutation.divergences[0].placeholder, "b_b");
}

TEST(DrawRefutation, H8LostWriteBackIsMissingWhereEarlyPutsIt) {
  for (Placement p : {Placement::Upstream, Placement::Pr20744_ff2892d4}) {
    SCOPED_TRACE(toString(p));
    const Checked c = checkAndRefute(hazard("h08_copy_reads_other_copys_buffer.txt"), p);
    ASSERT_TRUE(c.refutation.refuted());
    ASSERT_EQ(c.refutation.missing.size(), 1u);
    EXPECT_EQ(c.refutation.missing[0].buffer, "b_b");
    EXPECT_EQ(c.refutation.missing[0].value, "b_a");
    EXPECT_EQ(c.refutation.missing[0].after, "");  // early puts it right after the placeholders (R0)
    EXPECT_TRUE(c.refutation.broken.empty());
    ASSERT_FALSE(c.refutation.divergences.empty());
    EXPECT_EQ(c.refutation.divergences[0].placeholder, "b_b");
  }
}

TEST(DrawRefutation, B2ChangedOutputLayoutIsMarked) {
  const Checked c = checkAndRefute(corpusDir() / "regressions" / "upstream_b2_output_order.txt", Placement::Upstream);
  ASSERT_TRUE(c.refutation.refuted());
  ASSERT_FALSE(c.refutation.changedOutputs.empty());
  EXPECT_EQ(c.refutation.changedOutputs[0].position, 0u);
}

TEST(DrawRefutation, EarlyOnEveryHazardMarksNothing) {
  for (const fs::path& file : testing::filesUnder(corpusDir() / "hazards")) {
    SCOPED_TRACE(file.filename().string());
    const Checked c = checkAndRefute(file, Placement::Early);
    EXPECT_FALSE(c.refutation.refuted());
    EXPECT_TRUE(c.refutation.broken.empty());
    EXPECT_TRUE(c.refutation.missing.empty());
    EXPECT_TRUE(c.refutation.offendingCopies.empty());
    EXPECT_TRUE(c.refutation.changedOutputs.empty());
  }
}

TEST(DrawRefutation, TheOrderingProofsViolationsReplaceEarlysDependences) {
  Checked c = checkAndRefute(hazard("h05_view_copy_becomes_view.txt"), Placement::Pr20744_ff2892d4);
  ASSERT_EQ(c.refutation.broken.size(), 1u);
  const std::string copy = c.refutation.broken[0].offending;
  proofs::OrderingOptions options;
  options.minimality = false;
  const proofs::OrderingReport proof = proofs::proveOrdering(c.program, c.placed, c.schemas, false, options);
  ASSERT_EQ(proof.verdict, proofs::Verdict::Refuted);
  useProofViolations(proof, c.program, c.refutation);
  EXPECT_TRUE(c.refutation.fromProof);
  ASSERT_EQ(c.refutation.broken.size(), 1u);
  EXPECT_EQ(c.refutation.broken[0].first, "sum_1");
  EXPECT_EQ(c.refutation.broken[0].offending, copy);
  EXPECT_NE(c.refutation.broken[0].reason.find("precedes %sum_1"), std::string::npos) << c.refutation.broken[0].reason;
  EXPECT_NE(c.refutation.broken[0].reason.find("(Z3 ordering proof, R2)"), std::string::npos)
      << c.refutation.broken[0].reason;
  EXPECT_EQ(c.refutation.offendingCopies, std::vector<std::string>{copy});
  // The oracle's divergences stay.
  EXPECT_EQ(c.refutation.divergences.size(), 1u);

  // A copy that must precede another copy (H8 under end): the later copy is the offending one.
  Checked h8 = checkAndRefute(hazard("h08_copy_reads_other_copys_buffer.txt"), Placement::End);
  useProofViolations(proofs::proveOrdering(h8.program, h8.placed, h8.schemas, false, options), h8.program,
                     h8.refutation);
  ASSERT_EQ(h8.refutation.broken.size(), 1u);
  EXPECT_EQ(h8.refutation.broken[0].first, "copy__1");
  EXPECT_EQ(h8.refutation.broken[0].offending, "copy_");
  EXPECT_NE(h8.refutation.broken[0].reason.find("(Z3 ordering proof, C)"), std::string::npos)
      << h8.refutation.broken[0].reason;

  // Early: the proof proves it, and nothing is marked.
  Checked early = checkAndRefute(hazard("h05_view_copy_becomes_view.txt"), Placement::Early);
  useProofViolations(proofs::proveOrdering(early.program, early.placed, early.schemas, false, options), early.program,
                     early.refutation);
  EXPECT_TRUE(early.refutation.broken.empty());
  EXPECT_FALSE(early.refutation.refuted());
}

TEST(DrawRefutation, PlacementFailureIsItsOwnRefutation) {
  const Checked c = checkAndRefute(hazard("h07_no_placeholders.txt"), Placement::Pr20744_ff2892d4);
  ASSERT_TRUE(c.refutation.placementFailure.has_value());
  EXPECT_NE(c.refutation.placementFailure->find("IndexError"), std::string::npos);
}

// ---------------------------------------------------------------------------------------------
// The DOT text: golden files, and what it must say.

struct GoldenCase {
  fs::path input;
  Placement placement;
  std::string golden;
};

std::vector<GoldenCase> goldenCases() {
  return {
      {hazard("h05_view_copy_becomes_view.txt"), Placement::Early, "h05-early.dot"},
      {hazard("h05_view_copy_becomes_view.txt"), Placement::Pr20744_ff2892d4, "h05-pr20744.dot"},
      {hazard("h08_copy_reads_other_copys_buffer.txt"), Placement::End, "h08-end.dot"},
      {hazard("h08_copy_reads_other_copys_buffer.txt"), Placement::Upstream, "h08-upstream.dot"},
      {hazard("h10_ancestor_sibling_alias.txt"), Placement::Early, "h10-early.dot"},
      {corpusDir() / "regressions" / "upstream_b2_output_order.txt", Placement::Upstream, "b2-upstream.dot"},
  };
}

Drawing drawFile(const fs::path& file, Placement placement) {
  const Program program = testing::loadProgram(file);
  DrawOptions options;
  options.placement = placement;
  options.title = file.filename().string();
  return drawProgram(program, schemasFor(program, builtinSchemas()), options);
}

TEST(DrawGolden, DotText) {
  const fs::path dir = testing::sourceDir() / "tests" / "golden" / "draw";
  const bool update = std::getenv("WBCHECK_UPDATE_GOLDEN") != nullptr;
  for (const GoldenCase& c : goldenCases()) {
    SCOPED_TRACE(c.golden);
    const std::string dot = drawFile(c.input, c.placement).dot;
    if (update) {
      fs::create_directories(dir);
      std::ofstream(dir / c.golden, std::ios::binary) << dot;
      continue;
    }
    EXPECT_EQ(dot, readFile(dir / c.golden));
  }
}

TEST(DrawDot, IsTheSameEveryTime) {
  for (const GoldenCase& c : goldenCases()) {
    SCOPED_TRACE(c.golden);
    EXPECT_EQ(drawFile(c.input, c.placement).dot, drawFile(c.input, c.placement).dot);
  }
}

TEST(DrawDot, RefutedPictureHasTheDashedRedEdgeAndTheRedCopy) {
  const Drawing d = drawFile(hazard("h05_view_copy_becomes_view.txt"), Placement::Pr20744_ff2892d4);
  EXPECT_TRUE(d.refuted);
  // %sum_1 is node 5 of the pr20744-placed program, the copy node 4.
  EXPECT_NE(d.dot.find("n5 -> n4 [style=dashed, color=\"#d62728\""), std::string::npos) << d.dot;
  EXPECT_NE(d.dot.find("too early: must follow %sum_1"), std::string::npos);
  EXPECT_NE(d.dot.find("becomes a view of b_s"), std::string::npos);
  const Drawing holds = drawFile(hazard("h05_view_copy_becomes_view.txt"), Placement::Early);
  EXPECT_FALSE(holds.refuted);
  EXPECT_EQ(holds.dot.find("#d62728"), std::string::npos) << "no red where nothing is wrong";
}

TEST(DrawDot, MissingWriteBackIsAGhostAndTheBufferIsMarked) {
  const Drawing d = drawFile(hazard("h08_copy_reads_other_copys_buffer.txt"), Placement::Pr20744_ff2892d4);
  EXPECT_TRUE(d.refuted);
  EXPECT_NE(d.dot.find("missing0 ["), std::string::npos) << d.dot;
  EXPECT_NE(d.dot.find("missing write-back of b_b"), std::string::npos);
  EXPECT_NE(d.dot.find("never written back"), std::string::npos);
}

// ---------------------------------------------------------------------------------------------
// Every corpus program renders to SVG (graphviz's exit status 0), the SVG is well-formed XML,
// and it names every node.

// A small well-formedness check (no XML library): elements nest and close in order, attribute
// values are quoted, every `&` starts an entity, comments, processing instructions and the
// doctype are closed.
std::string xmlProblem(std::string_view xml) {
  std::vector<std::string> open;
  std::size_t i = 0;
  auto entityOk = [&](std::size_t at) {
    const std::size_t semi = xml.find(';', at);
    if (semi == std::string_view::npos || semi - at > 10) return false;
    const std::string_view name = xml.substr(at + 1, semi - at - 1);
    if (name == "amp" || name == "lt" || name == "gt" || name == "quot" || name == "apos") return true;
    return name.size() > 1 && name[0] == '#';
  };
  while (i < xml.size()) {
    if (xml[i] == '&') {
      if (!entityOk(i)) return "bad entity at " + std::to_string(i);
      ++i;
      continue;
    }
    if (xml[i] != '<') {
      ++i;
      continue;
    }
    if (xml.substr(i, 4) == "<!--") {
      const std::size_t end = xml.find("-->", i + 4);
      if (end == std::string_view::npos) return "unclosed comment";
      i = end + 3;
      continue;
    }
    if (xml.substr(i, 2) == "<?" || xml.substr(i, 2) == "<!") {
      const std::size_t end = xml.find('>', i);
      if (end == std::string_view::npos) return "unclosed declaration";
      i = end + 1;
      continue;
    }
    const bool closing = i + 1 < xml.size() && xml[i + 1] == '/';
    std::size_t j = i + (closing ? 2 : 1);
    const std::size_t nameStart = j;
    while (j < xml.size() && (std::isalnum(static_cast<unsigned char>(xml[j])) || xml[j] == ':' || xml[j] == '_' ||
                              xml[j] == '-' || xml[j] == '.'))
      ++j;
    const std::string name(xml.substr(nameStart, j - nameStart));
    if (name.empty()) return "empty tag name at " + std::to_string(i);
    bool selfClosing = false;
    while (j < xml.size() && xml[j] != '>') {
      if (xml[j] == '"' || xml[j] == '\'') {
        const std::size_t end = xml.find(xml[j], j + 1);
        if (end == std::string_view::npos) return "unclosed attribute in <" + name + ">";
        for (std::size_t k = j + 1; k < end; ++k)
          if (xml[k] == '<' || (xml[k] == '&' && !entityOk(k))) return "bad attribute text in <" + name + ">";
        j = end + 1;
        continue;
      }
      if (xml[j] == '=' && j + 1 < xml.size() && xml[j + 1] != '"' && xml[j + 1] != '\'')
        return "unquoted attribute in <" + name + ">";
      if (xml[j] == '/' && j + 1 < xml.size() && xml[j + 1] == '>') selfClosing = true;
      ++j;
    }
    if (j >= xml.size()) return "unclosed tag <" + name + ">";
    if (closing) {
      if (open.empty() || open.back() != name)
        return "</" + name + "> closes <" + (open.empty() ? std::string("nothing") : open.back()) + ">";
      open.pop_back();
    } else if (!selfClosing) {
      open.push_back(name);
    }
    i = j + 1;
  }
  if (!open.empty()) return "<" + open.back() + "> is never closed";
  return "";
}

TEST(DrawXmlCheck, FindsWhatIsMalformed) {
  EXPECT_EQ(xmlProblem("<?xml version=\"1.0\"?><svg a=\"1\"><g><text>x &amp; y</text></g><path d=\"M\"/></svg>"), "");
  EXPECT_NE(xmlProblem("<svg><g></svg>"), "");
  EXPECT_NE(xmlProblem("<svg><text>a & b</text></svg>"), "");
  EXPECT_NE(xmlProblem("<svg a=1></svg>"), "");
  EXPECT_NE(xmlProblem("<svg>"), "");
}

// The corpus files: every program of corpus/ that reads and validates (crashes/ holds inputs
// that once crashed wbcheck, each a valid program too).
std::vector<fs::path> corpusPrograms() { return testing::filesUnder(corpusDir()); }

class DrawCorpus : public ::testing::TestWithParam<fs::path> {};

TEST_P(DrawCorpus, RendersToSvgNamingEveryNode) {
  const fs::path file = GetParam();
  const Program program = testing::loadProgram(file);
  ASSERT_FALSE(program.graph.nodes.empty());
  const SchemaTable schemas = schemasFor(program, builtinSchemas());
  // The placement the file is about (a finding's header), and early.
  std::vector<Placement> placements{Placement::Early};
  const campaign::ArtifactHeader header = campaign::parseArtifactHeader(readFile(file));
  if (const std::optional<Placement> p = placementFromString(header.placement); p && *p != Placement::Early)
    placements.push_back(*p);
  const fs::path dir = fs::temp_directory_path() / ("wbcheck_draw_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  for (Placement placement : placements) {
    SCOPED_TRACE(toString(placement));
    DrawOptions options;
    options.placement = placement;
    options.seed = header.seed.value_or(0);
    options.title = file.filename().string();
    const Drawing drawing = drawProgram(program, schemas, options);
    const fs::path svg = dir / (file.stem().string() + "-" + std::string(toString(placement)) + ".svg");
    const std::optional<std::string> error = renderWithDot(drawing.dot, "svg", svg.string());
    ASSERT_FALSE(error.has_value()) << *error;
    const std::string text = readFile(svg);
    EXPECT_EQ(xmlProblem(text), "");
    for (const Node& node : program.graph.nodes) {
      if (node.isOutput()) continue;
      EXPECT_NE(text.find("%" + node.name + "<"), std::string::npos) << "the SVG does not name %" << node.name;
    }
  }
  fs::remove_all(dir);
}

std::string testName(const ::testing::TestParamInfo<fs::path>& info) {
  std::string name = fs::relative(info.param, corpusDir()).replace_extension().string();
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(Corpus, DrawCorpus, ::testing::ValuesIn(corpusPrograms()), testName);

// ---------------------------------------------------------------------------------------------
// The command.

struct CommandRun {
  int exitCode = -1;
  std::string err;
};

CommandRun run(const std::string& command) {
  const fs::path err = fs::temp_directory_path() / ("wbcheck_draw_err_" + std::to_string(::getpid()));
  const int status = std::system((command + " > /dev/null 2> " + err.string()).c_str());
  CommandRun r{WIFEXITED(status) ? WEXITSTATUS(status) : -1, readFile(err)};
  fs::remove(err);
  return r;
}

fs::path scratch(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("wbcheck_draw_cli_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

TEST(DrawCli, ExitCodesFollowTheVerdict) {
  const std::string wbcheck = WBCHECK_BINARY;
  const std::string h5 = hazard("h05_view_copy_becomes_view.txt").string();
  const fs::path dir = scratch("exit");
  EXPECT_EQ(run(wbcheck + " draw " + h5 + " --dot " + (dir / "a.dot").string()).exitCode, 0);
  EXPECT_EQ(readFile(dir / "a.dot"), drawFile(h5, Placement::Early).dot);  // titled with the file's name
  EXPECT_EQ(run(wbcheck + " draw " + h5 + " --placement pr20744 --svg " + (dir / "b.svg").string()).exitCode, 1);
  EXPECT_EQ(xmlProblem(readFile(dir / "b.svg")), "");
  EXPECT_EQ(run(wbcheck + " draw " + h5 + " --placement nonsense").exitCode, 2);
  EXPECT_EQ(run(wbcheck + " draw " + (dir / "missing.txt").string()).exitCode, 2);
  EXPECT_EQ(run(wbcheck + " draw " + h5 + " --svg a.svg --dot a.dot").exitCode, 2);
  fs::remove_all(dir);
}

TEST(DrawCli, ReadsStandardInputOnce) {
  // The header (`# placement:`) and the program come from one read of standard input.
  const std::string wbcheck = WBCHECK_BINARY;
  const fs::path dir = scratch("stdin");
  const std::string h5 = hazard("h05_view_copy_becomes_view.txt").string();
  EXPECT_EQ(run(wbcheck + " draw - --dot " + (dir / "a.dot").string() + " < " + h5).exitCode, 0);
  EXPECT_NE(readFile(dir / "a.dot").find("digraph"), std::string::npos);
  const fs::path finding = dir / "finding.txt";
  ASSERT_EQ(run(wbcheck + " shrink " + h5 + " --placement pr20744@ff2892d4 --no-draw --out " + finding.string()).exitCode, 0);
  EXPECT_EQ(run(wbcheck + " draw - --dot " + (dir / "b.dot").string() + " < " + finding.string()).exitCode, 1);
  EXPECT_EQ(run(wbcheck + " shrink - --no-draw --out " + (dir / "again.txt").string() + " < " + finding.string()).exitCode, 0);
  fs::remove_all(dir);
}

TEST(DrawCli, SvgWithoutDotOnPathIsAClearUsageError) {
  const std::string wbcheck = WBCHECK_BINARY;
  const fs::path dir = scratch("nodot");
  const CommandRun r = run("PATH=" + dir.string() + " " + wbcheck + " draw " + hazard("h05_view_copy_becomes_view.txt").string() +
                    " --svg " + (dir / "x.svg").string());
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("graphviz's `dot` is not on PATH"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "x.svg"));
  // --dot needs no graphviz.
  EXPECT_EQ(run("PATH=" + dir.string() + " " + wbcheck + " draw " + hazard("h05_view_copy_becomes_view.txt").string() +
                " --dot " + (dir / "x.dot").string())
                .exitCode,
            0);
  fs::remove_all(dir);
}

TEST(DrawCli, ShrinkWritesThePictureBesideTheFindingAndNamesIt) {
  const std::string wbcheck = WBCHECK_BINARY;
  const fs::path dir = scratch("shrink");
  const std::string h5 = hazard("h05_view_copy_becomes_view.txt").string();
  const fs::path out = dir / "h5.txt";
  ASSERT_EQ(run(wbcheck + " shrink " + h5 + " --placement pr20744 --out " + out.string()).exitCode, 0);
  const fs::path svg = dir / "h5.svg";
  ASSERT_TRUE(fs::exists(svg));
  EXPECT_EQ(xmlProblem(readFile(svg)), "");
  EXPECT_NE(readFile(svg).find("too early"), std::string::npos);
  EXPECT_NE(readFile(out).find("# picture: " + svg.string()), std::string::npos) << readFile(out);
  // --no-draw: neither the picture nor its header line.
  const fs::path plain = dir / "plain.txt";
  ASSERT_EQ(run(wbcheck + " shrink " + h5 + " --placement pr20744 --no-draw --out " + plain.string()).exitCode, 0);
  EXPECT_FALSE(fs::exists(dir / "plain.svg"));
  EXPECT_EQ(readFile(plain).find("# picture:"), std::string::npos);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace wb::draw
