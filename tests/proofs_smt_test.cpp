// tests/proofs_smt_test.cpp: the shared Z3 wrapper (proofs/smt.h): tracked facts come back as
// minimised cores of names, limits give Unknown (never an answer), and every dumped query is a
// file `z3` answers alone, the same way.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "proofs/smt.h"
#include "tests/testing.h"

namespace wb::proofs {
namespace {

TEST(ProofsSmt, UnsatCoreNamesOnlyTheConflictingFacts) {
  z3::context c;
  Solver s(c, {}, "core");
  z3::expr x = c.int_const("x");
  const std::size_t low = s.track(x > 10, "x after node 10");
  const std::size_t high = s.track(x < 5, "x before node 5");
  const std::size_t loose = s.track(x < 3, "x before node 3");
  const std::size_t free = s.track(x != 7, "unrelated");
  QueryResult r = s.checkAll();
  ASSERT_TRUE(r.unsat());
  // Minimised: either bound below 10 conflicts with x > 10 alone; no proper subset is a core.
  ASSERT_EQ(r.core.size(), 2u);
  EXPECT_EQ(r.core[0], low);
  EXPECT_TRUE(r.core[1] == high || r.core[1] == loose);
  EXPECT_EQ(s.name(low), "x after node 10");
  // Without the lower bound it is satisfiable, with a model.
  const std::vector<std::size_t> some = {high, loose, free};
  QueryResult sat = s.check(some);
  ASSERT_TRUE(sat.sat());
  ASSERT_TRUE(sat.model.has_value());
  EXPECT_LT(sat.model->eval(x, true).get_numeral_int64(), 3);
  EXPECT_EQ(s.queries(), 2u);
}

TEST(ProofsSmt, SameQueryGivesTheSameCoreEveryTime) {
  std::vector<std::size_t> first;
  for (int round = 0; round < 3; ++round) {
    z3::context c;
    Solver s(c, {}, "determinism");
    z3::expr x = c.int_const("x"), y = c.int_const("y");
    for (int i = 0; i < 20; ++i) s.track(x > i, "x>" + std::to_string(i));
    for (int i = 0; i < 20; ++i) s.track(y > x + i, "y>x+" + std::to_string(i));
    s.track(y < 15, "y<15");
    QueryResult r = s.checkAll();
    ASSERT_TRUE(r.unsat());
    if (round == 0) first = r.core;
    EXPECT_EQ(r.core, first);
  }
}

TEST(ProofsSmt, TinyRlimitIsUnknownNeverAnAnswer) {
  z3::context c;
  SmtOptions options;
  options.rlimit = 1;
  Solver s(c, options, "rlimit");
  z3::expr x = c.int_const("x"), y = c.int_const("y"), z = c.int_const("z");
  s.add(x * x * x + y * y * y == z * z * z && x > 0 && y > 0 && z > 0);
  QueryResult r = s.checkAll();
  ASSERT_TRUE(r.unknown());
  EXPECT_NE(r.reason.find("rlimit"), std::string::npos) << r.reason;
}

TEST(ProofsSmt, WallClockGuardStopsARunawayQuery) {
  z3::context c;
  SmtOptions options;
  options.rlimit = 0;  // only the clock
  options.timeoutMs = 50;
  Solver s(c, options, "clock");
  // Nonlinear integer arithmetic Z3 cannot settle quickly (Fermat, n = 3).
  z3::expr x = c.int_const("x"), y = c.int_const("y"), z = c.int_const("z");
  s.add(x * x * x + y * y * y == z * z * z && x > 0 && y > 0 && z > 0);
  QueryResult r = s.checkAll();
  ASSERT_TRUE(r.unknown());
  EXPECT_NE(r.reason.find("timeout"), std::string::npos) << r.reason;
  EXPECT_LT(r.seconds, 20.0);
}

TEST(ProofsSmt, SymbolsAreSafeForSmtLib) {
  EXPECT_EQ(smtSymbol("copy_(b_s) after %add"), "copy__b_s__after_%add");
  EXPECT_EQ(smtSymbol("1st"), "_1st");
  EXPECT_EQ(smtSymbol(""), "_");
}

TEST(ProofsSmt, VerdictsHaveTheExitCodesOfTheDesign) {
  EXPECT_EQ(exitCode(Verdict::Proved), 0);
  EXPECT_EQ(exitCode(Verdict::Refuted), 1);
  EXPECT_EQ(exitCode(Verdict::Unknown), 3);
  EXPECT_EQ(toString(Verdict::Refuted), "refuted");
}

// Runs `z3 FILE` and returns its standard output, or nullopt without a z3 executable.
std::optional<std::string> runZ3(const std::filesystem::path& file) {
  if (!std::filesystem::exists("/usr/bin/z3")) return std::nullopt;
  const std::filesystem::path out = file.string() + ".out";
  const std::string command = "/usr/bin/z3 " + file.string() + " > " + out.string() + " 2>&1";
  const int status = std::system(command.c_str());
  EXPECT_EQ(status, 0) << command;
  return testing::readFile(out);
}

TEST(ProofsSmt, DumpedQueriesAreAnsweredAloneByZ3) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("wbcheck_smt_dump_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  z3::context c;
  SmtOptions options;
  options.dumpDir = dir.string();
  Solver s(c, options, "dump test");
  z3::expr x = c.int_const("pos_copy_");
  const std::size_t after = s.track(x > 40, "copy_ after %add (reads b_s)");
  const std::size_t before = s.track(x < 30, "query: copy_ before %add");
  const std::size_t other = s.track(x > 2, "copy_ after %b_s");
  const std::vector<std::size_t> enabled = {after, before, other};
  QueryResult r = s.check(enabled, "can copy_ go before %add?");
  ASSERT_TRUE(r.unsat());
  const std::vector<std::size_t> sat = {other, before};
  QueryResult r2 = s.check(sat);
  ASSERT_TRUE(r2.sat());
  ASSERT_FALSE(r.dumpFile.empty());
  EXPECT_TRUE(std::filesystem::exists(r.dumpFile));
  EXPECT_TRUE(std::filesystem::exists(r2.dumpFile));
  EXPECT_NE(r.dumpFile, r2.dumpFile);
  const std::string text = testing::readFile(r.dumpFile);
  EXPECT_NE(text.find("can copy_ go before %add?"), std::string::npos);
  EXPECT_NE(text.find("check-sat-assuming"), std::string::npos);
  if (std::optional<std::string> answer = runZ3(r.dumpFile)) {
    // The same answer and the same core, by name.
    EXPECT_EQ(answer->rfind("unsat", 0), 0u) << *answer;
    EXPECT_NE(answer->find("copy__after_%add__reads_b_s_"), std::string::npos) << *answer;
    EXPECT_NE(answer->find("query__copy__before_%add"), std::string::npos) << *answer;
    EXPECT_EQ(answer->find("copy__after_%b_s"), std::string::npos) << *answer;
    std::optional<std::string> answer2 = runZ3(r2.dumpFile);
    ASSERT_TRUE(answer2);
    EXPECT_EQ(*answer2, "sat\n");
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace wb::proofs
