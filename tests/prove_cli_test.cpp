// tests/prove_cli_test.cpp: `wbcheck prove` end to end (exit codes 0 proved, 1 refuted, 2 input
// error, 3 unknown; the --json shape; --smt-dump files that z3 answers alone) and the broken
// constraints `wbcheck check` adds to a placement bug.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include "tests/cli_runner.h"
#include "tests/testing.h"

namespace {

using wb::testing::CliRun;
CliRun wbcheck(const std::string& args, const std::string& input = "") { return wb::testing::runWbcheck(args, input); }

std::string hazard(const std::string& name) { return (wb::testing::corpusDir() / "hazards" / name).string(); }

TEST(CliProve, EarlyIsProvedWithItsExplanation) {
  CliRun r = wbcheck("prove " + hazard("h04_list_argument_write.txt"));
  ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("satisfied: yes"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("minimal: yes"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("after %scale_all_: writes %add's storage (value of b_s)  [R3]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("verdict: proved"), std::string::npos) << r.out;
}

TEST(CliProve, ABrokenConstraintIsARefutationInGraphWords) {
  CliRun r = wbcheck("prove " + hazard("h04_list_argument_write.txt") + " --placement pr20744@ff2892d4");
  ASSERT_EQ(r.exitCode, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("VIOLATED: copy_(b_s) at 3 precedes %scale_all_ at 5, which writes %add's storage through list "
                       "argument 0"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("verdict: refuted"), std::string::npos);
}

TEST(CliProve, InputErrorsExitTwo) {
  EXPECT_EQ(wbcheck("prove /nonexistent/file.txt").exitCode, 2);
  EXPECT_EQ(wbcheck("prove " + hazard("h01_old_value_reader.txt") + " --placement sideways").exitCode, 2);
  CliRun bad = wbcheck("prove -", "def forward(self, x):\n    y = torch.ops.aten.add.Tensor(x, z)\n    return (y,)\n");
  EXPECT_EQ(bad.exitCode, 2);
  EXPECT_NE(bad.err.find("<stdin>:"), std::string::npos) << bad.err;
}

TEST(CliProve, ASolverLimitIsUnknownExitThreeNeverAPass) {
  CliRun r = wbcheck("prove " + hazard("h05_view_copy_becomes_view.txt") + " --rlimit 1");
  EXPECT_EQ(r.exitCode, 3) << r.out << r.err;
  EXPECT_NE(r.out.find("verdict: unknown (satisfaction query: rlimit exhausted"), std::string::npos) << r.out;
}

// Z3 takes a 32-bit rlimit: every command that runs it refuses a larger one as a usage error
// (it would otherwise wrap to a small limit and turn proofs into unknowns).
TEST(CliProve, AnRlimitZ3CannotTakeIsAUsageError) {
  const std::string program = hazard("h05_view_copy_becomes_view.txt");
  for (const std::string& command : {"prove " + program, "validate " + program + " " + program,
                                    "check " + program + " --validate"}) {
    SCOPED_TRACE(command);
    CliRun r = wbcheck(command + " --rlimit 4294967296");
    EXPECT_EQ(r.exitCode, 2) << r.out << r.err;
    EXPECT_NE(r.err.find("--rlimit"), std::string::npos) << r.err;
    EXPECT_NE(wbcheck(command + " --rlimit 4294967295").exitCode, 2);  // the largest is taken
  }
}

// A program ExecuTorch never makes (an in-place op annotated with _share_alloc_with_arg_idx,
// CI's text_program_fuzzer found one) is judged by no placement: the oracle reports it as a
// finding about the program, and prove refuses it (exit 2, naming the node) instead of refuting
// early on it or saying proved.
TEST(CliProve, AProgramOutsideReinplacesDomainIsNotJudged) {
  const std::string file =
      (wb::testing::corpusDir() / "regressions" / "false-alarms" / "early_share_alloc_on_inplace_op.txt").string();
  CliRun r = wbcheck("prove " + file);
  EXPECT_EQ(r.exitCode, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("not judged: ExecuTorch makes no program with an annotation outside reinplace's domain"),
            std::string::npos) << r.err;
  EXPECT_NE(r.err.find("is an in-place or out= op"), std::string::npos) << r.err;
  CliRun json = wbcheck("prove " + file + " --json");
  EXPECT_EQ(json.exitCode, 2);
  const nlohmann::json j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["verdict"], "error");
  EXPECT_EQ(j["exit_code"], 2);
  CliRun check = wbcheck("check " + file);
  EXPECT_NE(check.out.find("placement not judged"), std::string::npos) << check.out;
}

TEST(CliProve, JsonHasTheDocumentedShape) {
  CliRun r = wbcheck("prove " + hazard("h08b_copy_cycle_swap.txt") + " --json");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  for (const char* key : {"tool", "version", "command", "file", "placement", "verdict", "exit_code", "ordering"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_EQ(j["verdict"], "proved");
  EXPECT_EQ(j["exit_code"], 0);
  const nlohmann::json& o = j["ordering"];
  for (const char* key : {"verdict", "reason", "satisfied", "minimal", "minimality_required", "faults", "violations",
                          "more_violations", "inserted", "disagreements", "dependences", "queries", "rlimit_used",
                          "solver_seconds", "seconds"})
    EXPECT_TRUE(o.contains(key)) << key;
  EXPECT_EQ(o["satisfied"], true);
  EXPECT_EQ(o["minimal"], true);
  ASSERT_EQ(o["inserted"].size(), 3u);  // a clone and two copies: the swap is a cycle
  int clones = 0;
  for (const nlohmann::json& u : o["inserted"]) {
    for (const char* key : {"name", "text", "kind", "target", "value", "clone", "output_index", "position", "after",
                            "minimal", "explanation", "rule", "binding", "core", "earliest_after", "core_explanation",
                            "agrees_with_core", "disagreement"})
      EXPECT_TRUE(u.contains(key)) << key;
    if (u["kind"] == "clone") ++clones;
    else EXPECT_EQ(u["agrees_with_core"], true) << u.dump();
  }
  EXPECT_EQ(clones, 1);

  CliRun refuted = wbcheck("prove " + hazard("h05_view_copy_becomes_view.txt") + " --placement draft13857 --json");
  ASSERT_EQ(refuted.exitCode, 1);
  const nlohmann::json v = nlohmann::json::parse(refuted.out)["ordering"]["violations"];
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0]["rule"], "R2");
  EXPECT_EQ(v[0]["node"], "sum_1");
  EXPECT_EQ(v[0]["root"], "b_s");
  EXPECT_EQ(v[0]["view_modes"], "alias-views");
  EXPECT_EQ(v[0]["live"], true);
}

// prove runs the ordering proof and the equivalence proof (the placed program against the
// program under S_par, as validate does); the verdict is refuted if either refutes.
TEST(CliProve, EquivalenceIsProvedBesideTheOrderingAndOnlySelectsOne) {
  CliRun both = wbcheck("prove " + hazard("h08b_copy_cycle_swap.txt"));
  ASSERT_EQ(both.exitCode, 0) << both.out << both.err;
  EXPECT_NE(both.out.find("equivalence proof of placement early"), std::string::npos) << both.out;
  EXPECT_NE(both.out.find("verdict: equivalent"), std::string::npos) << both.out;
  EXPECT_NE(both.out.find("prove: proved (ordering proved, equivalence proved)"), std::string::npos) << both.out;

  // pr20744 copies b_a's new value into b_b after the copy into b_a overwrote it (H8): both
  // proofs refute, the equivalence proof with a counterexample the oracle confirms.
  CliRun refuted = wbcheck("prove " + hazard("h08_copy_reads_other_copys_buffer.txt") + " --placement pr20744 --json");
  ASSERT_EQ(refuted.exitCode, 1) << refuted.out << refuted.err;
  const nlohmann::json j = nlohmann::json::parse(refuted.out);
  EXPECT_EQ(j["verdict"], "refuted");
  EXPECT_EQ(j["ordering"]["verdict"], "refuted");
  const nlohmann::json& e = j["equivalence"];
  for (const char* key : {"verdict", "exit_code", "tier", "modes", "counterexample", "proof_verdict", "total_ms"})
    EXPECT_TRUE(e.contains(key)) << key;
  EXPECT_EQ(e["proof_verdict"], "refuted");
  EXPECT_EQ(e["verdict"], "not-equivalent");
  EXPECT_EQ(e["counterexample"]["confirmed"], true) << e.dump();
  EXPECT_EQ(e["counterexample"]["oracle"]["observation"], "b_b") << e.dump();

  CliRun ordering =
      wbcheck("prove " + hazard("h08_copy_reads_other_copys_buffer.txt") + " --placement pr20744 --json --only ordering");
  ASSERT_EQ(ordering.exitCode, 1);
  const nlohmann::json o = nlohmann::json::parse(ordering.out);
  EXPECT_TRUE(o.contains("ordering"));
  EXPECT_FALSE(o.contains("equivalence"));

  // Only the equivalence: end is equivalent (it is S_par's order) and needs no minimality.
  CliRun equivalence = wbcheck("prove " + hazard("h04_list_argument_write.txt") + " --placement end --only equivalence");
  ASSERT_EQ(equivalence.exitCode, 0) << equivalence.out << equivalence.err;
  EXPECT_EQ(equivalence.out.find("ordering proof"), std::string::npos) << equivalence.out;
  EXPECT_NE(equivalence.out.find("verdict: equivalent"), std::string::npos) << equivalence.out;

  EXPECT_EQ(wbcheck("prove " + hazard("h04_list_argument_write.txt") + " --only both").exitCode, 2);
}

TEST(CliProve, SmtDumpWritesQueriesZ3AnswersAlone) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("wbcheck_prove_dump_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  CliRun r = wbcheck("prove " + hazard("h10_ancestor_sibling_alias.txt") + " --smt-dump " + dir.string());
  ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
  const std::vector<std::filesystem::path> files = wb::testing::filesUnder(dir, {".smt2"});
  ASSERT_GE(files.size(), 2u);  // the satisfaction query and a minimality query at least
  for (const auto& file : files) {
    const std::string text = wb::testing::readFile(file);
    EXPECT_NE(text.find("(check-sat-assuming"), std::string::npos) << file;
    // The answer wbcheck's Z3 gave, as a comment at the end; z3 must give the same alone.
    std::smatch m;
    ASSERT_TRUE(std::regex_search(text, m, std::regex("; answered (sat|unsat)"))) << file;
    if (!std::filesystem::exists("/usr/bin/z3")) continue;
    const std::filesystem::path out = file.string() + ".out";
    ASSERT_EQ(std::system(("/usr/bin/z3 " + file.string() + " > " + out.string() + " 2>&1").c_str()), 0) << file;
    const std::string answer = wb::testing::readFile(out);
    EXPECT_EQ(answer.substr(0, answer.find('\n')), m[1].str()) << file << "\n" << answer;
  }
  std::filesystem::remove_all(dir);
}

TEST(CliCheck, APlacementBugNamesTheBrokenConstraintAndTheFirstDivergingNode) {
  CliRun r = wbcheck("check " + hazard("h10_ancestor_sibling_alias.txt") + " --placement pr20744 --json");
  ASSERT_EQ(r.exitCode, 1) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["bugs"].size(), 2u);  // both view modes
  for (const nlohmann::json& bug : j["bugs"]) {
    // The copy read the value before %add_ wrote it: the copy is where the runs part.
    EXPECT_EQ(bug["first_diverging_node"], "copy__default") << bug.dump();
    ASSERT_EQ(bug["broken_constraints"].size(), 1u) << bug.dump();
    EXPECT_EQ(bug["broken_constraints"][0],
              "copy_(b_s) at 4 precedes %add_ at 5, which writes %mul's storage, shared by the value %relu_");
  }
  EXPECT_EQ(j["ordering"]["verdict"], "refuted");

  CliRun text = wbcheck("check " + hazard("h05_view_copy_becomes_view.txt") + " --placement pr20744");
  ASSERT_EQ(text.exitCode, 1);
  EXPECT_NE(text.out.find("first diverging node: %sum_1"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("why (broken ordering constraint): copy_(b_s) at 4 precedes %sum_1 at 5"), std::string::npos)
      << text.out;

  // Not an ordering fault: upstream skips the write-back (B1); the report says so.
  CliRun b1 = wbcheck("check " + hazard("b1_lineage_of_another_buffer.txt") + " --placement upstream");
  ASSERT_EQ(b1.exitCode, 1);
  EXPECT_NE(b1.out.find("why (missing-write-back): no copy writes b_b into b_a"), std::string::npos) << b1.out;

  // A placement that holds: no ordering report.
  CliRun holds = wbcheck("check " + hazard("h05_view_copy_becomes_view.txt") + " --json");
  ASSERT_EQ(holds.exitCode, 0);
  EXPECT_TRUE(nlohmann::json::parse(holds.out)["ordering"].is_null());
}

// `prove --pass-cmd`: the Z3 proofs of an external pass's output. The pass need not be minimal;
// one that places nothing (here: crashes) is refuted without a proof.
TEST(CliProve, AnExternalPassIsProvedOrRefuted) {
  const std::string early = "'" + std::string(WBCHECK_BINARY) + " place - --placement end'";
  CliRun holds = wbcheck("prove " + hazard("h10_ancestor_sibling_alias.txt") + " --pass-cmd " + early);
  EXPECT_EQ(holds.exitCode, 0) << holds.out << holds.err;
  EXPECT_NE(holds.out.find("prove: proved (ordering proved, equivalence proved)"), std::string::npos) << holds.out;

  const std::string upstream = "'" + std::string(WBCHECK_BINARY) + " place - --placement upstream'";
  CliRun bug = wbcheck("prove " + hazard("b1_lineage_of_another_buffer.txt") + " --pass-cmd " + upstream + " --json");
  ASSERT_EQ(bug.exitCode, 1) << bug.out << bug.err;
  const nlohmann::json j = nlohmann::json::parse(bug.out);
  EXPECT_EQ(j["verdict"], "refuted");
  EXPECT_TRUE(j["placement"].is_null());
  EXPECT_EQ(j["equivalence"]["proof_verdict"], "refuted") << bug.out;

  CliRun crash = wbcheck("prove " + hazard("h01_old_value_reader.txt") + " --pass-cmd 'exit 4' --json");
  ASSERT_EQ(crash.exitCode, 1) << crash.out << crash.err;
  EXPECT_EQ(nlohmann::json::parse(crash.out)["pass_outcome"], "crash");

  EXPECT_EQ(wbcheck("prove " + hazard("h01_old_value_reader.txt") + " --placement end --pass-cmd cat").exitCode, 2);
}

// `check --validate` adds the equivalence proof to the oracle's verdict: proved keeps exit 0,
// refuted is exit 1, and a solver limit turns a pass into unknown (exit 3), never a pass.
TEST(CliCheck, ValidateAddsTheEquivalenceProof) {
  CliRun holds = wbcheck("check " + hazard("h08b_copy_cycle_swap.txt") + " --validate --json");
  ASSERT_EQ(holds.exitCode, 0) << holds.out << holds.err;
  EXPECT_EQ(nlohmann::json::parse(holds.out)["validation"]["proof_verdict"], "proved");

  CliRun bug = wbcheck("check " + hazard("b1_lineage_of_another_buffer.txt") + " --placement upstream --validate");
  ASSERT_EQ(bug.exitCode, 1) << bug.out << bug.err;
  EXPECT_NE(bug.out.find("translation validation (Z3, every input): refuted"), std::string::npos) << bug.out;

  const std::string needsSolver = (wb::testing::corpusDir() / "validate" / "before_early_needs_the_solver.txt").string();
  ASSERT_EQ(wbcheck("check " + needsSolver + " --validate").exitCode, 0);
  CliRun unknown = wbcheck("check " + needsSolver + " --validate --rlimit 1 --json");
  ASSERT_EQ(unknown.exitCode, 3) << unknown.out << unknown.err;
  const nlohmann::json u = nlohmann::json::parse(unknown.out);
  EXPECT_EQ(u["verdict"], "holds");
  EXPECT_EQ(u["validation"]["proof_verdict"], "unknown");

  // Without --validate no proof runs.
  EXPECT_TRUE(nlohmann::json::parse(wbcheck("check " + hazard("h08b_copy_cycle_swap.txt") + " --json").out)["validation"].is_null());
}

}  // namespace
