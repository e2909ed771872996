// tests/fuzz_passcmd_test.cpp: `wbcheck fuzz --pass-cmd` and `wbcheck shrink --pass-cmd` end to
// end (issue 19): a pass in another language (tools/adapters/upstream_end.py) fuzzed from the
// outside has its bugs found and shrunk, and a pass that crashes, hangs or prints garbage on
// some programs gives findings of those kinds that shrink to the same kind, without hiding its
// wrong placements.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>
#include <string>

#include "campaign/campaign.h"
#include "core/text.h"
#include "passcmd/pass_runner.h"
#include "tests/cli_runner.h"
#include "tests/testing.h"

namespace wb {
namespace {

namespace fs = std::filesystem;

std::string pythonAdapter(bool persistent) {
  return "--pass-cmd 'python3 " + (testing::sourceDir() / "tools" / "adapters" / "upstream_end.py").string() +
         (persistent ? " --persistent' --persistent" : "'");
}

std::string misbehavingAdapter(int timeoutMs) {
  return "--pass-cmd '" + (testing::sourceDir() / "tests" / "adapters" / "misbehaving.sh").string() + " " +
         WBCHECK_BINARY + "' --pass-timeout-ms " + std::to_string(timeoutMs);
}

fs::path scratchDir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("wbcheck_fuzz_passcmd_" + std::to_string(::getpid()) + "_" + name);
  fs::remove_all(dir);
  return dir;
}

// The artifacts of a run, by hazard id (the file name's middle).
std::map<std::string, std::vector<fs::path>> artifactsByHazard(const fs::path& dir) {
  std::map<std::string, std::vector<fs::path>> out;
  for (const fs::path& file : testing::filesUnder(dir)) {
    if (file.extension() != ".txt") continue;
    const std::string text = testing::readFile(file);
    const campaign::ArtifactHeader header = campaign::parseArtifactHeader(text);
    for (campaign::HazardClass h : campaign::allHazardClasses())
      if (campaign::hazardLabel(h) == header.hazard) out[std::string(campaign::hazardId(h))].push_back(file);
  }
  return out;
}

std::size_t bodyNodesOf(const fs::path& artifact) {
  return campaign::bodyNodeCount(testing::loadProgram(artifact));
}

// The Python adapter's bugs (B1: a lineage of another buffer skips its copy; B2: the copies-first
// output tuple) are found through --pass-cmd and shrunk to a few nodes, as for the built-in
// model of upstream; the artifacts name the command and replay through it.
TEST(FuzzPassCmd, FindsAndShrinksThePythonPassBugs) {
  const fs::path out = scratchDir("python");
  testing::CliRun r = testing::runWbcheck("fuzz " + pythonAdapter(true) +
                                          " --until-classes b1_other_lineage,b2_output_order --time 120 --seed 1"
                                          " --no-draw --out " + out.string());
  ASSERT_EQ(r.exitCode, 1) << r.out << r.err;
  const auto found = artifactsByHazard(out);
  for (const char* id : {"b1_other_lineage", "b2_output_order"}) {
    ASSERT_TRUE(found.count(id)) << id << "\n" << r.out;
    for (const fs::path& file : found.at(id)) {
      EXPECT_LE(bodyNodesOf(file), 6u) << file;
      EXPECT_EQ(file.filename().string().rfind("pass-cmd_", 0), 0u) << file;
    }
  }
  EXPECT_NE(r.out.find("pass-cmd "), std::string::npos) << r.out;  // the summary's placement column

  // The artifact says how it was placed, and its replay line runs the command again.
  const fs::path b1 = found.at("b1_other_lineage").front();
  const std::string text = testing::readFile(b1);
  EXPECT_NE(text.find("# pass command: --pass-cmd 'python3 "), std::string::npos) << text;
  EXPECT_EQ(text.find("# placement:"), std::string::npos) << text;
  const campaign::ArtifactHeader header = campaign::parseArtifactHeader(text);
  ASSERT_TRUE(header.seed);
  testing::CliRun replay = testing::runWbcheck("check " + b1.string() + " " + pythonAdapter(false) + " --seed " +
                                               std::to_string(*header.seed));
  EXPECT_EQ(replay.exitCode, 1) << replay.out << replay.err;
  // The built-in placement that does right holds on it.
  EXPECT_EQ(testing::runWbcheck("check " + b1.string() + " --seed " + std::to_string(*header.seed)).exitCode, 0);
  // The header's own replay line (persistent, as it was found) runs as written.
  const std::size_t replayAt = text.find("# replay: wbcheck ");
  ASSERT_NE(replayAt, std::string::npos) << text;
  const std::string replayLine = text.substr(replayAt + 18, text.find('\n', replayAt) - replayAt - 18);
  EXPECT_NE(replayLine.find("--persistent"), std::string::npos) << replayLine;
  EXPECT_EQ(testing::runWbcheck(replayLine).exitCode, 1) << replayLine;
  fs::remove_all(out);
}

// Crashes and garbage are findings of their own kinds, each shrunk to a program that still does
// it, and the adapter's wrong placements (upstream's) are found beside them.
TEST(FuzzPassCmd, CrashesAndGarbageAreFindingsBesideTheWrongPlacements) {
  const fs::path out = scratchDir("misbehaving");
  testing::CliRun r = testing::runWbcheck("fuzz " + misbehavingAdapter(1'000) +
                                          " --until-classes pass_crash,pass_malformed,b1_other_lineage --time 120"
                                          " --seed 1 --no-draw --out " + out.string());
  ASSERT_EQ(r.exitCode, 1) << r.out << r.err;
  const auto found = artifactsByHazard(out);
  for (const char* id : {"pass_crash", "pass_malformed", "b1_other_lineage"})
    EXPECT_TRUE(found.count(id)) << id << "\n" << r.out;
  // The trigger survives the shrink: a crash shrinks to a program the adapter crashes on.
  const std::map<std::string, std::string> trigger = {
      {"pass_crash", "aten.cumsum.default"}, {"pass_hang", "aten.relu_.default"}, {"pass_malformed", "aten.clone.default"}};
  for (const auto& [id, op] : trigger) {
    if (!found.count(id)) continue;
    for (const fs::path& file : found.at(id)) {
      const std::string text = testing::readFile(file);
      EXPECT_NE(text.find(op), std::string::npos) << file << "\n" << text;
      EXPECT_LE(bodyNodesOf(file), 3u) << file << "\n" << text;
    }
  }
  // `shrink --pass-cmd` of a crash keeps the crash.
  ASSERT_TRUE(found.count("pass_crash"));
  const fs::path crash = found.at("pass_crash").front();
  testing::CliRun shrunk = testing::runWbcheck("shrink " + crash.string() + " " + misbehavingAdapter(1'000) + " --no-draw");
  ASSERT_EQ(shrunk.exitCode, 0) << shrunk.out << shrunk.err;
  EXPECT_NE(shrunk.out.find("# hazard class: pass command crashed"), std::string::npos) << shrunk.out;
  EXPECT_NE(shrunk.out.find("# verdict: crash"), std::string::npos) << shrunk.out;
  fs::remove_all(out);
}

// A hang shrinks to a hang: every candidate kept still gets no answer in time.
TEST(FuzzPassCmd, AHangShrinksToAHang) {
  testing::CliRun r = testing::runWbcheck("shrink " + (testing::corpusDir() / "hazards" / "h10_ancestor_sibling_alias.txt").string() +
                                          " " + misbehavingAdapter(500) + " --no-draw");
  ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("# verdict: hang"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("# hazard class: pass command hung"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("aten.relu_.default"), std::string::npos) << r.out;
  const std::size_t program = r.out.find("ExportedProgram:");
  ASSERT_NE(program, std::string::npos) << r.out;
  Result<Program> read = readProgram(r.out.substr(program));
  ASSERT_TRUE(read) << r.out;
  EXPECT_EQ(campaign::bodyNodeCount(*read), 1u) << r.out;
}

TEST(FuzzPassCmd, PassCmdExcludesPlacementAndUntilClassesAll) {
  EXPECT_EQ(testing::runWbcheck("fuzz --placement upstream --pass-cmd cat --cases 1 --no-draw").exitCode, 2);
  EXPECT_EQ(testing::runWbcheck("fuzz --pass-cmd cat --until-classes all --cases 1 --no-draw").exitCode, 2);
}

// ---------------------------------------------------------------------------------------------
// The C++ adapter over wbcheck's own placements (tools/adapters/place_adapter.cpp).

passcmd::PassRunner placeAdapter(Placement placement, bool persistent) {
  passcmd::ExternalPass pass;
  pass.command = std::string(WBCHECK_PLACE_ADAPTER) + " --placement " + std::string(toString(placement)) +
                 (persistent ? " --persistent" : "");
  pass.persistent = persistent;
  return passcmd::PassRunner(pass);
}

// Case by case, the same program placed by the built-in placement and by the adapter behind the
// persistent protocol gives the same finding (the same verdict, view modes, target and class),
// except that a placement that fails is the adapter's exit: a crash.
TEST(FuzzPassCmd, TheCppAdapterFindsWhatTheBuiltInPlacementFinds) {
  for (Placement placement : {Placement::Upstream, Placement::Pr20744_ff2892d4}) {
    campaign::CampaignOptions builtIn;
    builtIn.placement = placement;
    campaign::CampaignOptions external;
    external.passCmd = placeAdapter(placement, true);
    const gen::Generator generator(campaign::campaignGenOptions(builtIn));
    int findings = 0, crashes = 0;
    for (std::uint64_t i = 0; i < 120; ++i) {
      const std::uint64_t seed = campaign::caseSeed(1, 0, i);
      const campaign::CaseResult a = campaign::runCase(seed, builtIn, generator);
      const campaign::CaseResult b = campaign::runCase(seed, external, generator);
      ASSERT_EQ(a.finding.has_value(), b.finding.has_value()) << toString(placement) << " seed " << seed;
      if (!a.finding) continue;
      ++findings;
      if (a.finding->verdict == campaign::kPlacementFailed && a.finding->hazard != campaign::HazardClass::B2OutputOrder) {
        EXPECT_EQ(b.finding->hazard, campaign::HazardClass::PassCrash) << campaign::describe(*b.finding);
        ++crashes;
        continue;
      }
      campaign::FindingKey key = *b.finding;
      EXPECT_EQ(key.passCmd, external.passCmd->words());
      key.passCmd.clear();
      key.placement = a.finding->placement;  // (unused when passCmd is set)
      EXPECT_EQ(key, *a.finding) << campaign::describe(key) << " vs " << campaign::describe(*a.finding);
      EXPECT_EQ(b.features, a.features) << toString(placement) << " seed " << seed;
    }
    EXPECT_GT(findings, 10) << toString(placement);
    // One process served them all, but for a fresh one after each crash.
    EXPECT_LE(external.passCmd->processStarts(), 1 + crashes) << toString(placement);
  }
}

// The same through `wbcheck fuzz`: the built-in placement's findings and the adapter's, shrunk
// (one shot and persistent), are the same shrunk programs.
TEST(FuzzPassCmd, FuzzingTheCppAdapterWritesTheBuiltInPlacementsFindings) {
  auto shrunkPrograms = [](const fs::path& dir) {
    std::map<std::string, std::string> programs;  // hazard id and shape -> program text
    for (const auto& [id, files] : artifactsByHazard(dir))
      for (const fs::path& file : files) {
        const Program p = testing::loadProgram(file);
        programs[id + " " + campaign::shapeOf(p)] = writeProgram(p);
      }
    return programs;
  };
  const std::string common = " --cases 60 --seed 2 --no-draw --out ";
  const fs::path builtIn = scratchDir("builtin"), persistent = scratchDir("persistent"), oneShot = scratchDir("oneshot_cpp");
  ASSERT_EQ(testing::runWbcheck("fuzz --placement upstream" + common + builtIn.string()).exitCode, 1);
  const std::string adapter = std::string(WBCHECK_PLACE_ADAPTER) + " --placement upstream";
  testing::CliRun p = testing::runWbcheck("fuzz --pass-cmd '" + adapter + " --persistent' --persistent" + common + persistent.string());
  ASSERT_EQ(p.exitCode, 1) << p.out << p.err;
  testing::CliRun o = testing::runWbcheck("fuzz --pass-cmd '" + adapter + "'" + common + oneShot.string());
  ASSERT_EQ(o.exitCode, 1) << o.out << o.err;
  const auto expected = shrunkPrograms(builtIn);
  EXPECT_FALSE(expected.empty());
  EXPECT_EQ(shrunkPrograms(persistent), expected) << p.out;
  EXPECT_EQ(shrunkPrograms(oneShot), expected) << o.out;
  for (const fs::path& dir : {builtIn, persistent, oneShot}) fs::remove_all(dir);
}

}  // namespace
}  // namespace wb
