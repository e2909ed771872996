// bench/placement_bench.cpp: placement time of `early` against the PR #20744 model.
//
// Programs: the chain and decoder shapes of gen/scaled.h (N nodes, B buffers), built in C++.
// Timed separately: the analysis and `early`'s decisions (planEarly), the whole `early`
// placement (with the graph surgery of core/rewrite), and the `pr20744` model.
// - small: generated programs of about 30 nodes (gen::Generator, fixed seeds), the size the
//   oracle's check() places once per check.
// Run in a Release build: cmake -DCMAKE_BUILD_TYPE=Release; ./bench/placement_bench.
#include <benchmark/benchmark.h>
#include "bench/cold_heap.h"

#include <cstdint>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "core/alias.h"
#include "core/placement.h"
#include "core/schema.h"
#include "gen/choices.h"
#include "gen/generator.h"
#include "gen/scaled.h"

namespace wb {
namespace {

using gen::chainProgram;
using gen::decoderProgram;
using Maker = Program (*)(std::size_t, std::size_t);

void plan(benchmark::State& state, Maker make) {
  const Program p = make(static_cast<std::size_t>(state.range(0)), static_cast<std::size_t>(state.range(1)));
  const SchemaTable table = schemasFor(p, builtinSchemas());
  std::size_t copies = 0;
  for (auto _ : state) {
    AliasInfo aliases = analyzeAliases(p, table);
    EarlyPlan planned = planEarly(p, aliases);
    copies = planned.copies.size();
    benchmark::DoNotOptimize(planned);
  }
  state.counters["nodes"] = static_cast<double>(p.graph.nodes.size());
  state.counters["copies"] = static_cast<double>(copies);
  state.SetComplexityN(state.range(0));
}

void analysis(benchmark::State& state, Maker make) {
  const Program p = make(static_cast<std::size_t>(state.range(0)), static_cast<std::size_t>(state.range(1)));
  const SchemaTable table = schemasFor(p, builtinSchemas());
  for (auto _ : state) benchmark::DoNotOptimize(analyzeAliases(p, table));
  state.SetComplexityN(state.range(0));
}

// The time of place() itself, from a cold heap: each result is freed outside the timing
// (freeing 10^6 nodes costs a tenth of placing them, and is the caller's business), and the
// freed memory is handed back to the system before the next call. glibc maps blocks over
// 32 MiB afresh on every call anyway (a 10^6-node program's node array is 144 MB), so without
// the trim only the large sizes would pay for fresh pages, and sizes would not compare; with
// it every size pays what a one-shot `wbcheck place` pays.
// `consume`: through place(Program&&), the caller handing its program over, so `early` moves
// the nodes instead of copying them; the copy handed over is made outside the timing.
void timePlace(benchmark::State& state, Maker make, Placement placement, bool consume) {
  const Program p = make(static_cast<std::size_t>(state.range(0)), static_cast<std::size_t>(state.range(1)));
  const SchemaTable table = schemasFor(p, builtinSchemas());
  std::size_t copies = 0;
  PlacedProgram placed;
  Program input;
  for (auto _ : state) {
    state.PauseTiming();
    placed = {};
    wb::bench::releaseFreeMemory();
    if (consume) input = p;
    state.ResumeTiming();
    placed = consume ? place(std::move(input), placement, table) : place(p, placement, table);
    copies = placed.copies.size();
    benchmark::DoNotOptimize(placed);
  }
  state.counters["copies"] = static_cast<double>(copies);
  // The speed-up is over the same placements where pr20744 is right (the chains); on the
  // decoders it binds each copy before the attention reads the cache through its slice_copy
  // view (hazard H5), which tests/gen_scaled_test.cpp pins.
  if (placement != Placement::Early)
    state.counters["same_as_early"] = placed.program == place(p, Placement::Early, table).program ? 1 : 0;
  state.SetComplexityN(state.range(0));
}
void placeWith(benchmark::State& state, Maker make, Placement placement) { timePlace(state, make, placement, false); }
void placeConsuming(benchmark::State& state, Maker make, Placement placement) {
  timePlace(state, make, placement, true);
}

// The whole `early` placement on 10^6 nodes / 10^4 buffers (target: under 1 s), by const&
// and consuming. Opt-in (WBCHECK_BENCH_LARGE=1): building the programs takes seconds.
void BM_EarlyPlace_Large(benchmark::State& state) {
  if (!std::getenv("WBCHECK_BENCH_LARGE")) {
    state.SkipWithError("set WBCHECK_BENCH_LARGE=1 to run");
    return;
  }
  placeWith(state, state.range(2) ? decoderProgram : chainProgram, Placement::Early);
}
void BM_EarlyPlaceConsuming_Large(benchmark::State& state) {
  if (!std::getenv("WBCHECK_BENCH_LARGE")) {
    state.SkipWithError("set WBCHECK_BENCH_LARGE=1 to run");
    return;
  }
  placeConsuming(state, state.range(2) ? decoderProgram : chainProgram, Placement::Early);
}

void BM_EarlyPlan_Chain(benchmark::State& s) { plan(s, chainProgram); }
void BM_EarlyPlan_Decoder(benchmark::State& s) { plan(s, decoderProgram); }
void BM_Analysis_Decoder(benchmark::State& s) { analysis(s, decoderProgram); }
void BM_EarlyPlace_Chain(benchmark::State& s) { placeWith(s, chainProgram, Placement::Early); }
void BM_EarlyPlace_Decoder(benchmark::State& s) { placeWith(s, decoderProgram, Placement::Early); }
void BM_EarlyPlaceConsuming_Chain(benchmark::State& s) { placeConsuming(s, chainProgram, Placement::Early); }
void BM_EarlyPlaceConsuming_Decoder(benchmark::State& s) { placeConsuming(s, decoderProgram, Placement::Early); }
void BM_Pr20744Place_Chain(benchmark::State& s) { placeWith(s, chainProgram, Placement::Pr20744_ff2892d4); }
void BM_Pr20744Place_Decoder(benchmark::State& s) { placeWith(s, decoderProgram, Placement::Pr20744_ff2892d4); }

// Small programs, as the oracle places them: the first 64 generated programs (seeds 1, 2, ...)
// with 24 to 40 nodes, each with its schema table prepared once, as check()
// receives it. One iteration places every program once; the counter `per_place` is the mean
// time of one place().
struct SmallCase {
  Program program;
  SchemaTable schemas;
};
std::vector<SmallCase> smallPrograms() {
  gen::GenOptions options;
  options.maxNodes = 40;
  const gen::Generator generator(options);
  std::vector<SmallCase> cases;
  for (std::uint64_t seed = 1; cases.size() < 64; ++seed) {
    gen::RandomChoices choices(seed);
    Program p = generator.generate(choices).program;
    if (p.graph.nodes.size() < 24 || p.graph.nodes.size() > 40) continue;
    SchemaTable schemas = schemasFor(p, generator.schemas());
    cases.push_back({std::move(p), std::move(schemas)});
  }
  return cases;
}

void smallPlace(benchmark::State& state, Placement placement) {
  const std::vector<SmallCase> cases = smallPrograms();
  std::size_t nodes = 0, copies = 0;
  for (const SmallCase& c : cases) nodes += c.program.graph.nodes.size();
  for (auto _ : state) {
    copies = 0;
    for (const SmallCase& c : cases) {
      PlacedProgram placed = place(c.program, placement, c.schemas);
      copies += placed.copies.size();
      benchmark::DoNotOptimize(placed);
    }
  }
  state.counters["programs"] = static_cast<double>(cases.size());
  state.counters["mean_nodes"] = static_cast<double>(nodes) / static_cast<double>(cases.size());
  state.counters["copies"] = static_cast<double>(copies);
  state.counters["per_place"] = benchmark::Counter(static_cast<double>(cases.size()),
                                                   benchmark::Counter::kIsIterationInvariantRate |
                                                       benchmark::Counter::kInvert);
}
void BM_EarlyPlace_Small(benchmark::State& s) { smallPlace(s, Placement::Early); }
void BM_EndPlace_Small(benchmark::State& s) { smallPlace(s, Placement::End); }
// The chain shape at oracle size: 30 nodes, 3 buffers.
void BM_EarlyPlace_Chain30(benchmark::State& s) { placeWith(s, chainProgram, Placement::Early); }

// {nodes, buffers}: 10^3..10^6 nodes, 10..10^4 buffers.
void decisionSizes(benchmark::internal::Benchmark* b) {
  b->Args({1'000, 10})->Args({10'000, 100})->Args({100'000, 1'000})->Args({1'000'000, 10'000});
  b->Args({1'000'000, 10})->Args({100'000, 10'000});
  b->Unit(benchmark::kMillisecond);
}
// The whole placement includes the graph surgery; pr20744 is quadratic. Kept to sizes that
// finish in seconds.
void placeSizes(benchmark::internal::Benchmark* b) {
  b->Args({1'000, 10})->Args({10'000, 100})->Args({100'000, 1'000});
  b->Unit(benchmark::kMillisecond);
}
// pr20744 takes seconds at 10^5 nodes: one iteration each.
void quadraticPlaceSizes(benchmark::internal::Benchmark* b) { placeSizes(b->Iterations(1)); }

BENCHMARK(BM_EarlyPlan_Chain)->Apply(decisionSizes);
BENCHMARK(BM_EarlyPlan_Decoder)->Apply(decisionSizes);
BENCHMARK(BM_Analysis_Decoder)->Apply(decisionSizes);
BENCHMARK(BM_EarlyPlace_Chain)->Apply(placeSizes);
BENCHMARK(BM_EarlyPlace_Decoder)->Apply(placeSizes);
BENCHMARK(BM_EarlyPlaceConsuming_Chain)->Apply(placeSizes);
BENCHMARK(BM_EarlyPlaceConsuming_Decoder)->Apply(placeSizes);
BENCHMARK(BM_Pr20744Place_Chain)->Apply(quadraticPlaceSizes);
BENCHMARK(BM_Pr20744Place_Decoder)->Apply(quadraticPlaceSizes);
BENCHMARK(BM_EarlyPlace_Small)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_EndPlace_Small)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_EarlyPlace_Chain30)->Args({30, 3})->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_EarlyPlace_Large)->Args({1'000'000, 10'000, 0})->Args({1'000'000, 10'000, 1})->Unit(benchmark::kMillisecond)->MinTime(2);
BENCHMARK(BM_EarlyPlaceConsuming_Large)->Args({1'000'000, 10'000, 0})->Args({1'000'000, 10'000, 1})->Unit(benchmark::kMillisecond)->MinTime(2);
// Near-linear growth: the same shapes at a tenth of the size (10^5 nodes, 10^3 buffers) are in
// BM_EarlyPlace_Chain / _Decoder above.

}  // namespace
}  // namespace wb
