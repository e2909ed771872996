// tests/hazards_test.cpp: every file of corpus/hazards/ meets the expectations its header
// states in `# expect` lines (docs/hazard-expectations.md), one test per file named after it
// (ctest -R 'HazardFile.*h05'): where each placement puts each copy and why, the outputs, the
// skipped write-backs or the failure; the oracle's verdict per placement and its findings
// about the program; the campaign's classification where a line asks for it. Adding a hazard
// is adding a file.
//
// Each file must say what every placement does and what the oracle says of it; the message of
// a failure gives the lines the file would need, in its own syntax.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "campaign/campaign.h"
#include "core/placement.h"
#include "oracle/oracle.h"
#include "tests/hazard_expectations.h"
#include "tests/testing.h"

namespace wb {
namespace {

using testing::ExpectKind;
using testing::Expectation;

// The statement as a line of a file: "# expect early copy_: R2 after %sum_1: ...".
std::string asLine(const Expectation& e) {
  std::string head;
  switch (e.kind) {
    case ExpectKind::Placed:
    case ExpectKind::Copy:
    case ExpectKind::Skip:
      head = std::string(toString(*e.placement)) + (e.subject.empty() ? "" : " " + e.subject);
      break;
    case ExpectKind::Oracle: head = "oracle " + std::string(toString(*e.placement)); break;
    case ExpectKind::OracleFindings: head = "oracle findings"; break;
    case ExpectKind::Finding: head = "finding " + std::string(toString(*e.placement)); break;
  }
  return "# expect " + head + ": " + e.value;
}

std::string asLines(const std::vector<Expectation>& statements) {
  std::string out;
  for (const Expectation& e : statements) out += "  " + asLine(e) + "\n";
  return out.empty() ? "  (none)\n" : out;
}

// ---------------------------------------------------------------------------------------------
// What happens, as statements.

// The body of a placed program (placeholders and output left out), each copy_ node as
// `name[buffer<-value]`, then the returned values; the output specs' names when they differ.
std::string placedShape(const Program& p) {
  std::string out;
  for (const Node& n : p.graph.nodes) {
    if (n.isPlaceholder() || n.isOutput()) continue;
    if (!out.empty()) out += ' ';
    out += n.name;
    if (n.target == "aten::copy_" && n.args.size() == 2) out += "[" + testing::nameOf(p.graph, n.args[0]) + "<-" + testing::nameOf(p.graph, n.args[1]) + "]";
  }
  auto tuple = [](const std::vector<std::string>& names) {
    std::string t = "(";
    for (const std::string& name : names) t += (t.size() > 1 ? ", " : "") + name;
    return t + ")";
  };
  std::vector<std::string> returned, specs;
  for (const Arg& a : p.graph.returnedValues()) returned.push_back(a.isRef() ? testing::nameOf(p.graph, a) : "<" + a.text + ">");
  for (const OutputSpec& s : p.signature.outputs) specs.push_back(s.name);
  out += (out.empty() ? "-> " : " -> ") + tuple(returned);
  if (specs != returned) out += " specs " + tuple(specs);
  return out;
}

// What `placement` makes of `program`, and the invariants every placed hazard keeps:
// placeholders first and unchanged, the output last, a failure leaves the program as it was,
// each explanation names its copy node, its buffer and value, and the node it follows.
std::vector<Expectation> placedStatements(const Program& program, Placement placement, const SchemaTable& schemas) {
  SCOPED_TRACE(toString(placement));
  const PlacedProgram placed = place(program, placement, schemas);
  std::vector<Expectation> out;
  if (placed.failure) {
    EXPECT_TRUE(placed.program == program) << "a failed placement changed the program";
    EXPECT_TRUE(placed.copies.empty());
    out.push_back({ExpectKind::Placed, placement, "fails", *placed.failure, 0});
    return out;
  }
  const Graph& g = placed.program.graph;
  std::vector<std::string> before, after;
  for (const Node& n : program.graph.nodes)
    if (n.isPlaceholder()) before.push_back(n.name);
  for (std::size_t i = 0; i < g.nodes.size() && g.nodes[i].isPlaceholder(); ++i) after.push_back(g.nodes[i].name);
  EXPECT_EQ(after, before) << "the placeholders are no longer first and unchanged";
  EXPECT_TRUE(!g.nodes.empty() && g.nodes.back().isOutput()) << "the output is not last";
  out.push_back({ExpectKind::Placed, placement, "", placedShape(placed.program), 0});
  for (const CopyExplanation& e : placed.copies) {
    const Node* copy = g.find(e.copyNode);
    EXPECT_NE(copy, nullptr) << e.copyNode;
    if (copy && copy->args.size() == 2) {
      EXPECT_EQ(testing::nameOf(g, copy->args[0]), e.buffer) << e.copyNode;
      EXPECT_EQ(testing::nameOf(g, copy->args[1]), e.value) << e.copyNode;
    }
    // The explanation names the node the copy follows: "after %NODE..." (none at the end).
    std::string binding;
    if (e.text.starts_with("after %")) {
      binding = e.text.substr(7);
      binding = binding.substr(0, binding.find_first_of(" :"));
    }
    EXPECT_EQ(e.bindingNode, binding) << e.copyNode << ": " << e.text;
    out.push_back({ExpectKind::Copy, placement, e.copyNode, std::string(toString(e.rule)) + " " + e.text, 0});
  }
  for (const std::string& skipped : placed.skipped) out.push_back({ExpectKind::Skip, placement, "skips", skipped, 0});
  return out;
}

// "holds", "bug [copy-views]", "bug [alias-views]", "bug [both]" or "fails".
std::string oracleVerdict(const oracle::CheckReport& r) {
  if (r.placementFailure) return "fails";
  const oracle::ViewModeSet modes = oracle::bugViewModes(r);
  if (modes == oracle::ViewModeSet::None) return "holds";
  return "bug [" + std::string(oracle::toString(modes)) + "]";
}

// "none", or "S_seq != S_par [alias-views], S_par != F [both]".
std::string oracleFindings(const oracle::CheckReport& r) {
  std::string out;
  for (const oracle::MismatchKind kind : {oracle::MismatchKind::SeqDiffersFromPar, oracle::MismatchKind::ParDiffersFromValue}) {
    bool copy = false, alias = false;
    for (const oracle::Mismatch& m : r.findings)
      if (m.kind == kind) (m.viewMode == oracle::ViewMode::CopyViews ? copy : alias) = true;
    if (!copy && !alias) continue;
    const oracle::ViewModeSet modes = copy && alias ? oracle::ViewModeSet::Both
                                      : copy        ? oracle::ViewModeSet::CopyViews
                                                    : oracle::ViewModeSet::AliasViews;
    out += (out.empty() ? "" : ", ") + std::string(oracle::toString(kind)) + " [" + std::string(oracle::toString(modes)) + "]";
  }
  return out.empty() ? "none" : out;
}

// The campaign's key for a check with `placement` (oracle seed 0), as `describe` puts it
// without the placement: "placement != S_par [alias-views] on user output: H5 ...", or "none".
std::string campaignFinding(const Program& program, Placement placement, const SchemaTable& schemas) {
  oracle::CheckOptions options;
  options.placement = placement;
  const std::optional<campaign::FindingKey> key =
      campaign::classifyFinding(program, oracle::check(program, options, schemas), schemas);
  if (!key) return "none";
  const std::string described = campaign::describe(*key);
  const std::string prefix = std::string(toString(placement)) + ": ";
  EXPECT_TRUE(described.starts_with(prefix)) << described;
  return described.substr(prefix.size());
}

// ---------------------------------------------------------------------------------------------

std::vector<std::filesystem::path> hazardFiles() { return testing::filesUnder(testing::corpusDir() / "hazards"); }

class HazardFile : public ::testing::TestWithParam<std::filesystem::path> {};

// Whether an actual statement meets an expected one: the same kind, placement and subject, and
// the same value; a copy's explanation and a skipped write-back's words may stop early, at the
// end of a word (the placement's words must begin with the expected ones).
bool meets(const Expectation& actual, const Expectation& expected) {
  if (actual.kind != expected.kind || actual.placement != expected.placement || actual.subject != expected.subject)
    return false;
  if (actual.value == expected.value) return true;
  if (expected.kind != ExpectKind::Copy && expected.kind != ExpectKind::Skip) return false;
  const std::string& a = actual.value;
  const std::string& e = expected.value;
  return a.starts_with(e) && std::string_view(" :(,").find(a[e.size()]) != std::string_view::npos;
}

// Expected and actual statements, in the order a file lists them: per placement the program,
// its copies in graph order, its skipped write-backs.
void expectSame(std::vector<Expectation> expected, const std::vector<Expectation>& actual, const std::string& what) {
  std::stable_sort(expected.begin(), expected.end(),
                   [](const Expectation& a, const Expectation& b) { return a.kind < b.kind; });
  bool same = expected.size() == actual.size();
  for (std::size_t i = 0; same && i < expected.size(); ++i) same = meets(actual[i], expected[i]);
  std::string lines;
  for (const Expectation& e : expected) lines += " " + std::to_string(e.line);
  EXPECT_TRUE(same) << what << " (file lines" << (lines.empty() ? " none" : lines) << ")\nexpected:\n"
                    << asLines(expected) << "actual:\n" << asLines(actual);
}

TEST_P(HazardFile, MeetsItsExpectations) {
  const std::filesystem::path path = GetParam();
  const std::string text = testing::readFile(path);
  const testing::ParsedExpectations parsed = testing::parseExpectations(text, path.string());
  for (const std::string& error : parsed.errors) ADD_FAILURE() << error;

  // The file is exactly what the writer prints, after its comment header.
  std::size_t body = 0;
  while (body < text.size() && text[body] == '#') body = std::min(text.find('\n', body), text.size() - 1) + 1;
  const Program program = testing::loadProgram(path);
  ASSERT_FALSE(program.graph.nodes.empty());
  EXPECT_EQ(writeProgram(program), text.substr(body)) << "not canonical form 1 after the header";
  const SchemaTable schemas = schemasFor(program, builtinSchemas());

  auto statementsOf = [&](auto keep) {
    std::vector<Expectation> out;
    std::copy_if(parsed.statements.begin(), parsed.statements.end(), std::back_inserter(out), keep);
    return out;
  };
  for (Placement placement : allPlacements()) {
    const std::string name(toString(placement));
    expectSame(statementsOf([&](const Expectation& e) {
                 return e.placement == placement &&
                        (e.kind == ExpectKind::Placed || e.kind == ExpectKind::Copy || e.kind == ExpectKind::Skip);
               }),
               placedStatements(program, placement, schemas), name + " places the copies");

    oracle::CheckOptions options;
    options.placement = placement;
    const oracle::CheckReport report = oracle::check(program, options, schemas);
    ASSERT_NE(report.verdict, oracle::Verdict::Error) << report.error;
    EXPECT_EQ(report.tier, oracle::Tier::Element) << report.tierReason;
    const std::string verdict = oracleVerdict(report);
    EXPECT_EQ(report.exitCode(), verdict == "holds" ? 0 : 1);
    expectSame(statementsOf([&](const Expectation& e) { return e.kind == ExpectKind::Oracle && e.placement == placement; }),
               {{ExpectKind::Oracle, placement, "", verdict, 0}}, "the oracle's verdict on " + name);
    if (placement == Placement::Early) {
      expectSame(statementsOf([](const Expectation& e) { return e.kind == ExpectKind::OracleFindings; }),
                 {{ExpectKind::OracleFindings, std::nullopt, "", oracleFindings(report), 0}},
                 "the oracle's findings about the program");
    }

    const std::vector<Expectation> finding =
        statementsOf([&](const Expectation& e) { return e.kind == ExpectKind::Finding && e.placement == placement; });
    if (!finding.empty()) {
      expectSame(finding, {{ExpectKind::Finding, placement, "", campaignFinding(program, placement, schemas), 0}},
                 "the campaign's finding with " + name);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(corpus, HazardFile, ::testing::ValuesIn(hazardFiles()),
                         [](const ::testing::TestParamInfo<std::filesystem::path>& info) {
                           std::string name = info.param.stem().string();
                           for (char& c : name)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return name;
                         });

// ---------------------------------------------------------------------------------------------
// The grammar.

TEST(HazardExpectations, EveryFormReadsIntoStatements) {
  const testing::ParsedExpectations parsed = testing::parseExpectations(
      "# A hazard, in words.\n"
      "# expect early, end: mul copy_[b_s<-mul] -> (copy_)\n"
      "# expect early copy_: R1 after %mul: the value is defined here\n"
      "# expected: prose, not a statement\n"
      "# expect upstream skips: B1 lineage\n"
      "# expect pr20744@ff2892d4 fails: IndexError: list index out of range\n"
      "# expect oracle early, pr20744@ff2892d4, pr20744: bug [alias-views]\n"
      "# expect oracle findings: S_seq != S_par [both]\n"
      "# expect finding draft13857: none\n"
      "ExportedProgram:\n"
      "# expect early: after the header, not read\n",
      "f.txt");
  EXPECT_TRUE(parsed.errors.empty());
  const std::vector<Expectation> want = {
      {ExpectKind::Placed, Placement::Early, "", "mul copy_[b_s<-mul] -> (copy_)", 2},
      {ExpectKind::Placed, Placement::End, "", "mul copy_[b_s<-mul] -> (copy_)", 2},
      {ExpectKind::Copy, Placement::Early, "copy_", "R1 after %mul: the value is defined here", 3},
      {ExpectKind::Skip, Placement::Upstream, "skips", "B1 lineage", 5},
      {ExpectKind::Placed, Placement::Pr20744_ff2892d4, "fails", "IndexError: list index out of range", 6},
      {ExpectKind::Oracle, Placement::Early, "", "bug [alias-views]", 7},
      {ExpectKind::Oracle, Placement::Pr20744_ff2892d4, "", "bug [alias-views]", 7},
      {ExpectKind::Oracle, kLatestPr20744, "", "bug [alias-views]", 7},
      {ExpectKind::OracleFindings, std::nullopt, "", "S_seq != S_par [both]", 8},
      {ExpectKind::Finding, Placement::Draft13857, "", "none", 9},
  };
  EXPECT_EQ(parsed.statements, want);
  for (const Expectation& e : want) {
    const testing::ParsedExpectations again = testing::parseExpectations(asLine(e) + "\n", "g.txt");
    ASSERT_EQ(again.statements.size(), 1u) << asLine(e);
    EXPECT_EQ(again.statements[0].value, e.value);
  }
}

TEST(HazardExpectations, ExplanationsMayStopAtTheEndOfAWord) {
  const Expectation copy{ExpectKind::Copy, Placement::Early, "copy_", "R2 after %sum_1: reads b_s through %view_copy", 0};
  auto with = [](Expectation e, std::string value) {
    e.value = std::move(value);
    return e;
  };
  EXPECT_TRUE(meets(copy, copy));
  EXPECT_TRUE(meets(copy, with(copy, "R2 after %sum_1")));
  EXPECT_TRUE(meets(copy, with(copy, "R2")));
  EXPECT_FALSE(meets(copy, with(copy, "R2 after %sum")));  // a name cut short
  EXPECT_FALSE(meets(copy, with(copy, "R1 after %sum_1")));
  EXPECT_FALSE(meets(copy, with(copy, copy.value + " too")));
  Expectation other = copy;
  other.subject = "copy__1";
  EXPECT_FALSE(meets(copy, other));
  // Layouts, verdicts and findings are whole.
  const Expectation placed{ExpectKind::Placed, Placement::Early, "", "mul add copy_[b_s<-mul] -> (copy_, add)", 0};
  EXPECT_FALSE(meets(placed, with(placed, "mul add")));
  const Expectation oracle{ExpectKind::Oracle, Placement::End, "", "bug [both]", 0};
  EXPECT_FALSE(meets(oracle, with(oracle, "bug")));
}

TEST(HazardExpectations, ABadLineIsAnErrorWithItsPlace) {
  for (const char* line : {"# expect earliest: x", "# expect early x", "# expect early: ", "# expect early, : x",
                           "# expect early copy_ extra: x", "# expect oracle early copy_: holds",
                           "# expect oracle findings early: none", "# expect : x"}) {
    const testing::ParsedExpectations parsed =
        testing::parseExpectations(std::string("# words\n") + line + "\n", "f.txt");
    EXPECT_TRUE(parsed.statements.empty()) << line;
    ASSERT_EQ(parsed.errors.size(), 1u) << line;
    EXPECT_TRUE(parsed.errors[0].starts_with("f.txt:2: ")) << parsed.errors[0];
  }
}

}  // namespace
}  // namespace wb
