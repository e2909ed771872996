// tests/fuzz_passcmd_test.cpp: `wbcheck fuzz --pass-cmd` and `wbcheck shrink --pass-cmd` end to
// end (issue 19): a pass in another language (tools/adapters/upstream_end.py) fuzzed from the
// outside has its bugs found and shrunk, and a pass that crashes, hangs or prints garbage on
// some programs gives findings of those kinds that shrink to the same kind, without hiding its
// wrong placements.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <span>
#include <string>
#include <vector>

#include "campaign/campaign.h"
#include "core/text.h"
#include "passcmd/external_pass.h"
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
  return bodyNodeCount(testing::loadProgram(artifact));
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
  EXPECT_EQ(bodyNodeCount(*read), 1u) << r.out;
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

// A batch of cases through a persistent pass (runCases: the programs in flight together) gives
// each case the finding it gets alone, crashes mid-batch included (the adapter exits when the
// placement fails: the requests after it go to a fresh process).
TEST(FuzzPassCmd, BatchedCasesThroughAPersistentPassGetTheFindingsOfCasesRunAlone) {
  campaign::CampaignOptions batched, alone;
  batched.passCmd = placeAdapter(Placement::Pr20744_ff2892d4, true);
  alone.passCmd = placeAdapter(Placement::Pr20744_ff2892d4, true);
  const gen::Generator generator(campaign::campaignGenOptions(batched));
  oracle::Checker checker;
  std::vector<std::uint64_t> seeds;
  for (std::uint64_t i = 0; i < 120; ++i) seeds.push_back(campaign::caseSeed(3, 0, i));
  int findings = 0, crashes = 0;
  for (std::size_t from = 0; from < seeds.size(); from += 16) {
    const std::span<const std::uint64_t> batch(seeds.data() + from, std::min<std::size_t>(16, seeds.size() - from));
    const std::vector<campaign::CaseResult> results = campaign::runCases(batch, batched, generator, checker);
    ASSERT_EQ(results.size(), batch.size());
    for (std::size_t k = 0; k < batch.size(); ++k) {
      const campaign::CaseResult one = campaign::runCase(batch[k], alone, generator);
      EXPECT_EQ(results[k].seed, batch[k]);
      EXPECT_EQ(results[k].program, one.program) << "seed " << batch[k];
      EXPECT_EQ(results[k].finding, one.finding) << "seed " << batch[k];
      EXPECT_EQ(results[k].features, one.features) << "seed " << batch[k];
      findings += one.finding.has_value();
      crashes += one.finding && one.finding->hazard == campaign::HazardClass::PassCrash;
    }
  }
  EXPECT_GT(findings, 10);
  EXPECT_GT(crashes, 0);  // (else no batch was broken mid-way)
  EXPECT_EQ(batched.passCmd->processStarts(), alone.passCmd->processStarts());
}

// The shrunk programs a fuzz run wrote to `dir`: hazard id and shape -> program text.
std::map<std::string, std::string> shrunkPrograms(const fs::path& dir) {
  std::map<std::string, std::string> programs;
  for (const auto& [id, files] : artifactsByHazard(dir))
    for (const fs::path& file : files) {
      const Program p = testing::loadProgram(file);
      programs[id + " " + campaign::shapeOf(p)] = writeProgram(p);
    }
  return programs;
}

// The same through `wbcheck fuzz`: the built-in placement's findings and the adapter's, shrunk
// (one shot and persistent), are the same shrunk programs.
TEST(FuzzPassCmd, FuzzingTheCppAdapterWritesTheBuiltInPlacementsFindings) {
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

// The Python adapter of upstream's pass (tools/adapters/upstream_end.py) and the built-in model
// of upstream, case by case on generated programs: the same finding or none, of the same kind
// (verdict, view modes, target and class).
TEST(FuzzPassCmd, ThePythonPassFindsWhatTheBuiltInModelOfUpstreamFinds) {
  // More cases, another run seed: WBCHECK_AGREEMENT_CASES=2000 WBCHECK_AGREEMENT_SEED=7.
  const char* casesVar = std::getenv("WBCHECK_AGREEMENT_CASES");
  const char* seedVar = std::getenv("WBCHECK_AGREEMENT_SEED");
  const std::uint64_t cases = casesVar ? std::strtoull(casesVar, nullptr, 10) : 400;
  const std::uint64_t runSeed = seedVar ? std::strtoull(seedVar, nullptr, 10) : 1;
  campaign::CampaignOptions builtIn;
  builtIn.placement = Placement::Upstream;
  campaign::CampaignOptions external;
  passcmd::ExternalPass pass;
  pass.command = "python3 " + (testing::sourceDir() / "tools" / "adapters" / "upstream_end.py").string() + " --persistent";
  pass.persistent = true;
  external.passCmd = passcmd::PassRunner(pass);
  const gen::Generator generator(campaign::campaignGenOptions(builtIn));
  int findings = 0, differences = 0;
  for (std::uint64_t i = 0; i < cases; ++i) {
    const std::uint64_t seed = campaign::caseSeed(runSeed, 0, i);
    const campaign::CaseResult a = campaign::runCase(seed, builtIn, generator);
    const campaign::CaseResult b = campaign::runCase(seed, external, generator);
    std::optional<campaign::FindingKey> key = b.finding;
    if (key) {
      key->passCmd.clear();
      key->placement = Placement::Upstream;
    }
    findings += a.finding.has_value();
    if (key == a.finding) continue;
    ++differences;
    ADD_FAILURE() << "seed " << seed << ": built-in " << (a.finding ? campaign::describe(*a.finding) : "holds")
                  << "; python " << (b.finding ? campaign::describe(*b.finding) : "holds") << "\n"
                  << writeProgram(a.program);
  }
  EXPECT_GT(findings, static_cast<int>(cases / 10));
  EXPECT_EQ(differences, 0);
}

// --- --pass-form: the printed form the command gets -------------------------------------------

// place_adapter --form N reads form N only (another form is its crash) and answers in form N:
// an adapter written against str(graph) or graph_module.code.
std::string formAdapter(const std::string& placement, int form, bool persistent = false) {
  return "--pass-cmd '" + std::string(WBCHECK_PLACE_ADAPTER) + " --placement " + placement + " --form " +
         std::to_string(form) + (persistent ? " --persistent' --persistent" : "'");
}

std::string hazardFile(const std::string& name) { return (testing::corpusDir() / "hazards" / name).string(); }

TEST(PassForm, AnAdapterOfOneFormWorksWithThatFormAndCrashesWithoutIt) {
  for (int form : {2, 3}) {
    SCOPED_TRACE("form " + std::to_string(form));
    const std::string file = hazardFile("h10_ancestor_sibling_alias.txt");
    const std::string adapter = formAdapter("early", form);
    testing::CliRun given = testing::runWbcheck("check " + file + " " + adapter + " --pass-form " + std::to_string(form) + " --json");
    EXPECT_EQ(given.exitCode, 0) << given.out << given.err;
    EXPECT_EQ(nlohmann::json::parse(given.out)["pass_outcome"], "placed");
    testing::CliRun notGiven = testing::runWbcheck("check " + file + " " + adapter + " --json");
    ASSERT_EQ(notGiven.exitCode, 1) << notGiven.out << notGiven.err;
    const nlohmann::json j = nlohmann::json::parse(notGiven.out);
    EXPECT_EQ(j["pass_outcome"], "crash");
    EXPECT_NE(j["placement_failure"].get<std::string>().find("reads form " + std::to_string(form) + " only"), std::string::npos)
        << j["placement_failure"];
    // The other of the two forms is no better.
    testing::CliRun other = testing::runWbcheck("check " + file + " " + adapter + " --pass-form " + std::to_string(5 - form) + " --json");
    ASSERT_EQ(other.exitCode, 1) << other.out << other.err;
    EXPECT_EQ(nlohmann::json::parse(other.out)["pass_outcome"], "crash");
  }
  // Upstream's bug B2 is found through form 3 as through form 1, and the replay line says the form.
  testing::CliRun b2 = testing::runWbcheck("check " + hazardFile("b2_copies_first_positional_specs.txt") + " " +
                                           formAdapter("upstream", 3) + " --pass-form 3");
  ASSERT_EQ(b2.exitCode, 1) << b2.out << b2.err;
  EXPECT_NE(b2.out.find("--form 3' --pass-form 3 --seed 0"), std::string::npos) << b2.out;
}

TEST(PassForm, AFormThatCannotCarryTheProgramOrIsNoFormIsAUsageError) {
  const std::string cond = (testing::realGraphsDir() / "h5-cond-nested-submodule.txt").string();
  ASSERT_FALSE(testing::loadProgram(cond).submodules.empty());
  for (const std::string command : {"check ", "shrink "}) {
    testing::CliRun r = testing::runWbcheck(command + cond + " --pass-cmd cat --pass-form 3");
    EXPECT_EQ(r.exitCode, 2) << r.out << r.err;
    EXPECT_NE(r.err.find("submodule"), std::string::npos) << r.err;
  }
  testing::CliRun formOne = testing::runWbcheck("check " + cond + " --pass-cmd cat");  // form 1 carries it
  EXPECT_NE(formOne.exitCode, 2) << formOne.err;
  EXPECT_NE(formOne.out.find("placed by --pass-cmd 'cat'"), std::string::npos) << formOne.out;
  EXPECT_EQ(testing::runWbcheck("check " + hazardFile("h01_old_value_reader.txt") + " --pass-cmd cat --pass-form 4").exitCode, 2);
  EXPECT_EQ(testing::runWbcheck("check " + hazardFile("h01_old_value_reader.txt") + " --pass-form 3").exitCode, 2);
  passcmd::ExternalPass pass;
  pass.command = "cat";
  pass.form = ProgramForm::StrGraph;
  EXPECT_THROW(passcmd::requestText(testing::loadProgram(cond), pass), std::invalid_argument);
}

// Fuzzing a form-3 adapter with --pass-form 3 finds what the built-in placement finds, shrunk to
// the same programs, and the findings replay with the form; without it every finding is the
// adapter's crash.
TEST(PassForm, FuzzingAFormThreeAdapterFindsTheBuiltInPlacementsFindings) {
  const std::string common = " --cases 60 --seed 2 --no-draw --out ";
  const fs::path builtIn = scratchDir("form_builtin"), form3 = scratchDir("form3"), form1 = scratchDir("form1");
  ASSERT_EQ(testing::runWbcheck("fuzz --placement upstream" + common + builtIn.string()).exitCode, 1);
  testing::CliRun given = testing::runWbcheck("fuzz " + formAdapter("upstream", 3, true) + " --pass-form 3" + common + form3.string());
  ASSERT_EQ(given.exitCode, 1) << given.out << given.err;
  const auto expected = shrunkPrograms(builtIn);
  EXPECT_FALSE(expected.empty());
  EXPECT_EQ(shrunkPrograms(form3), expected) << given.out;
  bool replayed = false;
  for (const fs::path& file : testing::filesUnder(form3)) {
    if (file.extension() != ".txt") continue;
    const std::string text = testing::readFile(file);
    EXPECT_NE(text.find("--persistent --pass-form 3 --seed"), std::string::npos) << text;
    if (replayed) continue;
    testing::CliRun again = testing::runWbcheck("check " + file.string() + " " + formAdapter("upstream", 3) + " --pass-form 3");
    EXPECT_EQ(again.exitCode, 1) << again.out << again.err;
    replayed = true;
  }
  EXPECT_TRUE(replayed);
  testing::CliRun notGiven = testing::runWbcheck("fuzz " + formAdapter("upstream", 3, true) + common + form1.string());
  ASSERT_EQ(notGiven.exitCode, 1) << notGiven.out << notGiven.err;
  const auto crashes = artifactsByHazard(form1);
  ASSERT_EQ(crashes.size(), 1u) << notGiven.out;
  EXPECT_EQ(crashes.begin()->first, campaign::hazardId(campaign::HazardClass::PassCrash));
  for (const fs::path& dir : {builtIn, form3, form1}) fs::remove_all(dir);
}

}  // namespace
}  // namespace wb
