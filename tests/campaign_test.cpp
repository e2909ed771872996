// tests/campaign_test.cpp: the campaign library (campaign/) and the `wbcheck fuzz` and
// `wbcheck shrink` commands: shrinking keeps the key and early holds (also through a slice
// that selects nothing), determinism, artifacts and records round-trip, deduplication, which
// findings get shrunk, a worker and its messages, a run's plan, totals and summary, exit codes.
// How the campaign classifies the hazard programs is stated in the files of corpus/hazards/
// (`# expect finding`, tests/hazards_test.cpp).
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <stdexcept>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <set>

#include "campaign/campaign.h"
#include "campaign/fuzz_run.h"
#include "campaign/shrink_policy.h"
#include "campaign/worker.h"
#include "core/validate.h"
#include "tests/broken_early.h"
#include "tests/testing.h"

namespace wb::campaign {
namespace {

using wb::testing::corpusDir;
using wb::testing::loadProgram;
using wb::testing::readFile;

const SchemaTable& builtins() {
  static const SchemaTable table = builtinSchemas();  // immutable after initialisation
  return table;
}

oracle::CheckReport checkWith(const Program& p, Placement placement, std::uint64_t seed = 0) {
  oracle::CheckOptions options;
  options.placement = placement;
  options.seed = seed;
  return oracle::check(p, options, schemasFor(p, builtins()));
}

TEST(Campaign, ShrinkingKeepsTheKeyAndEarlyHolds) {
  for (const char* file : {"h05_view_copy_becomes_view.txt", "h10_ancestor_sibling_alias.txt", "h04_list_argument_write.txt"}) {
    const Program p = loadProgram(corpusDir() / "hazards" / file);
    const FindingKey key = *classifyFinding(p, checkWith(p, Placement::Pr20744_ff2892d4), schemasFor(p, builtins()));
    const ShrunkFinding s = shrinkFinding(p, key, 0, 3, builtins());
    ASSERT_TRUE(s.reproduced) << file;
    EXPECT_TRUE(validate(s.program).empty());
    EXPECT_LE(s.bodyNodesAfter, s.bodyNodesBefore);
    EXPECT_EQ(s.key.hazard, key.hazard) << file << ": " << describe(s.key);
    EXPECT_TRUE(reproducesFinding(s.program, key, 0, 3, builtins()));
    EXPECT_EQ(checkWith(s.program, Placement::Early).verdict, oracle::Verdict::Holds);
  }
}

// A slice whose constant bounds select nothing (the reducer makes these when it shrinks a
// slice's end to 0), read by an index op: the element tier refuses to index the empty
// dimension and the check runs in the storage tier, so such a program is a finding like any
// other and shrinks (it once crashed the oracle: corpus/regressions/crashes/).
TEST(Campaign, AFindingThroughASliceThatSelectsNothingReproducesAndShrinks) {
  const Result<Program> read = readProgram(R"(ExportedProgram:
    class GraphModule(torch.nn.Module):
        def forward(self, b_s: "f32[4]", x: "f32[4]", i: "i64[2]"):
            mul: "f32[4]" = torch.ops.aten.mul.Tensor(x, 2)
            view_copy: "f32[2, 2]" = torch.ops.aten.view_copy.default(b_s, [2, 2])
            sum_1: "f32[]" = torch.ops.aten.sum.default(view_copy)
            slice_copy: "f32[0]" = torch.ops.aten.slice_copy.Tensor(x, 0, 0, 0)
            index_select: "f32[2]" = torch.ops.aten.index_select.default(slice_copy, 0, i)
            return (mul, sum_1, index_select)

Graph signature:
    # inputs
    b_s: BUFFER target='s' persistent=True
    x: USER_INPUT
    i: USER_INPUT

    # outputs
    mul: BUFFER_MUTATION target='s'
    sum_1: USER_OUTPUT
    index_select: USER_OUTPUT
)");
  ASSERT_TRUE(read.ok()) << formatAll(read.errors);
  const Program& p = *read;
  const oracle::CheckReport report = checkWith(p, Placement::Pr20744_ff2892d4);
  EXPECT_EQ(report.tier, oracle::Tier::Storage) << report.tierReason;
  const std::optional<FindingKey> key = classifyFinding(p, report, schemasFor(p, builtins()));
  ASSERT_TRUE(key) << oracle::formatReport(report);
  EXPECT_EQ(key->hazard, HazardClass::H5ViewCopy);
  EXPECT_TRUE(reproducesFinding(p, *key, 0, 3, builtins()));
  const ShrunkFinding s = shrinkFinding(p, *key, 0, 3, builtins());
  EXPECT_TRUE(s.reproduced);
  EXPECT_LT(s.bodyNodesAfter, s.bodyNodesBefore);
  EXPECT_EQ(s.key.hazard, HazardClass::H5ViewCopy) << describe(s.key);
}

TEST(Campaign, RunCaseIsDeterministicAndSeedStreamsDiffer) {
  CampaignOptions options;
  options.placement = Placement::Pr20744_ff2892d4;
  const gen::Generator generator(campaignGenOptions(options));
  for (std::uint64_t i = 0; i < 20; ++i) {
    const std::uint64_t seed = caseSeed(1, 0, i);
    const CaseResult a = runCase(seed, options, generator);
    const CaseResult b = runCase(seed, options, generator);
    EXPECT_TRUE(a.program == b.program);
    EXPECT_EQ(a.finding, b.finding);
    EXPECT_TRUE(validate(a.program).empty());
  }
  EXPECT_NE(caseSeed(1, 0, 0), caseSeed(1, 1, 0));
  EXPECT_NE(caseSeed(1, 0, 0), caseSeed(2, 0, 0));
  EXPECT_NE(caseSeed(1, 0, 0), caseSeed(1, 0, 1));
}

TEST(Campaign, EarlyHoldsOnGeneratedCases) {
  CampaignOptions options;
  const gen::Generator generator(campaignGenOptions(options));
  for (std::uint64_t i = 0; i < 150; ++i) {
    const CaseResult r = runCase(caseSeed(7, 0, i), options, generator);
    EXPECT_FALSE(r.finding) << describe(*r.finding);
  }
}

TEST(Campaign, ArtifactHeaderAndRecordRoundTrip) {
  const Program p = loadProgram(corpusDir() / "hazards" / "h05_view_copy_becomes_view.txt");
  const FindingKey key = *classifyFinding(p, checkWith(p, Placement::Pr20744_ff2892d4, 42), schemasFor(p, builtins()));
  const ShrunkFinding s = shrinkFinding(p, key, 42, 3, builtins());
  const std::string text = formatArtifact(s, ArtifactInfo{"0.1.0", 42, "wbcheck fuzz --seed 1", "realistic", ""}, "F.txt");
  const ArtifactHeader h = parseArtifactHeader(text);
  EXPECT_EQ(h.placement, "pr20744@ff2892d4");
  EXPECT_EQ(h.verdict, kPlacementDiverges);
  EXPECT_EQ(h.viewModes, "alias-views");
  EXPECT_EQ(h.hazard, hazardLabel(HazardClass::H5ViewCopy));
  EXPECT_EQ(h.seed, 42u);
  EXPECT_NE(text.find("# replay: wbcheck check F.txt --placement pr20744@ff2892d4 --seed 42"), std::string::npos);
  EXPECT_EQ(placementFromString(h.placement), Placement::Pr20744_ff2892d4);
  Result<Program> back = readProgram(text);
  ASSERT_TRUE(back.ok());
  EXPECT_TRUE(*back == s.program);

  FindingRecord record{s.key, shapeOf(s.program), 42, 1.5, s.bodyNodesAfter, 3, text};
  const std::optional<FindingRecord> decoded = decodeRecord(encodeRecord(record));
  ASSERT_TRUE(decoded);
  EXPECT_EQ(decoded->key, record.key);
  EXPECT_EQ(decoded->shape, record.shape);
  EXPECT_EQ(decoded->artifact, record.artifact);
  EXPECT_EQ(decoded->count, 3u);
  EXPECT_FALSE(decodeRecord("placement=pr20744\n"));
  EXPECT_EQ(artifactFileName(s.key, record.shape).rfind("pr20744@ff2892d4_h5_view_copy_", 0), 0u);
  EXPECT_EQ(text.find("# picture:"), std::string::npos);  // none asked for
}

TEST(Campaign, ArtifactHeaderNamesItsPicture) {
  const Program p = loadProgram(corpusDir() / "hazards" / "h05_view_copy_becomes_view.txt");
  const FindingKey key = *classifyFinding(p, checkWith(p, Placement::Pr20744_ff2892d4, 42), schemasFor(p, builtins()));
  const ShrunkFinding s = shrinkFinding(p, key, 42, 3, builtins());
  EXPECT_EQ(pictureFileName("out/pr20744_h5_view_copy_0badf00d.txt"), "out/pr20744_h5_view_copy_0badf00d.svg");
  EXPECT_EQ(pictureFileName("small"), "small.svg");
  const ArtifactInfo info{"0.1.0", 42, "", "", pictureFileName("out/F.txt")};
  const std::string text = formatArtifact(s, info, "out/F.txt");
  EXPECT_NE(text.find("# picture: out/F.svg (redraw: wbcheck draw out/F.txt --svg out/F.svg)\n"), std::string::npos)
      << text;
  EXPECT_TRUE(readProgram(text).ok());
}

TEST(Campaign, FindingTableDeduplicatesByClassAndShape) {
  FindingTable table;
  FindingKey key{Placement::Pr20744_ff2892d4, std::string(kPlacementDiverges), oracle::ViewModeSet::Both, "buffer s",
                 HazardClass::H4ListArgument, ""};
  EXPECT_TRUE(table.add({key, "shape-a", 1, 2.0, 3, 1, ""}));
  key.target = "buffer t";  // another buffer, same shape: the same finding
  EXPECT_FALSE(table.add({key, "shape-a", 2, 3.0, 3, 1, ""}));
  EXPECT_TRUE(table.add({key, "shape-b", 3, 1.0, 2, 1, ""}));
  EXPECT_EQ(table.records().size(), 2u);
  EXPECT_EQ(table.records()[0].count, 2u);
  EXPECT_TRUE(table.hasAll({HazardClass::H4ListArgument}));
  EXPECT_FALSE(table.hasAll({HazardClass::H4ListArgument, HazardClass::H5ViewCopy}));
  const std::string summary = table.formatSummary();
  EXPECT_NE(summary.find("H4 list-argument write"), std::string::npos);
  EXPECT_NE(summary.find("1.00"), std::string::npos);  // the earliest of the class
}

TEST(Campaign, EveryExpectedClassHasAnIdAndLabel) {
  for (HazardClass h : allHazardClasses()) {
    EXPECT_EQ(hazardFromId(hazardId(h)), h);
    EXPECT_FALSE(hazardLabel(h).empty());
  }
  EXPECT_TRUE(expectedHazards(Placement::Early).empty());
  EXPECT_TRUE(expectedHazards(Placement::End).empty());
}

TEST(Campaign, EachVersionOfThePrIsExpectedToHaveTheBugsItHasNotFixed) {
  auto has = [](Placement p, HazardClass h) {
    const std::vector<HazardClass> expected = expectedHazards(p);
    return std::find(expected.begin(), expected.end(), h) != expected.end();
  };
  // Upstream's lineage check and output layout, its end order as the fallback, the view_copy
  // blind spot and the forward-only walk: in every version.
  for (Placement p : {Placement::Pr20744_ff2892d4, Placement::Pr20744_b6457f4, Placement::Pr20744_82a8901})
    for (HazardClass h : {HazardClass::B1OtherLineage, HazardClass::B2OutputOrder, HazardClass::B3H8CopyOrder,
                          HazardClass::H5ViewCopy, HazardClass::H10AncestorSibling})
      EXPECT_TRUE(has(p, h)) << toString(p) << " " << hazardLabel(h);
  // b6457f4 fixed the IndexError and list arguments; 82a8901 the storage sharing.
  EXPECT_TRUE(has(Placement::Pr20744_ff2892d4, HazardClass::H7NoPlaceholders));
  EXPECT_TRUE(has(Placement::Pr20744_ff2892d4, HazardClass::H4ListArgument));
  for (Placement p : {Placement::Pr20744_b6457f4, Placement::Pr20744_82a8901}) {
    EXPECT_FALSE(has(p, HazardClass::H7NoPlaceholders)) << toString(p);
    EXPECT_FALSE(has(p, HazardClass::H4ListArgument)) << toString(p);
  }
  EXPECT_TRUE(has(Placement::Pr20744_b6457f4, HazardClass::H6ShareAlloc));
  EXPECT_FALSE(has(Placement::Pr20744_82a8901, HazardClass::H6ShareAlloc));
  EXPECT_EQ(expectedHazards(kLatestPr20744).size(), 5u);
}

// ---------------------------------------------------------------------------------------------
// Which findings a worker shrinks.

FindingKey keyWith(HazardClass hazard, std::string target = "buffer s") {
  return {Placement::Pr20744_ff2892d4, std::string(kPlacementDiverges), oracle::ViewModeSet::Both, std::move(target), hazard, ""};
}

TEST(ShrinkPolicy, TheFirstFindingsOfEachKeyAreShrunk) {
  const ShrinkPolicy policy{2, 0};  // no class may add anything: only the first two per key
  ShrinkCounts counts;
  const FindingKey a = keyWith(HazardClass::H5ViewCopy), b = keyWith(HazardClass::H5ViewCopy, "buffer t");
  EXPECT_TRUE(selectForShrinking(policy, counts, a, {HazardClass::H5ViewCopy}));
  EXPECT_TRUE(selectForShrinking(policy, counts, a, {HazardClass::H5ViewCopy}));
  EXPECT_FALSE(selectForShrinking(policy, counts, a, {HazardClass::H5ViewCopy}));
  EXPECT_TRUE(selectForShrinking(policy, counts, b, {}));  // another target: another key
  EXPECT_EQ(counts.findingsByUnshrunkKey.at(a), 3);
  EXPECT_EQ(counts.findingsByUnshrunkKey.at(b), 1);
}

TEST(ShrinkPolicy, AFindingThatMayShrinkToARareClassIsShrunkBeyondItsKeysShare) {
  const ShrinkPolicy policy{1, 2};
  ShrinkCounts counts;
  const FindingKey key = keyWith(HazardClass::B1OtherLineage);
  const std::vector<HazardClass> features{HazardClass::B1OtherLineage, HazardClass::H10AncestorSibling};
  EXPECT_TRUE(selectForShrinking(policy, counts, key, features));  // the first of its key
  countShrunk(counts, HazardClass::B1OtherLineage);
  countShrunk(counts, HazardClass::B1OtherLineage);
  EXPECT_TRUE(selectForShrinking(policy, counts, key, features));  // H10: never shrunk yet
  countShrunk(counts, HazardClass::H10AncestorSibling);
  EXPECT_TRUE(selectForShrinking(policy, counts, key, features));  // H10: once
  countShrunk(counts, HazardClass::H10AncestorSibling);
  EXPECT_FALSE(selectForShrinking(policy, counts, key, features));  // both classes twice
  EXPECT_FALSE(selectForShrinking(policy, counts, key, {}));
  EXPECT_TRUE(selectForShrinking(policy, counts, key, {HazardClass::H6ShareAlloc}));
  EXPECT_EQ(counts.shrunkByClass.at(HazardClass::B1OtherLineage), 2);
}

TEST(ShrinkPolicy, TheDefaultsAreTheCampaignsFigures) {
  const ShrinkPolicy policy;
  EXPECT_EQ(policy.shrinksPerUnshrunkKey, 12);
  EXPECT_EQ(policy.shrunkPerClass, 3);
}

// ---------------------------------------------------------------------------------------------
// A worker, and its messages to the parent.

TEST(Worker, JobSharesAddUpToTheCases) {
  for (const std::uint64_t total : {0ull, 1ull, 5ull, 400ull, 20001ull})
    for (const int jobs : {1, 2, 3, 7}) {
      std::uint64_t sum = 0, least = total, most = 0;
      for (int job = 0; job < jobs; ++job) {
        const std::uint64_t share = casesOfJob(total, job, jobs);
        sum += share;
        least = std::min(least, share);
        most = std::max(most, share);
      }
      EXPECT_EQ(sum, total) << total << " over " << jobs;
      EXPECT_LE(most - least, 1u) << total << " over " << jobs;
    }
}

struct WorkerRun {
  std::vector<FindingRecord> records;
  std::vector<WorkerCounts> progress;
};

WorkerRun runAWorker(WorkerConfig config, const std::function<bool()>& stop = [] { return false; }) {
  WorkerRun run;
  config.start = std::chrono::steady_clock::now();
  runWorker(
      config, [&](const FindingRecord& r) { run.records.push_back(r); },
      [&](const WorkerCounts& c) { run.progress.push_back(c); }, stop);
  return run;
}

WorkerConfig pr20744Worker(std::uint64_t cases) {
  WorkerConfig config;
  config.campaign.placement = Placement::Pr20744_ff2892d4;
  config.runSeed = 5;
  config.cases = cases;
  config.outDir = "out";
  config.foundBy = "wbcheck fuzz --seed 5";
  return config;
}

TEST(Worker, RunsItsShareOfTheCasesAndReportsTheSameFindingsEachTime) {
  const WorkerRun a = runAWorker(pr20744Worker(60));
  const WorkerRun b = runAWorker(pr20744Worker(60));
  ASSERT_FALSE(a.progress.empty());
  EXPECT_EQ(a.progress.back().cases, 60u);
  EXPECT_GT(a.progress.back().diverging, 0u);
  EXPECT_EQ(a.progress.back().diverging, b.progress.back().diverging);
  EXPECT_EQ(a.progress.back().shrinks, b.progress.back().shrinks);  // (their time differs from run to run)
  EXPECT_GT(a.progress.back().shrinks, 0u);
  ASSERT_FALSE(a.records.empty());
  ASSERT_EQ(a.records.size(), b.records.size());
  EXPECT_LE(a.records.size(), a.progress.back().diverging);
  std::set<std::string> shapes;
  for (std::size_t i = 0; i < a.records.size(); ++i) {
    const FindingRecord& r = a.records[i];
    EXPECT_EQ(r.key, b.records[i].key);
    EXPECT_EQ(r.shape, b.records[i].shape);
    EXPECT_EQ(r.seed, b.records[i].seed);
    EXPECT_EQ(r.artifact, b.records[i].artifact);
    EXPECT_EQ(r.count, 1u);
    // A repeat of a shape comes without its artifact; a first one with it, naming its file.
    const bool first = shapes.insert(describe(r.key) + r.shape).second;
    EXPECT_EQ(r.artifact.empty(), !first) << describe(r.key);
    if (!first) continue;
    const ArtifactHeader header = parseArtifactHeader(r.artifact);
    EXPECT_EQ(header.placement, "pr20744@ff2892d4");
    EXPECT_EQ(header.seed, r.seed);
    const std::string file = (std::filesystem::path("out") / artifactFileName(r.key, r.shape)).string();
    EXPECT_NE(r.artifact.find("# replay: wbcheck check " + file), std::string::npos) << r.artifact;
    EXPECT_NE(r.artifact.find("# found by: wbcheck fuzz --seed 5"), std::string::npos);
  }
  // Job 1 of 2 runs the other half, from its own seed stream.
  WorkerConfig second = pr20744Worker(60);
  second.jobs = 2;
  second.job = 1;
  EXPECT_EQ(runAWorker(second).progress.back().cases, 30u);
}

TEST(Worker, StopsWhenAskedBeforeTheNextCase) {
  int asked = 0;
  const WorkerRun run = runAWorker(pr20744Worker(0), [&] { return ++asked > 5; });
  EXPECT_EQ(run.progress.back().cases, 5u);
}

// Findings against the placement under change: deliberately broken variants of `early`
// (tests/broken_early.h), found and shrunk as findings against any other placement are.
struct BrokenEarly {
  const char* name;
  oracle::PlaceFunction place;
};
std::vector<BrokenEarly> brokenEarlies() {
  return {{"without readers", wb::testing::earlyWithoutReaders},
          {"without copy order", wb::testing::earlyWithoutCopyOrder},
          {"treating schema-less ops as pure", wb::testing::earlyTreatingSchemalessAsPure}};
}

bool parDiffersFromValue(const oracle::CheckReport& report) {
  return std::any_of(report.findings.begin(), report.findings.end(), [](const oracle::Mismatch& m) {
    return m.kind == oracle::MismatchKind::ParDiffersFromValue;
  });
}

TEST(Campaign, AFindingAgainstABrokenEarlyShrinksToAFewNodes) {
  for (const BrokenEarly& broken : brokenEarlies()) {
    CampaignOptions options;
    options.placement = Placement::Early;
    options.placeWith = broken.place;
    const gen::Generator generator(campaignGenOptions(options));
    int shrunkFindings = 0;
    for (std::uint64_t i = 0; i < 3000 && shrunkFindings < 6; ++i) {
      const std::uint64_t seed = caseSeed(11, 0, i);
      const CaseResult result = runCase(seed, options, generator);
      if (!result.finding) continue;
      const ShrunkFinding s = shrinkFinding(result.program, *result.finding, seed, options.inputs, builtins(), broken.place);
      ASSERT_TRUE(s.reproduced) << broken.name << " seed " << seed;
      ++shrunkFindings;
      EXPECT_TRUE(validate(s.program).empty());
      EXPECT_LE(s.bodyNodesAfter, 6u) << broken.name << " seed " << seed << "\n" << writeProgram(s.program);
      EXPECT_TRUE(reproducesFinding(s.program, *result.finding, seed, options.inputs, builtins(), broken.place));
      // A counterexample to the variant, not to early; S_par == F stays where it was.
      const oracle::CheckReport real = checkWith(s.program, Placement::Early, seed);
      EXPECT_EQ(real.verdict, oracle::Verdict::Holds) << broken.name << "\n" << writeProgram(s.program);
      EXPECT_EQ(s.parEqualsValue, !parDiffersFromValue(checkWith(result.program, Placement::Early, seed)));
      if (s.parEqualsValue) {
        EXPECT_FALSE(parDiffersFromValue(real));
      }
    }
    EXPECT_EQ(shrunkFindings, 6) << broken.name << ": too few findings in 3000 cases";
  }
}

// A placement that throws on some programs (here: any program with a multiplication, as an
// internal invariant of a broken placement would) has failed on them: each is a "placement
// failed" finding that names the exception and shrinks like any other, never an internal error
// of the campaign.
// A placement given as CheckOptions::placeWith is classified on what it placed, not on what
// CheckOptions::placement (here `early`, which writes every buffer back) would have placed: a
// placement that inserts no copy at all skips a write-back (B1) on every program it fails.
TEST(Campaign, APlaceWithFindingIsClassifiedOnWhatItPlaced) {
  const oracle::PlaceFunction insertsNoCopy = [](const Program& p, const SchemaTable&) {
    PlacedProgram out;
    out.program = p;
    return out;
  };
  CampaignOptions options;
  options.placement = Placement::Early;
  options.placeWith = insertsNoCopy;
  const gen::Generator generator(campaignGenOptions(options));
  oracle::Checker checker;
  int findings = 0, classifiedOtherwiseOnEarlysOutput = 0;
  for (std::uint64_t i = 0; i < 150; ++i) {
    const std::uint64_t seed = caseSeed(3, 0, i);
    const CaseResult result = runCase(seed, options, generator, checker);
    if (!result.finding) continue;
    ++findings;
    EXPECT_EQ(result.finding->hazard, HazardClass::B1OtherLineage) << "seed " << seed << ": " << describe(*result.finding);
    const SchemaTable schemas = schemasFor(result.program, builtins());
    const std::optional<FindingKey> onEarly = classifyFinding(result.program, result.report, schemas);
    classifiedOtherwiseOnEarlysOutput += onEarly && onEarly->hazard != HazardClass::B1OtherLineage;
  }
  EXPECT_GT(findings, 30);
  EXPECT_GT(classifiedOtherwiseOnEarlysOutput, 0);  // what the classification said before
}

TEST(Campaign, APlacementThatThrowsIsAFindingAndShrinks) {
  const oracle::PlaceFunction throwsOnMul = [](const Program& p, const SchemaTable& schemas) {
    for (const Node& n : p.graph.nodes)
      if (n.op == NodeOp::CallFunction && std::string_view(n.target).starts_with("aten::mul"))
        throw std::logic_error("invariant broken at " + n.name);
    return place(p, Placement::Early, schemas);
  };
  CampaignOptions options;
  options.placement = Placement::Early;
  options.placeWith = throwsOnMul;
  const gen::Generator generator(campaignGenOptions(options));
  int shrunkFindings = 0;
  for (std::uint64_t i = 0; i < 300 && shrunkFindings < 3; ++i) {
    const std::uint64_t seed = caseSeed(5, 0, i);
    const CaseResult result = runCase(seed, options, generator);
    if (!result.finding) continue;
    ASSERT_TRUE(result.report.placementFailure) << "seed " << seed;
    EXPECT_TRUE(result.report.placementFailure->starts_with("the placement threw: invariant broken at "))
        << *result.report.placementFailure;
    EXPECT_EQ(result.finding->verdict, kPlacementFailed);
    const ShrunkFinding s = shrinkFinding(result.program, *result.finding, seed, options.inputs, builtins(), throwsOnMul);
    ASSERT_TRUE(s.reproduced) << "seed " << seed;
    ++shrunkFindings;
    EXPECT_EQ(s.key.verdict, kPlacementFailed);
    EXPECT_LE(s.bodyNodesAfter, 2u) << writeProgram(s.program);
    EXPECT_EQ(checkWith(s.program, Placement::Early, seed).verdict, oracle::Verdict::Holds) << writeProgram(s.program);
  }
  EXPECT_EQ(shrunkFindings, 3) << "too few programs with a multiplication in 300 cases";
}

// The variant that treats ops without a schema as pure is found by every run seed within a few
// hundred cases (the oracle's behaviour draws; draw 0 alone lets most of its bugs through).
TEST(Campaign, EveryRunSeedFindsEarlyTreatingSchemaLessOpsAsPure) {
  CampaignOptions options;
  options.placement = Placement::Early;
  options.placeWith = wb::testing::earlyTreatingSchemalessAsPure;
  const gen::Generator generator(campaignGenOptions(options));
  oracle::Checker checker;
  for (std::uint64_t runSeed = 1; runSeed <= 10; ++runSeed) {
    bool found = false;
    for (std::uint64_t i = 0; i < 2000 && !found; ++i)
      found = runCase(caseSeed(runSeed, 0, i), options, generator, checker).finding.has_value();
    EXPECT_TRUE(found) << "run seed " << runSeed;
  }
}

TEST(Worker, FindingsAgainstABrokenEarlyArriveShrunk) {
  for (const BrokenEarly& broken : brokenEarlies()) {
    WorkerConfig config;
    config.campaign.placement = Placement::Early;
    config.campaign.placeWith = broken.place;
    config.runSeed = 3;
    config.cases = 3000;
    config.outDir = "out";
    config.start = std::chrono::steady_clock::now();
    std::vector<FindingRecord> records;  // the first four
    runWorker(
        config, [&](const FindingRecord& r) { records.push_back(r); }, [](const WorkerCounts&) {},
        [&] { return records.size() >= 4; });
    ASSERT_FALSE(records.empty()) << broken.name;
    for (const FindingRecord& r : records) {
      EXPECT_EQ(r.key.placement, Placement::Early);
      EXPECT_LE(r.bodyNodes, 6u) << broken.name << ": " << describe(r.key) << "\n" << r.artifact;
      if (r.artifact.empty()) continue;
      EXPECT_EQ(r.artifact.find("# not shrunk"), std::string::npos) << r.artifact;
      EXPECT_NE(r.artifact.find("on it"), std::string::npos) << r.artifact;  // S_par == F or not
    }
  }
}

TEST(Worker, MessagesArriveWhateverTheirPieces) {
  const FindingKey key = keyWith(HazardClass::H4ListArgument);
  const std::vector<FindingRecord> sent = {{key, "shape-a", 1, 0.5, 2, 1, "# artifact\nwith lines\n"},
                                           {key, "shape-b", 2, 1.5, 3, 1, ""}};
  const std::string bytes = progressMessage({10, 4}) + findingMessage(sent[0]) + "X unknown line\n" +
                            progressMessage({20, 7}) + findingMessage(sent[1]) + "F 5\nnope\n" +
                            progressMessage({30, 9, 2, 1500});
  for (const std::size_t piece : {std::size_t{1}, std::size_t{7}, bytes.size()}) {
    WorkerStream stream;
    std::vector<FindingRecord> received;
    for (std::size_t at = 0; at < bytes.size(); at += piece) {
      stream.buffer += bytes.substr(at, piece);
      readMessages(stream, [&](FindingRecord r) { received.push_back(std::move(r)); });
    }
    EXPECT_TRUE(stream.buffer.empty()) << piece;
    EXPECT_EQ(stream.counts, (WorkerCounts{30, 9, 2, 1500})) << piece;
    ASSERT_EQ(received.size(), 2u) << piece;  // the malformed record is skipped
    for (std::size_t i = 0; i < sent.size(); ++i) {
      EXPECT_EQ(received[i].key, sent[i].key);
      EXPECT_EQ(received[i].shape, sent[i].shape);
      EXPECT_EQ(received[i].artifact, sent[i].artifact);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// A run: its plan, its totals, its summary.

TEST(FuzzRun, PlanTakesTheOptions) {
  FuzzOptions options;
  options.placement = "pr20744";  // the latest version
  options.mode = "adversarial";
  options.nodes = 30;
  options.seed = 9;
  options.jobs = 3;
  options.cases = 500;
  options.out = "dir";
  options.untilClasses = "h5_view_copy,b1_other_lineage";
  const FuzzPlanOrError planned = planFuzzRun(options, "wbcheck fuzz ...");
  ASSERT_TRUE(planned.plan) << planned.error;
  const FuzzPlan& plan = *planned.plan;
  EXPECT_EQ(plan.worker.campaign.placement, kLatestPr20744);
  EXPECT_EQ(plan.worker.campaign.mode, gen::GenMode::Adversarial);
  EXPECT_EQ(plan.worker.campaign.maxNodes, 30);
  EXPECT_EQ(plan.worker.runSeed, 9u);
  EXPECT_EQ(plan.worker.jobs, 3);
  EXPECT_EQ(plan.worker.cases, 500u);
  EXPECT_EQ(plan.worker.seconds, 0.0);  // --cases alone: no time limit
  EXPECT_EQ(plan.worker.outDir, "dir");
  EXPECT_EQ(plan.worker.foundBy, "wbcheck fuzz ...");
  EXPECT_EQ(plan.wanted, (std::vector<HazardClass>{HazardClass::H5ViewCopy, HazardClass::B1OtherLineage}));
  EXPECT_FALSE(plan.untilFound);

  FuzzOptions defaults;
  defaults.untilClasses = "all";
  const FuzzPlanOrError byDefault = planFuzzRun(defaults, "");
  ASSERT_TRUE(byDefault.plan);
  EXPECT_EQ(byDefault.plan->worker.seconds, 60.0);  // neither --time nor --cases
  EXPECT_FALSE(byDefault.plan->worker.campaign.mode);
  EXPECT_TRUE(byDefault.plan->wanted.empty());  // `all` for early: nothing to find
}

TEST(FuzzRun, PlanNamesTheFirstWrongOption) {
  auto errorOf = [](auto change) {
    FuzzOptions options;
    change(options);
    const FuzzPlanOrError planned = planFuzzRun(options, "");
    EXPECT_FALSE(planned.plan);
    return planned.error;
  };
  EXPECT_EQ(errorOf([](FuzzOptions& o) { o.placement = "earliest"; }), "unknown placement 'earliest'");
  EXPECT_EQ(errorOf([](FuzzOptions& o) { o.mode = "lazy"; }), "unknown mode 'lazy' (realistic | adversarial)");
  const std::string ranges = "--nodes must be in 1..1000, --jobs in 1..256, --behaviours in 1..64, --time >= 0";
  EXPECT_EQ(errorOf([](FuzzOptions& o) { o.nodes = 0; }), ranges);
  EXPECT_EQ(errorOf([](FuzzOptions& o) { o.jobs = 257; }), ranges);
  EXPECT_EQ(errorOf([](FuzzOptions& o) { o.seconds = -1; }), ranges);
  EXPECT_EQ(errorOf([](FuzzOptions& o) { o.behaviours = 0; }), ranges);
  const std::string unknown = errorOf([](FuzzOptions& o) { o.untilClasses = "h5_view_copy,h99"; });
  EXPECT_TRUE(unknown.starts_with("unknown hazard class 'h99'; known: h4_list_argument h5_view_copy")) << unknown;
}

TEST(FuzzRun, DoneAtTheFirstFindingOrOnceEveryWantedClassIsFound) {
  FuzzPlan plan;
  FindingTable table;
  EXPECT_FALSE(fuzzRunDone(plan, table));
  table.add({keyWith(HazardClass::H4ListArgument), "a", 1, 0.0, 1, 1, ""});
  EXPECT_FALSE(fuzzRunDone(plan, table));  // neither --until-found nor --until-classes
  plan.untilFound = true;
  EXPECT_TRUE(fuzzRunDone(plan, table));
  plan.untilFound = false;
  plan.wanted = {HazardClass::H4ListArgument, HazardClass::H5ViewCopy};
  EXPECT_FALSE(fuzzRunDone(plan, table));
  table.add({keyWith(HazardClass::H5ViewCopy), "b", 2, 0.0, 1, 1, ""});
  EXPECT_TRUE(fuzzRunDone(plan, table));
}

TEST(FuzzRun, OnlyANewRecordWithAnArtifactIsWritten) {
  FuzzTotals totals;
  const FindingKey key = keyWith(HazardClass::H5ViewCopy);
  const std::optional<ArtifactFile> first = addRecord(totals, {key, "shape-a", 1, 0.5, 2, 1, "text"});
  ASSERT_TRUE(first);
  EXPECT_EQ(first->fileName, artifactFileName(key, "shape-a"));
  EXPECT_EQ(first->text, "text");
  EXPECT_FALSE(addRecord(totals, {key, "shape-a", 2, 0.7, 2, 1, "text"}));  // the same finding again
  EXPECT_FALSE(addRecord(totals, {key, "shape-b", 3, 0.9, 2, 1, ""}));      // a worker's repeat
  EXPECT_EQ(totals.table.records().size(), 2u);
  EXPECT_EQ(totals.table.records()[0].count, 2u);
}

TEST(FuzzRun, ProgressLineAndSummary) {
  FuzzOptions options;
  options.placement = "pr20744";  // printed as the version it reads as
  options.seed = 5;
  FuzzTotals totals;
  totals.cases = 120;
  totals.diverging = 35;
  EXPECT_EQ(fuzzSummary(options, totals, 4.0, false),
            "placement pr20744@82a8901, seed 5, 120 cases in 4.0 s (30.0 cases/s), 35 diverging\nno findings\n");
  addRecord(totals, {keyWith(HazardClass::H5ViewCopy), "a", 1, 0.5, 2, 1, "text"});
  addRecord(totals, {keyWith(HazardClass::H5ViewCopy), "b", 2, 0.6, 3, 1, "text"});
  addRecord(totals, {keyWith(HazardClass::B1OtherLineage), "c", 3, 0.7, 0, 1, "text"});
  totals.written = {"out/a.txt"};
  EXPECT_EQ(progressLine(totals, 4.0),
            "\r[fuzz] 120 cases, 30.0 cases/s, 35 diverging, 3 findings (B1: 1, H5: 2), 4.0 s   ");
  const std::string summary = fuzzSummary(options, totals, 4.0, true);
  EXPECT_TRUE(summary.starts_with(
      "placement pr20744@82a8901, seed 5, 120 cases in 4.0 s (30.0 cases/s), 35 diverging (interrupted)\n" +
      totals.table.formatSummary()))
      << summary;
  EXPECT_TRUE(summary.ends_with("wrote out/a.txt\n")) << summary;
  // The time shrinking took has a line of its own, under the first.
  totals.shrinks = 3;
  totals.shrinkSeconds = 1.25;
  EXPECT_NE(fuzzSummary(options, totals, 4.0, false)
                .find("35 diverging\nshrinking: 3 finding(s) shrunk in 1.2 s of the workers' time\n"),
            std::string::npos);
}

// ---------------------------------------------------------------------------------------------
// The commands.

int runCommand(const std::string& command) {
  const int status = std::system((command + " > /dev/null 2>&1").c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// One directory per test and process: two ctest runs on one machine must not share it.
std::filesystem::path scratchDir(const std::string& name) {
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("wbcheck_campaign_test_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

TEST(CampaignCli, ShrinkExitCodes) {
  const std::string wbcheck = WBCHECK_BINARY;
  const std::filesystem::path dir = scratchDir("shrink");
  const std::string h5 = (corpusDir() / "hazards" / "h05_view_copy_becomes_view.txt").string();
  const std::string out = (dir / "h5.txt").string();
  EXPECT_EQ(runCommand(wbcheck + " shrink " + h5 + " --placement pr20744 --out " + out), 0);
  const std::string text = readFile(out);
  EXPECT_NE(text.find("# hazard class: H5 view_copy becomes a view"), std::string::npos);
  EXPECT_TRUE(readProgram(text).ok());
  // The artifact carries its placement and seed: shrinking it again needs no options.
  EXPECT_EQ(runCommand(wbcheck + " shrink " + out), 0);
  EXPECT_EQ(runCommand(wbcheck + " shrink " + h5 + " --placement early"), 1);  // does not fail
  EXPECT_EQ(runCommand(wbcheck + " shrink " + (dir / "missing.txt").string()), 2);
  EXPECT_EQ(runCommand(wbcheck + " shrink " + h5 + " --placement nonsense"), 2);
}

TEST(CampaignCli, FuzzExitCodesAndArtifacts) {
  const std::string wbcheck = WBCHECK_BINARY;
  const std::filesystem::path dir = scratchDir("fuzz");
  EXPECT_EQ(runCommand(wbcheck + " fuzz --placement early --cases 40 --out " + (dir / "early").string()), 0);
  EXPECT_EQ(runCommand(wbcheck + " fuzz --placement pr20744 --cases 400 --jobs 2 --until-found --out " +
                       (dir / "pr").string()),
            1);
  std::size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir / "pr")) {
    if (entry.path().extension() != ".txt") continue;
    ++files;
    const std::string text = readFile(entry.path());
    EXPECT_NE(text.find("# found by: "), std::string::npos);
    EXPECT_NE(text.find("# seed: "), std::string::npos);
    EXPECT_TRUE(readProgram(text).ok()) << entry.path();
    // Its picture beside it, named in its header.
    const std::filesystem::path picture = std::filesystem::path(entry.path()).replace_extension(".svg");
    EXPECT_TRUE(std::filesystem::exists(picture)) << picture;
    EXPECT_NE(text.find("# picture: " + picture.string()), std::string::npos) << text;
    EXPECT_NE(readFile(picture).find("</svg>"), std::string::npos);
  }
  EXPECT_GE(files, 1u);
  // --no-draw: findings without pictures.
  EXPECT_EQ(runCommand(wbcheck + " fuzz --placement pr20744 --cases 400 --until-found --no-draw --out " +
                       (dir / "plain").string()),
            1);
  for (const auto& entry : std::filesystem::directory_iterator(dir / "plain")) {
    EXPECT_EQ(entry.path().extension(), ".txt") << entry.path();
    EXPECT_EQ(readFile(entry.path()).find("# picture:"), std::string::npos);
  }
  EXPECT_EQ(runCommand(wbcheck + " fuzz --placement nonsense --cases 1"), 2);
  EXPECT_EQ(runCommand(wbcheck + " fuzz --until-classes h99 --cases 1"), 2);
}

}  // namespace
}  // namespace wb::campaign
