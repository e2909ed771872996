// bench/oracle_bench.cpp: oracle throughput on ~30-node programs with small shapes.
//
// Programs: generated ones of ~30 body nodes (fixed seeds, both generator modes) and a
// hand-written KV-cache decoder step. Each figure is per check (items_per_second), so the
// parts of check() can be set against its whole:
//   BM_Place        place(early) of the program: the placement's share (core/, not oracle/).
//   BM_Compile      compiling the five executables of one check as check() does: one analysis
//                   per program (reference and placed), shared by their compiles, and the
//                   compiles sharing their common start (detail::compileAnalysedShared).
//   BM_Analyse      the two analyses of one check (program and placed program): BM_Compile's
//                   shared part.
//   BM_CompilePublic  the same five executables through the public compile(), which analyses
//                   the program for every compile and shares nothing (what a caller of
//                   compile() pays).
//   BM_OracleRuns   one check's worth of interpretation on compiled programs: S_par + S_seq
//                   (one run), F, and the placed program, in both view modes, compared; one
//                   input set. Runs and compares as check() does (flat observations in one
//                   reused scratch, labels read only on a difference). This is the oracle's own
//                   cost, what a fuzzer pays per input set.
//   BM_CheckEndToEnd  check() as the CLI runs it: validate, place (early), compile, run,
//                   compare; one input set. A fresh oracle::Checker per call.
//   BM_CheckerEndToEnd  the same checks through one oracle::Checker, as a campaign worker
//                   (`wbcheck fuzz`, campaign::runCase) makes them: op classifications and run
//                   buffers carry over from one check to the next. Issue 4's throughput target
//                   (20,000 checks/s on one core) is about this figure and BM_CheckEndToEnd.
//   BM_CheckWithoutPlace  check()'s own work without the placement: validate both programs,
//                   compile, run and compare (BM_CheckEndToEnd minus BM_Place, measured).
#include <benchmark/benchmark.h>

#include <vector>

#include "core/placement.h"
#include "core/text.h"
#include "gen/generator.h"
#include "core/validate.h"
#include "oracle/ops.h"
#include "oracle/oracle.h"
#include "bench/oracle_cases.h"

namespace {

using namespace wb;

using bench::Case;
using bench::cases;

struct Compiled {
  oracle::Executable reference[2], value, placed[2];
};

// The five executables of one check, through the public compile().
Compiled compileCase(const Case& c) {
  Compiled out;
  for (int m = 0; m < 2; ++m) {
    oracle::ExecOptions o;
    o.viewMode = m == 0 ? oracle::ViewMode::CopyViews : oracle::ViewMode::AliasViews;
    out.reference[m] = *oracle::compile(c.program, c.schemas, o);
    o.placedProgram = true;
    out.placed[m] = *oracle::compile(c.placed, c.schemas, o);
  }
  oracle::ExecOptions v;
  v.valueSemantics = true;
  out.value = *oracle::compile(c.program, c.schemas, v);
  return out;
}

// The same, as check() does it: one analysis per program shared by its compiles (and one op
// cache by both analyses), compiles sharing their common start (compileAnalysedShared).
Compiled compileCaseShared(const Case& c) {
  Compiled out;
  auto ops = std::make_shared<oracle::detail::OpCache>();
  const oracle::detail::Analysis program = oracle::detail::analyse(c.program, c.schemas, ops);
  const oracle::detail::Analysis placed = oracle::detail::analyse(c.placed, c.schemas, ops);
  oracle::detail::SharedExecutables all = oracle::detail::compileAnalysedShared(program, {}, true, &placed);
  out.reference[0] = out.reference[1] = *all.copyViews;
  out.placed[0] = out.placed[1] = **all.placed;
  if (all.aliasViews) out.reference[1] = **all.aliasViews;
  if (all.placedAlias) out.placed[1] = **all.placedAlias;
  out.value = **all.value;
  return out;
}

// One check's worth of interpretation for one input set: per view mode S_par and S_seq (one
// run), F (after the first) and the placed program, compared as check() runs and compares
// them (flat observations in one reused scratch, detail::observe and firstDifferenceOf). A mode whose
// executables are those of the first (no `*_copy` views, shared compiles) is not run again.
// Returns the number of differences.
struct RunBuffers {
  oracle::detail::RunScratch scratch;
  oracle::detail::Observations ref[2], value[1], placed[1];
};

std::size_t runAndCompare(const Compiled& c, oracle::InputSet inputs, RunBuffers& b) {
  using oracle::detail::ObservedRun;
  const oracle::Semantics endings[] = {oracle::Semantics::Par, oracle::Semantics::Seq};
  const oracle::Semantics valueEnding[] = {oracle::Semantics::Value}, placedEnding[] = {oracle::Semantics::Placed};
  std::size_t mismatches = 0;
  for (int m = 0; m < 2; ++m) {
    if (m == 1 && c.reference[1].impl == c.reference[0].impl && c.placed[1].impl == c.placed[0].impl) break;
    oracle::detail::observe(c.reference[m], endings, inputs, b.scratch, b.ref);
    // After the copy-views run, as check() does: F forks from it (a shared compile's F run
    // starts from its state at the fork).
    if (m == 0) oracle::detail::observe(c.value, valueEnding, inputs, b.scratch, b.value);
    oracle::detail::observe(c.placed[m], placedEnding, inputs, b.scratch, b.placed);
    const ObservedRun par{b.ref[0], c.reference[m]};
    mismatches += oracle::detail::firstDifferenceOf(par, ObservedRun{b.placed[0], c.placed[m]}).has_value();
    mismatches += oracle::detail::firstDifferenceOf(par, ObservedRun{b.ref[1], c.reference[m]}).has_value();
    mismatches += oracle::detail::firstDifferenceOf(par, ObservedRun{b.value[0], c.value}).has_value();
  }
  return mismatches;
}

void BM_Place(benchmark::State& state) {
  std::vector<Case> all = cases();
  std::size_t i = 0;
  for (auto _ : state) {
    const Case& c = all[i++ % all.size()];
    benchmark::DoNotOptimize(place(c.program, Placement::Early, c.schemas));
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_Place);

void BM_OracleRuns(benchmark::State& state) {
  std::vector<Case> all = cases();
  std::vector<Compiled> compiled;
  for (const Case& c : all) compiled.push_back(compileCase(c));
  std::size_t i = 0, mismatches = 0;
  std::uint64_t set = 0;
  RunBuffers buffers;
  for (auto _ : state) {
    const Compiled& c = compiled[i++ % compiled.size()];
    mismatches += runAndCompare(c, oracle::InputSet{0, static_cast<int>(set++ & 7)}, buffers);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
  state.counters["programs"] = static_cast<double>(compiled.size());
  benchmark::DoNotOptimize(mismatches);
}
BENCHMARK(BM_OracleRuns);

void BM_Compile(benchmark::State& state) {
  std::vector<Case> all = cases();
  std::size_t i = 0;
  for (auto _ : state) benchmark::DoNotOptimize(compileCaseShared(all[i++ % all.size()]));
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_Compile);

// The two analyses of one check (program and placed program, one op cache), BM_Compile's
// shared part.
void BM_Analyse(benchmark::State& state) {
  std::vector<Case> all = cases();
  std::size_t i = 0;
  for (auto _ : state) {
    const Case& c = all[i++ % all.size()];
    auto ops = std::make_shared<oracle::detail::OpCache>();
    benchmark::DoNotOptimize(oracle::detail::analyse(c.program, c.schemas, ops));
    benchmark::DoNotOptimize(oracle::detail::analyse(c.placed, c.schemas, ops));
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_Analyse);

void BM_CompilePublic(benchmark::State& state) {
  std::vector<Case> all = cases();
  std::size_t i = 0;
  for (auto _ : state) benchmark::DoNotOptimize(compileCase(all[i++ % all.size()]));
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_CompilePublic);

// check() minus the placement: validate both programs, compile as check() does, one input
// set of runs, compared.
void BM_CheckWithoutPlace(benchmark::State& state) {
  std::vector<Case> all = cases();
  std::size_t i = 0, mismatches = 0;
  for (auto _ : state) {
    const Case& c = all[i++ % all.size()];
    mismatches += validate(c.program).size() + validate(c.placed).size();
    RunBuffers buffers;  // check() makes its own
    mismatches += runAndCompare(compileCaseShared(c), oracle::InputSet{0, 0}, buffers);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
  benchmark::DoNotOptimize(mismatches);
}
BENCHMARK(BM_CheckWithoutPlace);

void BM_CheckEndToEnd(benchmark::State& state) {
  std::vector<Case> all = cases();
  std::size_t i = 0;
  oracle::CheckOptions options;
  options.inputs = 1;
  for (auto _ : state) {
    const Case& c = all[i++ % all.size()];
    benchmark::DoNotOptimize(oracle::check(c.program, options, c.schemas));
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_CheckEndToEnd);

// The same checks through one oracle::Checker, as a campaign worker makes them (campaign::runCase
// with the worker's Checker): op classifications and run buffers carry over between checks.
void BM_CheckerEndToEnd(benchmark::State& state) {
  std::vector<Case> all = cases();
  std::size_t i = 0;
  oracle::CheckOptions options;
  options.inputs = 1;
  oracle::Checker checker;
  for (auto _ : state) {
    const Case& c = all[i++ % all.size()];
    benchmark::DoNotOptimize(checker.check(c.program, options, c.schemas));
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_CheckerEndToEnd);

}  // namespace
