// tests/passcmd_test.cpp: the pass under test as an external command (passcmd/, issue 19):
// the child process runner (input, output, exit, signals, time limit, output cap), the one-shot
// protocol's outcomes, the persistent protocol's session against an adapter that breaks its
// frames (tests/adapters/misbehaving_persistent.py), and `wbcheck check --pass-cmd` end to end,
// with the Python adapter of upstream's pass (tools/adapters/upstream_end.py) and with adapters
// that misbehave.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "core/text.h"
#include "passcmd/external_pass.h"
#include "passcmd/pass_runner.h"
#include "passcmd/persistent.h"
#include "passcmd/process.h"
#include "tests/cli_runner.h"
#include "tests/testing.h"

namespace wb {
namespace {

using passcmd::PassOutcome;
using passcmd::ProcessLimits;
using passcmd::ProcessResult;
using passcmd::runShellCommand;

ProcessLimits limitsOf(int timeoutMs) {
  ProcessLimits limits;
  limits.timeout = std::chrono::milliseconds(timeoutMs);
  return limits;
}

TEST(PassProcess, InputComesBackThroughCatWhateverItsSize) {
  // Larger than any pipe buffer: writing and reading must interleave.
  std::string input;
  for (int i = 0; input.size() < (3u << 20); ++i) input += "line " + std::to_string(i) + "\n";
  ProcessResult r = runShellCommand("cat", input, limitsOf(20'000));
  EXPECT_TRUE(r.exitedZero()) << passcmd::describeEnd(r, limitsOf(20'000));
  EXPECT_EQ(r.out, input);
}

TEST(PassProcess, ExitStatusAndStandardErrorAreReported) {
  ProcessResult r = runShellCommand("echo oops >&2; exit 3", "", limitsOf(10'000));
  EXPECT_FALSE(r.exitedZero());
  EXPECT_EQ(r.exitCode, 3);
  EXPECT_EQ(r.err, "oops\n");
  EXPECT_EQ(passcmd::describeEnd(r, limitsOf(10'000)), "exit status 3");
}

TEST(PassProcess, ASignalIsNamed) {
  ProcessResult r = runShellCommand("kill -SEGV $$", "", limitsOf(10'000));
  EXPECT_EQ(r.signal, 11);
  EXPECT_EQ(passcmd::describeEnd(r, limitsOf(10'000)), "killed by signal 11 (SIGSEGV)");
}

TEST(PassProcess, AHangIsKilledAtTheDeadline) {
  const auto start = std::chrono::steady_clock::now();
  ProcessResult r = runShellCommand("sleep 30", "", limitsOf(300));
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_TRUE(r.timedOut);
  EXPECT_FALSE(r.exitedZero());
  EXPECT_LT(took, std::chrono::seconds(10));
  EXPECT_EQ(passcmd::describeEnd(r, limitsOf(300)), "no answer within 300 ms");
}

TEST(PassProcess, AChildThatClosesItsOutputButRunsOnIsAHang) {
  ProcessResult r = runShellCommand("exec >&- 2>&-; sleep 30", "", limitsOf(300));
  EXPECT_TRUE(r.timedOut);
}

TEST(PassProcess, EndlessOutputStopsAtTheCap) {
  ProcessLimits limits = limitsOf(20'000);
  limits.maxOutputBytes = 1 << 20;
  ProcessResult r = runShellCommand("yes", "", limits);
  EXPECT_TRUE(r.outputTooLarge);
  EXPECT_FALSE(r.exitedZero());
}

TEST(PassProcess, AChildThatReadsNothingDoesNotEndTheCaller) {
  // The unread input makes the write fail with EPIPE (SIGPIPE is kept from this process).
  ProcessResult r = runShellCommand("exec 0<&-; echo done", std::string(8u << 20, 'x'), limitsOf(10'000));
  EXPECT_TRUE(r.exitedZero());
  EXPECT_EQ(r.out, "done\n");
}

Program hazardProgram(const std::string& name) { return testing::loadProgram(testing::corpusDir() / "hazards" / name); }

// An adapter that misbehaves (a command, or a mode of misbehaving_persistent.py), the outcome
// that is, and what its failure says.
struct Misbehaviour {
  std::string adapter;
  PassOutcome outcome;
  std::string says;
};

TEST(ExternalPass, EachMisbehaviourIsAFindingOfItsOwnKind) {
  const Program program = hazardProgram("h01_old_value_reader.txt");
  const Misbehaviour cases[] = {
      {"cat >/dev/null; echo 'Traceback: boom' >&2; exit 1", PassOutcome::Crashed, "crashed: exit status 1"},
      {"kill -ABRT $$", PassOutcome::Crashed, "SIGABRT"},
      {"sleep 30", PassOutcome::Hung, "hung: no answer within 300 ms"},
      {"cat >/dev/null; echo 'this is not a program'", PassOutcome::Malformed, "malformed"},
      {"head -c 200", PassOutcome::Malformed, "malformed"},
      {"sed 's/b_s/b_t/g'", PassOutcome::Malformed, "does not correspond to its input"},
  };
  for (const Misbehaviour& c : cases) {
    passcmd::ExternalPass pass{c.adapter, limitsOf(300)};
    if (c.outcome != PassOutcome::Hung) pass.limits.timeout = std::chrono::milliseconds(20'000);
    passcmd::ExternalPlacement r = passcmd::placeExternally(program, pass);
    EXPECT_EQ(r.outcome, c.outcome) << c.adapter;
    ASSERT_TRUE(r.placed.failure) << c.adapter;
    EXPECT_NE(r.placed.failure->find(c.says), std::string::npos) << c.adapter << ": " << *r.placed.failure;
  }
  // A crash's standard error is in the failure: where the pass says why.
  passcmd::ExternalPlacement crash = passcmd::placeExternally(program, {cases[0].adapter, limitsOf(20'000)});
  EXPECT_NE(crash.placed.failure->find("Traceback: boom"), std::string::npos) << *crash.placed.failure;
}

TEST(ExternalPass, APassThatPrintsAProgramPlacedIt) {
  const Program program = hazardProgram("h01_old_value_reader.txt");
  passcmd::ExternalPlacement r =
      passcmd::placeExternally(program, {std::string(WBCHECK_BINARY) + " place - --placement early", limitsOf(20'000)});
  ASSERT_EQ(r.outcome, PassOutcome::Placed) << r.placed.failure.value_or("");
  EXPECT_FALSE(r.placed.failure);
  EXPECT_EQ(r.placed.program.graph.nodes.size(), program.graph.nodes.size() + 1);  // one copy_
}

std::string hazardPath(const std::string& name) { return (testing::corpusDir() / "hazards" / name).string(); }

std::string pythonAdapter() {
  return "'python3 " + (testing::sourceDir() / "tools" / "adapters" / "upstream_end.py").string() + "'";
}

// The Python implementation of upstream's pass, checked from outside, gets the verdict the
// built-in model of upstream gets, on every hazard program: the same bugs found (B1, B2, B3,
// H8, H12), the same programs passed.
TEST(CheckPassCmd, APythonPassGetsTheVerdictsOfTheBuiltInModelOfIt) {
  int bugs = 0;
  for (const auto& file : testing::filesUnder(testing::corpusDir() / "hazards")) {
    testing::CliRun builtIn = testing::runWbcheck("check " + file.string() + " --placement upstream");
    testing::CliRun external = testing::runWbcheck("check " + file.string() + " --pass-cmd " + pythonAdapter());
    EXPECT_EQ(external.exitCode, builtIn.exitCode) << file << "\n" << external.out << external.err;
    bugs += external.exitCode == 1;
  }
  EXPECT_GE(bugs, 5);
}

TEST(CheckPassCmd, TheReportNamesThePassAndTheReplayLineRunsItAgain) {
  testing::CliRun r = testing::runWbcheck("check " + hazardPath("b2_copies_first_positional_specs.txt") +
                                          " --pass-cmd " + pythonAdapter());
  ASSERT_EQ(r.exitCode, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("placed by --pass-cmd 'python3 "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("replay: wbcheck check " + hazardPath("b2_copies_first_positional_specs.txt") + " --pass-cmd 'python3 "),
            std::string::npos)
      << r.out;
}

TEST(CheckPassCmd, MisbehavingPassesAreBugsWithTheirKind) {
  const std::string file = hazardPath("h01_old_value_reader.txt");
  testing::CliRun crash = testing::runWbcheck("check " + file + " --pass-cmd 'exit 4' --json");
  ASSERT_EQ(crash.exitCode, 1) << crash.out << crash.err;
  nlohmann::json j = nlohmann::json::parse(crash.out);
  EXPECT_EQ(j["pass_outcome"], "crash");
  EXPECT_EQ(j["verdict"], "placement-bug");
  EXPECT_NE(j["placement_failure"].get<std::string>().find("exit status 4"), std::string::npos);

  testing::CliRun hang = testing::runWbcheck("check " + file + " --pass-cmd 'sleep 30' --pass-timeout-ms 200 --json");
  ASSERT_EQ(hang.exitCode, 1) << hang.out << hang.err;
  EXPECT_EQ(nlohmann::json::parse(hang.out)["pass_outcome"], "hang");

  testing::CliRun garbage = testing::runWbcheck("check " + file + " --pass-cmd 'echo garbage' --json");
  ASSERT_EQ(garbage.exitCode, 1) << garbage.out << garbage.err;
  EXPECT_EQ(nlohmann::json::parse(garbage.out)["pass_outcome"], "malformed output");

  // A pass that returns its input unchanged drops the write-back: the oracle finds it.
  testing::CliRun identity = testing::runWbcheck("check " + file + " --pass-cmd cat --json");
  ASSERT_EQ(identity.exitCode, 1) << identity.out << identity.err;
  EXPECT_EQ(nlohmann::json::parse(identity.out)["pass_outcome"], "placed");
}

// --validate proves the external pass's output equivalent for every input (Z3); on every
// hazard program its verdict is the oracle's: the two are independent, so a disagreement is a
// bug of one of them.
TEST(CheckPassCmd, ValidationOfThePythonPassAgreesWithTheOracleOnEveryHazard) {
  int refuted = 0;
  for (const auto& file : testing::filesUnder(testing::corpusDir() / "hazards")) {
    testing::CliRun r = testing::runWbcheck("check " + file.string() + " --pass-cmd " + pythonAdapter() + " --validate --json");
    ASSERT_TRUE(r.exitCode == 0 || r.exitCode == 1) << file << "\n" << r.out << r.err;
    const nlohmann::json j = nlohmann::json::parse(r.out);
    ASSERT_TRUE(j["validation"].is_object()) << file << "\n" << r.out;
    const std::string oracle = j["verdict"], proof = j["validation"]["proof_verdict"];
    EXPECT_EQ(proof == "refuted", oracle == "placement-bug") << file << ": oracle " << oracle << ", proof " << proof;
    EXPECT_EQ(r.exitCode, oracle == "placement-bug" ? 1 : 0) << file;
    refuted += proof == "refuted";
  }
  EXPECT_GE(refuted, 5);
}

TEST(CheckPassCmd, WbcheckItsOwnPlacementAsACommandHolds) {
  testing::CliRun r = testing::runWbcheck("check " + hazardPath("h10_ancestor_sibling_alias.txt") + " --pass-cmd '" +
                                          std::string(WBCHECK_BINARY) + " place - --placement early'");
  EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
}

TEST(CheckPassCmd, PlacementAndPassCmdExcludeEachOther) {
  testing::CliRun r =
      testing::runWbcheck("check " + hazardPath("h01_old_value_reader.txt") + " --placement end --pass-cmd cat");
  EXPECT_EQ(r.exitCode, 2) << r.out << r.err;
}

// ---------------------------------------------------------------------------------------------
// The persistent protocol.

passcmd::PassRunner persistentAdapter(const std::string& mode, int timeoutMs = 20'000) {
  passcmd::ExternalPass pass;
  pass.command = "python3 " + (testing::sourceDir() / "tests" / "adapters" / "misbehaving_persistent.py").string() + " " + mode;
  pass.limits = limitsOf(timeoutMs);
  pass.persistent = true;
  return passcmd::PassRunner(pass);
}

TEST(PersistentPass, OneProcessAnswersProgramAfterProgram) {
  const passcmd::PassRunner runner = persistentAdapter("echo");
  const Program a = hazardProgram("h01_old_value_reader.txt"), b = hazardProgram("h10_ancestor_sibling_alias.txt");
  for (const Program* p : {&a, &b, &a, &b}) {
    const passcmd::ExternalPlacement r = runner.place(*p);
    ASSERT_EQ(r.outcome, PassOutcome::Placed) << r.placed.failure.value_or("");
    EXPECT_EQ(r.placed.program, *p);
  }
  EXPECT_EQ(runner.processStarts(), 1);
  EXPECT_NE(runner.words().find("--persistent"), std::string::npos) << runner.words();
}

TEST(PersistentPass, TheProgramThatKillsTheProcessIsTheCrashAndTheNextGetsAFreshOne) {
  const passcmd::PassRunner runner = persistentAdapter("crash-on:aten.relu_");
  const Program fine = hazardProgram("h01_old_value_reader.txt"), killer = hazardProgram("h10_ancestor_sibling_alias.txt");
  EXPECT_EQ(runner.place(fine).outcome, PassOutcome::Placed);
  const passcmd::ExternalPlacement crash = runner.place(killer);
  EXPECT_EQ(crash.outcome, PassOutcome::Crashed);
  ASSERT_TRUE(crash.placed.failure);
  EXPECT_NE(crash.placed.failure->find("exit status 7"), std::string::npos) << *crash.placed.failure;
  EXPECT_NE(crash.placed.failure->find("aten.relu_: not supported"), std::string::npos) << *crash.placed.failure;
  EXPECT_EQ(runner.place(fine).outcome, PassOutcome::Placed);
  EXPECT_EQ(runner.place(killer).outcome, PassOutcome::Crashed);
  EXPECT_EQ(runner.processStarts(), 2);  // the first, and the one after the first crash
}

TEST(PersistentPass, EachBrokenFrameIsAFindingOfItsKind) {
  const Program program = hazardProgram("h01_old_value_reader.txt");
  // The time limit counts the interpreter's start too (through a pyenv shim, on a loaded
  // machine, over a second): only the case that is about the limit has a short one.
  const Misbehaviour cases[] = {
      {"partial", PassOutcome::Hung, "no answer within 1000 ms"},
      {"short", PassOutcome::Malformed, "bytes and"},
      {"oversize", PassOutcome::Malformed, "the frame announces 999999999999 bytes"},
      {"not-a-count", PassOutcome::Malformed, "'hello world' is not a byte count"},
      {"die-mid-frame", PassOutcome::Crashed, "exit status 1 before a complete answer"},
  };
  for (const Misbehaviour& c : cases) {
    const passcmd::PassRunner runner = persistentAdapter(c.adapter, c.outcome == PassOutcome::Hung ? 1'000 : 20'000);
    // Twice: after a broken frame the session starts over, and breaks the same way again.
    for (int round = 0; round < 2; ++round) {
      const auto start = std::chrono::steady_clock::now();
      const passcmd::ExternalPlacement r = runner.place(program);
      EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(15)) << c.adapter;
      EXPECT_EQ(r.outcome, c.outcome) << c.adapter;
      ASSERT_TRUE(r.placed.failure) << c.adapter;
      EXPECT_NE(r.placed.failure->find(c.says), std::string::npos) << c.adapter << ": " << *r.placed.failure;
    }
    EXPECT_EQ(runner.processStarts(), 2) << c.adapter;
  }
}

TEST(PersistentPass, BytesBetweenAnswersRestartTheProcessBeforeTheNextProgram) {
  const passcmd::PassRunner runner = persistentAdapter("noise-between");
  const Program program = hazardProgram("h01_old_value_reader.txt");
  EXPECT_EQ(runner.place(program).outcome, PassOutcome::Placed);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the stray bytes arrive
  const passcmd::ExternalPlacement second = runner.place(program);
  EXPECT_EQ(second.outcome, PassOutcome::Placed) << second.placed.failure.value_or("");
  EXPECT_EQ(runner.processStarts(), 2);
}

TEST(PersistentPass, StandardErrorWhileAnsweringIsKeptWithTheAnswer) {
  const passcmd::PassRunner runner = persistentAdapter("stderr");
  const Program program = hazardProgram("h01_old_value_reader.txt");
  const passcmd::ExternalPlacement r = runner.place(program);
  EXPECT_EQ(r.outcome, PassOutcome::Placed);
  EXPECT_NE(r.stdErr.find("placing " + std::to_string(writeProgram(program).size()) + " bytes"), std::string::npos)
      << r.stdErr;
}

// ---------------------------------------------------------------------------------------------
// Pipelined requests (PersistentSession::exchange of several, PassRunner::placeAll).

// `cat` echoes frames: a persistent adapter that reads ahead as far as the pipe lets it. Requests
// far larger than a pipe, many of them, fill both pipes at once: the session must keep reading
// answers while it writes, or both sides would block for good.
TEST(PersistentPass, PipelinedRequestsLargerThanThePipesComeBackInOrder) {
  passcmd::PersistentSession session("cat", limitsOf(20'000));
  std::vector<std::string> texts;
  for (int i = 0; i < 40; ++i) texts.push_back(std::string(std::size_t(1000) << (i % 9), static_cast<char>('a' + i % 26)) + std::to_string(i));
  texts.push_back("");  // an empty frame is a frame
  const std::vector<std::string_view> requests(texts.begin(), texts.end());
  const std::vector<passcmd::FrameResult> answers = session.exchange(requests);
  ASSERT_EQ(answers.size(), texts.size());
  for (std::size_t i = 0; i < texts.size(); ++i) {
    EXPECT_EQ(answers[i].status, passcmd::FrameStatus::Answered) << i << ": " << answers[i].why;
    EXPECT_TRUE(answers[i].payload == texts[i]) << i << ": " << answers[i].payload.size() << " bytes";
  }
  EXPECT_EQ(session.starts(), 1);
}

// Five programs in flight, the third of which the process cannot take: the third is the
// finding (a crash, a hang, a partial frame: the oldest request without an answer is the one the
// process was working on), the two before it are answered, and the two after it are sent again
// to a fresh process and answered.
TEST(PersistentPass, TheRequestAPipelinedProcessBreaksOnIsTheFindingAndTheRestAreSentAgain) {
  const Program fine = hazardProgram("h01_old_value_reader.txt"), killer = hazardProgram("h10_ancestor_sibling_alias.txt");
  const std::vector<Program> programs = {fine, fine, killer, fine, fine};
  // The limit covers the interpreter's start (the first request waits for it) on a loaded
  // machine; a crash needs none.
  const Misbehaviour cases[] = {
      {"crash-on:aten.relu_", PassOutcome::Crashed, "exit status 7 before a complete answer"},
      {"hang-on:aten.relu_", PassOutcome::Hung, "no answer within 4000 ms"},
      {"partial-on:aten.relu_", PassOutcome::Hung, "no answer within 4000 ms"},
  };
  for (const Misbehaviour& c : cases) {
    const passcmd::PassRunner runner = persistentAdapter(c.adapter, c.outcome == PassOutcome::Hung ? 4'000 : 20'000);
    const auto start = std::chrono::steady_clock::now();
    const std::vector<passcmd::ExternalPlacement> placed = runner.placeAll(programs);
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(15)) << c.adapter;
    ASSERT_EQ(placed.size(), programs.size()) << c.adapter;
    for (std::size_t i = 0; i < programs.size(); ++i) {
      if (i == 2) continue;
      EXPECT_EQ(placed[i].outcome, PassOutcome::Placed) << c.adapter << " #" << i << ": " << placed[i].placed.failure.value_or("");
      EXPECT_EQ(placed[i].placed.program, programs[i]) << c.adapter << " #" << i;
    }
    EXPECT_EQ(placed[2].outcome, c.outcome) << c.adapter;
    ASSERT_TRUE(placed[2].placed.failure) << c.adapter;
    EXPECT_NE(placed[2].placed.failure->find(c.says), std::string::npos) << c.adapter << ": " << *placed[2].placed.failure;
    EXPECT_EQ(runner.processStarts(), 2) << c.adapter;
  }
}

// A pipelined process's standard error comes back with the answers, all of it, in order (the
// request each line is kept with is the one answered next when it was read: standard error and
// standard output are two pipes, read in no order of each other). A broken frame mid-pipeline is
// the request it answers.
TEST(PersistentPass, PipelinedRequestsKeepStandardErrorAndBrokenFrames) {
  const Program a = hazardProgram("h01_old_value_reader.txt"), b = hazardProgram("h10_ancestor_sibling_alias.txt");
  const std::vector<Program> programs = {a, b, a};
  const std::vector<passcmd::ExternalPlacement> placed = persistentAdapter("stderr").placeAll(programs);
  ASSERT_EQ(placed.size(), 3u);
  std::string allErr, expected;
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(placed[i].outcome, PassOutcome::Placed) << i;
    allErr += placed[i].stdErr;
    expected += "placing " + std::to_string(writeProgram(programs[i]).size()) + " bytes\n";
  }
  EXPECT_EQ(allErr, expected);
  const passcmd::PassRunner notACount = persistentAdapter("not-a-count");
  const std::vector<passcmd::ExternalPlacement> broken = notACount.placeAll(programs);
  for (const passcmd::ExternalPlacement& r : broken) EXPECT_EQ(r.outcome, PassOutcome::Malformed);
  EXPECT_EQ(notACount.processStarts(), 3);  // every request broke a process of its own
}

// The time limit is per request, counted from the answer before it: three requests in flight
// that take 2 s each are answered under a limit of 4 s (room for the interpreter's start, which
// the first request waits for), though the three take longer.
TEST(PersistentPass, ThePipelinedTimeLimitRunsFromThePreviousAnswer) {
  const Program program = hazardProgram("h01_old_value_reader.txt");
  const std::vector<Program> programs(3, program);
  const passcmd::PassRunner runner = persistentAdapter("slow:2", 4'000);
  const auto start = std::chrono::steady_clock::now();
  const std::vector<passcmd::ExternalPlacement> placed = runner.placeAll(programs);
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(6'000));
  for (const passcmd::ExternalPlacement& r : placed)
    EXPECT_EQ(r.outcome, PassOutcome::Placed) << r.placed.failure.value_or("");
  EXPECT_EQ(runner.processStarts(), 1);
}

TEST(PersistentPass, ThePythonAdapterServesPersistentlyWhatItPlacesOneShot) {
  passcmd::ExternalPass pass{"python3 " + (testing::sourceDir() / "tools" / "adapters" / "upstream_end.py").string(),
                             limitsOf(20'000)};
  const passcmd::PassRunner oneShot(pass);
  pass.command += " --persistent";
  pass.persistent = true;
  const passcmd::PassRunner persistent(pass);
  for (const char* name : {"b1_lineage_of_another_buffer.txt", "b2_copies_first_positional_specs.txt",
                           "b3_view_copy_end_order.txt", "h10_ancestor_sibling_alias.txt"}) {
    const Program program = hazardProgram(name);
    const std::string file = name;
    const passcmd::ExternalPlacement a = oneShot.place(program), b = persistent.place(program);
    EXPECT_EQ(a.outcome, b.outcome) << file;
    EXPECT_EQ(a.placed.program, b.placed.program) << file;
  }
  EXPECT_EQ(persistent.processStarts(), 1);
}

}  // namespace
}  // namespace wb
