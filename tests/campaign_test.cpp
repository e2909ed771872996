// tests/campaign_test.cpp: the campaign library (campaign/campaign.h) and the `wbcheck fuzz` and
// `wbcheck shrink` commands: classification of the hazard corpus, shrinking keeps the key and
// early holds (also through a slice that selects nothing), determinism, artifacts and records
// round-trip, deduplication, exit codes.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

#include "core/validate.h"
#include "campaign/campaign.h"
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

std::optional<FindingKey> keyOf(const std::string& file, Placement placement) {
  const Program p = loadProgram(corpusDir() / "hazards" / file);
  return classifyFinding(p, checkWith(p, placement), schemasFor(p, builtins()));
}

TEST(Campaign, ClassifiesTheHazardCorpus) {
  struct Case {
    const char* file;
    Placement placement;
    HazardClass hazard;
  };
  const Case cases[] = {
      {"h04_list_argument_write.txt", Placement::Pr20744, HazardClass::H4ListArgument},
      {"h05_view_copy_becomes_view.txt", Placement::Pr20744, HazardClass::H5ViewCopy},
      {"h05_view_copy_becomes_view.txt", Placement::Draft13857, HazardClass::H5ViewCopy},
      {"h06a_share_alloc_reader.txt", Placement::Pr20744, HazardClass::H6ShareAlloc},
      {"h06b_share_alloc_clobbers_value.txt", Placement::Pr20744, HazardClass::H6ShareAlloc},
      {"h07_no_placeholders.txt", Placement::Pr20744, HazardClass::H7NoPlaceholders},
      {"h10_ancestor_sibling_alias.txt", Placement::Pr20744, HazardClass::H10AncestorSibling},
      {"b1_lineage_of_another_buffer.txt", Placement::Upstream, HazardClass::B1OtherLineage},
      {"b2_copies_first_positional_specs.txt", Placement::Upstream, HazardClass::B2OutputOrder},
      {"b3_view_copy_end_order.txt", Placement::Upstream, HazardClass::B3H8CopyOrder},
  };
  for (const Case& c : cases) {
    const std::optional<FindingKey> key = keyOf(c.file, c.placement);
    ASSERT_TRUE(key) << c.file;
    EXPECT_EQ(key->hazard, c.hazard) << c.file << ": " << describe(*key);
    EXPECT_EQ(key->placement, c.placement);
  }
  EXPECT_FALSE(keyOf("h05_view_copy_becomes_view.txt", Placement::Early));
  const std::optional<FindingKey> h5 = keyOf("h05_view_copy_becomes_view.txt", Placement::Pr20744);
  EXPECT_EQ(h5->viewModes, "alias-views");
  EXPECT_EQ(h5->verdict, kPlacementDiverges);
  EXPECT_EQ(h5->target, "user output");
  const std::optional<FindingKey> h7 = keyOf("h07_no_placeholders.txt", Placement::Pr20744);
  EXPECT_EQ(h7->verdict, kPlacementFailed);
}

TEST(Campaign, ShrinkingKeepsTheKeyAndEarlyHolds) {
  for (const char* file : {"h05_view_copy_becomes_view.txt", "h10_ancestor_sibling_alias.txt", "h04_list_argument_write.txt"}) {
    const Program p = loadProgram(corpusDir() / "hazards" / file);
    const FindingKey key = *classifyFinding(p, checkWith(p, Placement::Pr20744), schemasFor(p, builtins()));
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
            slice_copy: "f32[4]" = torch.ops.aten.slice_copy.Tensor(x, 0, 0, 0)
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
  const oracle::CheckReport report = checkWith(p, Placement::Pr20744);
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
  options.placement = Placement::Pr20744;
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
  const FindingKey key = *classifyFinding(p, checkWith(p, Placement::Pr20744, 42), schemasFor(p, builtins()));
  const ShrunkFinding s = shrinkFinding(p, key, 42, 3, builtins());
  const std::string text = formatArtifact(s, ArtifactInfo{"0.1.0", 42, "wbcheck fuzz --seed 1", "realistic"}, "F.txt");
  const ArtifactHeader h = parseArtifactHeader(text);
  EXPECT_EQ(h.placement, "pr20744");
  EXPECT_EQ(h.verdict, kPlacementDiverges);
  EXPECT_EQ(h.viewModes, "alias-views");
  EXPECT_EQ(h.hazard, hazardLabel(HazardClass::H5ViewCopy));
  EXPECT_EQ(h.seed, 42u);
  EXPECT_NE(text.find("# replay: wbcheck check F.txt --placement pr20744 --seed 42"), std::string::npos);
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
  EXPECT_EQ(artifactFileName(s.key, record.shape).rfind("pr20744_h5_view_copy_", 0), 0u);
}

TEST(Campaign, FindingTableDeduplicatesByClassAndShape) {
  FindingTable table;
  FindingKey key{Placement::Pr20744, std::string(kPlacementDiverges), "both", "buffer s", HazardClass::H4ListArgument};
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
  EXPECT_EQ(expectedHazards(Placement::Pr20744).size(), 5u);
}

// ---------------------------------------------------------------------------------------------
// The commands.

int runCommand(const std::string& command) {
  const int status = std::system((command + " > /dev/null 2>&1").c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::filesystem::path scratchDir(const std::string& name) {
  std::filesystem::path dir = std::filesystem::temp_directory_path() / ("wbcheck_campaign_test_" + name);
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
    ++files;
    const std::string text = readFile(entry.path());
    EXPECT_NE(text.find("# found by: "), std::string::npos);
    EXPECT_NE(text.find("# seed: "), std::string::npos);
    EXPECT_TRUE(readProgram(text).ok()) << entry.path();
  }
  EXPECT_GE(files, 1u);
  EXPECT_EQ(runCommand(wbcheck + " fuzz --placement nonsense --cases 1"), 2);
  EXPECT_EQ(runCommand(wbcheck + " fuzz --until-classes h99 --cases 1"), 2);
}

}  // namespace
}  // namespace wb::campaign
