// bench/check_instructions.cpp: issue 4's throughput as instructions per check, the figure to
// judge an oracle change by (callgrind counts it the same on every run, where this VM's wall
// clock drifts by 10% within an hour; see bench/README.md, "oracle_bench").
//
// Makes CHECKS checks (default 900) of the oracle_bench cases through one oracle::Checker, as
// BM_CheckerEndToEnd does, after one warm-up round. Only measuredChecks() is meant to be
// counted:
//   bash bench/instructions.sh [BUILD_DIR] [CHECKS]
// which runs valgrind --tool=callgrind --toggle-collect='wb::bench::measuredChecks*' on it and
// prints the instructions per check. Run alone, it prints the number of placement bugs found
// (0: the cases are all placed correctly).
#include <cstdio>
#include <cstdlib>
#include <string>

#include "bench/oracle_cases.h"
#include "oracle/oracle.h"

namespace wb::bench {

// Not inlined: callgrind collects by function, and this is the one it is told to collect.
[[gnu::noinline]] std::size_t measuredChecks(const std::vector<Case>& all, oracle::Checker& checker, int checks) {
  oracle::CheckOptions options;
  options.inputs = 1;
  std::size_t bugs = 0;
  for (int i = 0; i < checks; ++i) {
    const Case& c = all[static_cast<std::size_t>(i) % all.size()];
    bugs += checker.check(c.program, options, c.schemas).bugs.size();
  }
  return bugs;
}

}  // namespace wb::bench

int main(int argc, char** argv) {
  const int checks = argc > 1 ? std::atoi(argv[1]) : 900;
  if (checks <= 0) {
    std::fprintf(stderr, "usage: %s [CHECKS > 0]\n", argv[0]);
    return 2;
  }
  const std::vector<wb::bench::Case> all = wb::bench::cases();
  wb::oracle::Checker checker;
  // The warm-up round: each case once, so the measured checks find the Checker as a campaign
  // worker's is after its first programs (op classifications cached, run buffers grown).
  std::size_t bugs = wb::bench::measuredChecks(all, checker, 0);
  for (const wb::bench::Case& c : all) {
    wb::oracle::CheckOptions options;
    options.inputs = 1;
    bugs += checker.check(c.program, options, c.schemas).bugs.size();
  }
  bugs += wb::bench::measuredChecks(all, checker, checks);
  std::printf("%d checks of %zu cases, %zu placement bugs\n", checks, all.size(), bugs);
  return bugs == 0 ? 0 : 1;
}
