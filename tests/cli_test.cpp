// tests/cli_test.cpp: the wbcheck executable end to end: subcommands, exit codes (0 holds,
// 1 violated, 2 usage or input error), `-` for standard input, JSON shapes, provenance.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/cli_runner.h"
#include "tests/testing.h"

namespace {

using wb::testing::CliRun;
CliRun wbcheck(const std::string& args, const std::string& input = "") { return wb::testing::runWbcheck(args, input); }

std::string hazard(const std::string& name) { return (wb::testing::corpusDir() / "hazards" / name).string(); }

TEST(CliPlace, PrintsThePlacedProgramWithExplanations) {
  CliRun r = wbcheck("place " + hazard("h01_old_value_reader.txt") + " --explain");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("ExportedProgram:"), std::string::npos);
  EXPECT_NE(r.out.find("torch.ops.aten.copy_.default(b_s, mul)"), std::string::npos);
  EXPECT_NE(r.out.find("after %add"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("[R2]"), std::string::npos) << r.out;
}

TEST(CliPlace, OutputReadsBackAsTheSamePlacedProgram) {
  CliRun once = wbcheck("place " + hazard("h10_ancestor_sibling_alias.txt"));
  ASSERT_EQ(once.exitCode, 0) << once.err;
  // Placing the placed program again changes nothing.
  CliRun twice = wbcheck("place -", once.out);
  ASSERT_EQ(twice.exitCode, 0) << twice.err;
  EXPECT_EQ(once.out, twice.out);
}

TEST(CliPlace, JsonHasTheDocumentedShape) {
  CliRun r = wbcheck("place " + hazard("h05_view_copy_becomes_view.txt") + " --json");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["tool"], "wbcheck");
  EXPECT_TRUE(j.contains("version"));
  EXPECT_TRUE(j["command"].is_array());
  EXPECT_EQ(j["placement"], "early");
  ASSERT_EQ(j["copies"].size(), 1u);
  EXPECT_EQ(j["copies"][0]["buffer"], "b_s");
  EXPECT_EQ(j["copies"][0]["after"], "sum_1");
  EXPECT_EQ(j["copies"][0]["rule"], "R2");
}

TEST(CliPlace, ModelledFailureIsAViolation) {
  // pr20744@ff2892d4 raises IndexError on a program without placeholders (H7); b6457f4 fixed it.
  CliRun r = wbcheck("place " + hazard("h07_no_placeholders.txt") + " --placement pr20744@ff2892d4");
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_NE(r.err.find("IndexError"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("the pr20744@ff2892d4 placement failed"), std::string::npos) << r.err;
  EXPECT_EQ(wbcheck("place " + hazard("h07_no_placeholders.txt") + " --placement pr20744@b6457f4").exitCode, 0);
}

TEST(CliPlace, VersionedPlacementNamesReadAndPrint) {
  // Plain pr20744 is the latest version, and the JSON names the version.
  for (const char* given : {"pr20744", "pr20744@82a8901"}) {
    CliRun r = wbcheck("place " + hazard("h01_old_value_reader.txt") + " --placement " + given + " --json");
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_EQ(nlohmann::json::parse(r.out)["placement"], "pr20744@82a8901") << given;
  }
  CliRun list = wbcheck("placements");
  EXPECT_EQ(list.exitCode, 0);
  EXPECT_EQ(list.out, "early\nend\nupstream\npr20744@ff2892d4\npr20744@b6457f4\npr20744@82a8901\ndraft13857\n");
  EXPECT_EQ(wbcheck("place " + hazard("h01_old_value_reader.txt") + " --placement pr20744@0000000").exitCode, 2);
}

TEST(CliInput, MalformedInputGivesPositionAndExitTwo) {
  CliRun r = wbcheck("place -", "graph():\n    %x : [num_users=1] = placeholder[target=x]\n    return (%y,\n");
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("<stdin>:"), std::string::npos) << r.err;
}

// The issue-14 case: a program whose signature is printed on its own, followed by text that is
// no part of it. Read strictly, it is an input error at the text; never a program with an
// inferred signature that then "holds".
TEST(CliInput, TextAfterTheProgramIsAnErrorNotSkipped) {
  const std::string program = wb::testing::readFile(hazard("h01_old_value_reader.txt"));
  CliRun ok = wbcheck("place -", program);
  ASSERT_EQ(ok.exitCode, 0) << ok.err;
  CliRun r = wbcheck("place -", program + "\nSome notes on this program, pasted by mistake.\n");
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("unexpected text after the program"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
}

// A file as large as the user says it may be: the cap is --max-input-mb (default 1024 MiB),
// checked before the file is read, for mapped files and standard input alike.
TEST(CliInput, MaxInputMbCapsAndLiftsTheSize) {
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() / ("wbcheck_cli_large_" + std::to_string(::getpid()) + ".txt");
  std::string program = wb::testing::readFile(hazard("h01_old_value_reader.txt"));
  std::string comments;
  while (comments.size() < (std::size_t{3} << 20)) comments += "# padding: a comment line the reader reads and drops\n";
  std::ofstream(file) << comments << program;
  CliRun capped = wbcheck("place " + file.string() + " --max-input-mb 2");
  EXPECT_EQ(capped.exitCode, 2);
  EXPECT_NE(capped.err.find("larger than 2 MiB (raise --max-input-mb"), std::string::npos) << capped.err;
  CliRun cappedStdin = wbcheck("place - --max-input-mb 2", comments + program);
  EXPECT_EQ(cappedStdin.exitCode, 2);
  EXPECT_NE(cappedStdin.err.find("larger than 2 MiB"), std::string::npos) << cappedStdin.err;
  CliRun lifted = wbcheck("place " + file.string() + " --max-input-mb 4");
  EXPECT_EQ(lifted.exitCode, 0) << lifted.err;
  EXPECT_EQ(lifted.out, wbcheck("place -", program).out);
  EXPECT_EQ(wbcheck("place " + file.string() + " --max-input-mb 0").exitCode, 2);
  std::filesystem::remove(file);
}

// A program printed without a signature is placed with an inferred one, and says so.
TEST(CliPlace, AnInferredSignatureIsSaidToBeInferred) {
  CliRun r = wbcheck("place " + (wb::testing::realGraphsDir() / "16-pt-functionalize-batchnorm-running-stats-copy_.txt").string());
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("# inferred by wbcheck: the input printed no signature"), std::string::npos) << r.out;
  CliRun explicitSignature = wbcheck("place " + hazard("h01_old_value_reader.txt"));
  EXPECT_EQ(explicitSignature.out.find("inferred"), std::string::npos);
}

TEST(CliInput, MissingFileUnknownPlacementAndBadUsageExitTwo) {
  EXPECT_EQ(wbcheck("place /nonexistent/program.txt").exitCode, 2);
  EXPECT_EQ(wbcheck("place " + hazard("h01_old_value_reader.txt") + " --placement sideways").exitCode, 2);
  EXPECT_EQ(wbcheck("place").exitCode, 2);
  EXPECT_EQ(wbcheck("no-such-command").exitCode, 2);
  EXPECT_EQ(wbcheck("").exitCode, 2);
}

TEST(CliInput, HelpAndVersionExitZero) {
  CliRun help = wbcheck("--help");
  EXPECT_EQ(help.exitCode, 0);
  for (const char* sub : {"place", "plan", "check", "gen"}) EXPECT_NE(help.out.find(sub), std::string::npos) << sub;
  EXPECT_EQ(wbcheck("place --help").exitCode, 0);
  CliRun version = wbcheck("--version");
  EXPECT_EQ(version.exitCode, 0);
  EXPECT_NE(version.out.find("wbcheck"), std::string::npos);
}

TEST(CliCheck, EarlyHoldsAndPr20744FailsOnH5) {
  CliRun early = wbcheck("check " + hazard("h05_view_copy_becomes_view.txt"));
  EXPECT_EQ(early.exitCode, 0) << early.out << early.err;
  CliRun pr = wbcheck("check " + hazard("h05_view_copy_becomes_view.txt") + " --placement pr20744 --seed 7");
  EXPECT_EQ(pr.exitCode, 1) << pr.out;
  EXPECT_NE(pr.out.find("alias-views"), std::string::npos) << pr.out;
  EXPECT_NE(pr.out.find("--placement pr20744@82a8901 --seed 7"), std::string::npos) << "replay command: " << pr.out;
}

TEST(CliCheck, JsonVerdict) {
  CliRun r = wbcheck("check " + hazard("h04_list_argument_write.txt") + " --placement pr20744@ff2892d4 --json");
  EXPECT_EQ(r.exitCode, 1);
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["verdict"], "placement-bug");
  ASSERT_FALSE(j["bugs"].empty());
  EXPECT_EQ(j["bugs"][0]["kind"], "placement != S_par");
  EXPECT_EQ(j["exit_code"], 1);
}

TEST(CliPlan, EarlyNeverNeedsMorePeakMemoryAndWritesAnSvg) {
  const auto svg = std::filesystem::temp_directory_path() / ("wbcheck_cli_plan_" + std::to_string(::getpid()) + ".svg");
  CliRun r = wbcheck("plan " + (wb::testing::corpusDir() / "models" / "decoder_slice_scatter.txt").string() +
                  " --json --svg " + svg.string());
  ASSERT_EQ(r.exitCode, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_LE(j["early"]["peak_live_bytes"].get<long>(), j["end"]["peak_live_bytes"].get<long>());
  EXPECT_GT(j["saving"]["peak_bytes"].get<long>(), 0);
  const std::string chart = wb::testing::readFile(svg);
  EXPECT_NE(chart.find("<svg"), std::string::npos);
  EXPECT_NE(chart.find("</svg>"), std::string::npos);
  std::filesystem::remove(svg);
}

// Issue 3's acceptance: `place --explain` and `plan` work on every program of the corpus: exit 0,
// an explanation per copy (each placed copy is named in the output), and an SVG chart.
TEST(CliPlan, PlaceExplainAndPlanWorkOnEveryCorpusProgram) {
  const auto svg = std::filesystem::temp_directory_path() / ("wbcheck_cli_all_" + std::to_string(::getpid()) + ".svg");
  std::size_t files = 0;
  for (const auto& path : wb::testing::filesUnder(wb::testing::corpusDir())) {
    ++files;
    CliRun placed = wbcheck("place " + path.string() + " --explain");
    EXPECT_EQ(placed.exitCode, 0) << path << "\n" << placed.err;
    CliRun json = wbcheck("place " + path.string() + " --explain --json");
    ASSERT_EQ(json.exitCode, 0) << path << "\n" << json.err;
    const nlohmann::json parsed = nlohmann::json::parse(json.out);  // the loop reads into it
    for (const auto& copy : parsed.at("copies")) {
      EXPECT_FALSE(copy["why"].get<std::string>().empty()) << path;
      EXPECT_NE(placed.out.find(copy["copy"].get<std::string>()), std::string::npos) << path;
    }
    CliRun plan = wbcheck("plan " + path.string() + " --svg " + svg.string());
    EXPECT_EQ(plan.exitCode, 0) << path << "\n" << plan.err;
    EXPECT_NE(wb::testing::readFile(svg).find("</svg>"), std::string::npos) << path;
    std::filesystem::remove(svg);
  }
  EXPECT_GT(files, 50u);
}

TEST(CliGen, TheSameSeedGivesTheSameProgram) {
  CliRun a = wbcheck("gen --seed 42"), b = wbcheck("gen --seed 42"), c = wbcheck("gen --seed 43");
  ASSERT_EQ(a.exitCode, 0);
  EXPECT_EQ(a.out, b.out);
  EXPECT_NE(a.out, c.out);
  // What gen prints is a program wbcheck reads back and the early placement gets right.
  CliRun checked = wbcheck("check -", a.out);
  EXPECT_EQ(checked.exitCode, 0) << checked.out << checked.err;
}

TEST(CliGen, ModelZooBuildsCheckableModels) {
  CliRun decoder = wbcheck("gen --model decoder --layers 3 --cache-update slice_scatter");
  ASSERT_EQ(decoder.exitCode, 0) << decoder.err;
  // Three layers, two caches each: six buffer mutations.
  std::size_t mutations = 0;
  for (std::size_t at = 0; (at = decoder.out.find("BUFFER_MUTATION", at)) != std::string::npos; ++at) ++mutations;
  EXPECT_EQ(mutations, 6u);
  CliRun checked = wbcheck("check -", decoder.out);
  EXPECT_EQ(checked.exitCode, 0) << checked.out << checked.err;
  CliRun planned = wbcheck("plan - --json", decoder.out);
  ASSERT_EQ(planned.exitCode, 0) << planned.err;
  EXPECT_GT(nlohmann::json::parse(planned.out)["saving"]["peak_bytes"].get<long>(), 0);
  EXPECT_EQ(wbcheck("gen --model transformer").exitCode, 2);
  EXPECT_EQ(wbcheck("gen --model decoder --cache-update nowhere").exitCode, 2);
  EXPECT_EQ(wbcheck("gen --model decoder --layers 0").exitCode, 2);
}


// --- validate ---

std::string validateFile(const std::string& name) { return (wb::testing::corpusDir() / "validate" / name).string(); }
std::string realGraph(const std::string& name) { return (wb::testing::realGraphsDir() / name).string(); }

TEST(CliValidate, ExecuTorchsOwnOutputIsEquivalentExitZero) {
  CliRun r = wbcheck("validate " + validateFile("04-et-mutable-buffers-before-writeback-signature.txt") + " " +
                     realGraph("05-et-mutable-buffers-after-writeback.txt"));
  EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("verdict: equivalent"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("AFTER has no signature"), std::string::npos) << r.out;
}

TEST(CliValidate, ARefutationExitsOneWithTheOraclesDifference) {
  CliRun r = wbcheck("validate " + validateFile("before_two_buffers.txt") + " " + validateFile("after_copy_too_early.txt"));
  EXPECT_EQ(r.exitCode, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("verdict: not-equivalent"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("oracle (the solver's model): output 0 (%add_1) element"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(": BEFORE 0x"), std::string::npos) << r.out;
}

TEST(CliValidate, InputErrorsExitTwo) {
  CliRun noSignature = wbcheck("validate " + realGraph("04-et-mutable-buffers-before-writeback.txt") + " " +
                               realGraph("05-et-mutable-buffers-after-writeback.txt"));
  EXPECT_EQ(noSignature.exitCode, 2);
  EXPECT_NE(noSignature.err.find("write BEFORE's graph signature in"), std::string::npos) << noSignature.err;
  CliRun missing = wbcheck("validate " + validateFile("before_two_buffers.txt") + " /nonexistent/after.txt");
  EXPECT_EQ(missing.exitCode, 2);
  CliRun otherInputs = wbcheck("validate " + validateFile("before_two_buffers.txt") + " " + realGraph("05-et-mutable-buffers-after-writeback.txt"));
  EXPECT_EQ(otherInputs.exitCode, 2);
  EXPECT_NE(otherInputs.err.find("AFTER has no signature and 4 placeholders, BEFORE's signature has 3 inputs"), std::string::npos)
      << otherInputs.err;
}

TEST(CliValidate, ASolverOutOfResourcesIsUnknownExitThree) {
  CliRun r = wbcheck("validate " + validateFile("before_two_buffers.txt") + " " + validateFile("after_copy_too_early.txt") +
                     " --rlimit 1");
  EXPECT_EQ(r.exitCode, 3) << r.out << r.err;
  EXPECT_NE(r.out.find("verdict: unknown"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("the solver gave up"), std::string::npos) << r.out;
}

TEST(CliValidate, JsonHasTheDocumentedShape) {
  CliRun r = wbcheck("validate " + validateFile("before_two_buffers.txt") + " " + validateFile("after_copy_too_early.txt") + " --json");
  ASSERT_EQ(r.exitCode, 1) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["tool"], "wbcheck");
  EXPECT_TRUE(j["command"].is_array());
  EXPECT_EQ(j["verdict"], "not-equivalent");
  EXPECT_EQ(j["exit_code"], 1);
  EXPECT_EQ(j["tier"], "element");
  EXPECT_TRUE(j["notes"].is_array());
  EXPECT_EQ(j["matched_nodes"], 7);
  EXPECT_EQ(j["unmatched_after_nodes"], (nlohmann::json{"copy_", "copy__1"}));
  ASSERT_EQ(j["modes"].size(), 1u);
  EXPECT_EQ(j["modes"][0]["view_mode"], "copy-views");
  EXPECT_EQ(j["modes"][0]["verdict"], "not-equivalent");
  for (const char* key : {"detail", "solver_ms", "compared_elements", "different_terms", "counterexample"})
    EXPECT_TRUE(j["modes"][0].contains(key)) << key;
  const nlohmann::json& c = j["counterexample"];
  EXPECT_EQ(c["confirmed"], true);
  EXPECT_EQ(c["replayed_with"], "the solver's model");
  EXPECT_EQ(c["oracle"]["observation"], "output 0 (%add_1)");
  EXPECT_EQ(c["oracle"]["is_output"], true);
  EXPECT_NE(c["oracle"]["before"], c["oracle"]["after"]);
  EXPECT_EQ(c["inputs"]["b_a"].size(), 4u);
  EXPECT_TRUE(c["behaviours"].is_array());
  EXPECT_TRUE(j["smt_dump"].is_array());

  CliRun error = wbcheck("validate " + realGraph("04-et-mutable-buffers-before-writeback.txt") + " " +
                         realGraph("05-et-mutable-buffers-after-writeback.txt") + " --json");
  EXPECT_EQ(error.exitCode, 2);
  nlohmann::json e = nlohmann::json::parse(error.out);
  EXPECT_EQ(e["verdict"], "error");
  EXPECT_EQ(e["exit_code"], 2);
}

TEST(CliValidate, SmtDumpFilesAreAnsweredByZ3Alone) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("wbcheck_smt_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  for (const auto& [after, answer] : {std::pair{"after_copy_too_early.txt", "sat"}, std::pair{"after_equivalent_renamed_reordered.txt", "unsat"}}) {
    CliRun r = wbcheck("validate " + validateFile("before_two_buffers.txt") + " " + validateFile(after) + " --smt-dump " + dir.string());
    ASSERT_TRUE(r.exitCode == 0 || r.exitCode == 1) << r.err;
    const std::filesystem::path file = dir / "validate_copy_views-00000.smt2";  // the first query
    ASSERT_TRUE(std::filesystem::exists(file));
    const std::string z3 = "/usr/bin/z3 " + file.string() + " > " + (dir / "answer.txt").string();
    ASSERT_EQ(std::system(z3.c_str()), 0);
    std::string got = wb::testing::readFile(dir / "answer.txt");
    EXPECT_EQ(got.substr(0, got.find('\n')), answer) << after;
    std::filesystem::remove_all(dir);
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
