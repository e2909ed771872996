// bench/placement_bench.cpp: placement time of `early` against the PR #20744 model.
//
// Programs are built in C++ directly (no text), in two shapes:
// - chain: B buffers; per buffer a segment of functional ops that reads the buffer's old
//   contents, computes a new value and, now and then, writes it in place; N nodes in all.
// - decoder: L = B/2 layers, each with a K and a V cache updated by index_put (the mutation
//   values), read through slice_copy views by the attention, plus filler ops up to N nodes.
// Timed separately: the analysis and `early`'s decisions (planEarly), the whole `early`
// placement (with the graph surgery of core/rewrite), and the `pr20744` model.
// - small: generated programs of about 30 nodes (gen::Generator, fixed seeds), the size the
//   oracle's check() places once per check.
// Run in a Release build: cmake -DCMAKE_BUILD_TYPE=Release; ./bench/placement_bench.
#include <benchmark/benchmark.h>
#include <malloc.h>

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

namespace wb {
namespace {

class ProgramBuilder {
 public:
  explicit ProgramBuilder(std::size_t reserve) { p_.graph.nodes.reserve(reserve + 8); }

  void buffer(const std::string& name, const std::string& fqn) {
    placeholder(name);
    p_.signature.inputs.push_back({InputKind::Buffer, name, fqn, true});
  }
  void input(const std::string& name) {
    placeholder(name);
    p_.signature.inputs.push_back({InputKind::UserInput, name, "", std::nullopt});
  }
  void call(std::string name, const char* target, std::vector<Arg> args, const char* type = "f32[4]") {
    Node n;
    n.name = std::move(name);
    n.target = target;
    n.args = std::move(args);
    n.typeText = type;
    p_.graph.nodes.push_back(std::move(n));
  }
  void mutation(const std::string& value, const std::string& fqn) {
    returned_.push_back(Arg::ref(value));
    p_.signature.outputs.push_back({OutputKind::BufferMutation, value, fqn});
  }
  void userOutput(const std::string& value) {
    userReturned_.push_back(Arg::ref(value));
    userSpecs_.push_back({OutputKind::UserOutput, value, ""});
  }
  std::size_t size() const { return p_.graph.nodes.size(); }
  Program finish() {
    Node out;
    out.name = "output";
    out.op = NodeOp::Output;
    out.target = "output";
    for (Arg& a : userReturned_) returned_.push_back(std::move(a));
    for (OutputSpec& s : userSpecs_) p_.signature.outputs.push_back(std::move(s));
    out.args = {Arg::tuple(std::move(returned_))};
    p_.graph.nodes.push_back(std::move(out));
    return std::move(p_);
  }

 private:
  void placeholder(const std::string& name) {
    Node n;
    n.name = name;
    n.op = NodeOp::Placeholder;
    n.target = name;
    n.typeText = "f32[4]";
    p_.graph.nodes.push_back(std::move(n));
  }
  Program p_;
  std::vector<Arg> returned_, userReturned_;
  std::vector<OutputSpec> userSpecs_;
};

Arg R(const std::string& n) { return Arg::ref(n); }
Arg I(std::int64_t v) { return Arg::ofInt(v); }

// N nodes, B buffers: per buffer, `old = add(b_i, h)` reads the old contents, then a run of
// mul/add/relu_ computes the new value, which becomes b_i's mutation value.
Program chainProgram(std::size_t nodes, std::size_t buffers) {
  ProgramBuilder b(nodes);
  for (std::size_t i = 0; i < buffers; ++i) b.buffer("b_" + std::to_string(i), "buf" + std::to_string(i));
  b.input("x");
  const std::size_t body = nodes > buffers + 2 ? nodes - buffers - 2 : buffers;
  const std::size_t perBuffer = std::max<std::size_t>(2, body / buffers);
  std::string h = "x";
  std::size_t id = 0;
  auto fresh = [&]() { return "n" + std::to_string(id++); };
  for (std::size_t i = 0; i < buffers; ++i) {
    std::string old = fresh();
    b.call(old, "aten::add.Tensor", {R("b_" + std::to_string(i)), R(h)});
    std::string v = old;
    for (std::size_t j = 1; j < perBuffer; ++j) {
      std::string next = fresh();
      if (j % 7 == 3)
        b.call(next, "aten::relu_", {R(v)});  // in place on the value: R3
      else
        b.call(next, j % 2 ? "aten::mul.Tensor" : "aten::add.Tensor", {R(v), R(h)});
      v = next;
    }
    b.mutation(v, "buf" + std::to_string(i));
    h = v;
  }
  b.userOutput(h);
  return b.finish();
}

// L = B/2 layers with K/V caches: index_put (functional) produces each cache's new value;
// slice_copy views of the old caches are read by the attention; fillers pad to N nodes.
Program decoderProgram(std::size_t nodes, std::size_t buffers) {
  const std::size_t layers = std::max<std::size_t>(1, buffers / 2);
  ProgramBuilder b(nodes);
  for (std::size_t l = 0; l < layers; ++l) {
    b.buffer("b_k_" + std::to_string(l), "layers." + std::to_string(l) + ".k_cache");
    b.buffer("b_v_" + std::to_string(l), "layers." + std::to_string(l) + ".v_cache");
  }
  b.input("w");
  b.input("pos");
  b.input("x");
  std::string h = "x";
  std::size_t id = 0;
  auto fresh = [&]() { return "n" + std::to_string(id++); };
  const std::size_t perLayer = std::max<std::size_t>(10, (nodes - 2 * layers - 4) / layers);
  for (std::size_t l = 0; l < layers; ++l) {
    const std::string bk = "b_k_" + std::to_string(l), bv = "b_v_" + std::to_string(l);
    std::string q = fresh(), k = fresh(), v = fresh();
    b.call(q, "aten::mm", {R(h), R("w")});
    b.call(k, "aten::mm", {R(h), R("w")});
    b.call(v, "aten::mm", {R(h), R("w")});
    std::string kc = fresh(), vc = fresh();
    b.call(kc, "aten::index_put", {R(bk), Arg::list({R("pos")}), R(k)});
    b.call(vc, "aten::index_put", {R(bv), Arg::list({R("pos")}), R(v)});
    std::string ks = fresh(), vs = fresh();
    b.call(ks, "aten::slice_copy.Tensor", {R(bk), I(0), I(0), I(4)});
    b.call(vs, "aten::slice_copy.Tensor", {R(bv), I(0), I(0), I(4)});
    std::string att = fresh();
    b.call(att, "aten::scaled_dot_product_attention", {R(q), R(ks), R(vs)});
    std::string out = fresh();
    b.call(out, "aten::add.Tensor", {R(h), R(att)});
    h = out;
    for (std::size_t j = 10; j < perLayer; ++j) {
      std::string next = fresh();
      b.call(next, j % 3 ? "aten::mul.Tensor" : "aten::silu", j % 3 ? std::vector<Arg>{R(h), R(h)} : std::vector<Arg>{R(h)});
      h = next;
    }
    b.mutation(kc, "layers." + std::to_string(l) + ".k_cache");
    b.mutation(vc, "layers." + std::to_string(l) + ".v_cache");
  }
  b.userOutput(h);
  return b.finish();
}

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
// 32 MiB afresh on every call anyway (a 10^6-node program's node array is 200 MB), so without
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
    malloc_trim(0);
    if (consume) input = p;
    state.ResumeTiming();
    placed = consume ? place(std::move(input), placement, table) : place(p, placement, table);
    copies = placed.copies.size();
    benchmark::DoNotOptimize(placed);
  }
  state.counters["copies"] = static_cast<double>(copies);
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
void BM_Pr20744Place_Chain(benchmark::State& s) { placeWith(s, chainProgram, Placement::Pr20744); }
void BM_Pr20744Place_Decoder(benchmark::State& s) { placeWith(s, decoderProgram, Placement::Pr20744); }

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
