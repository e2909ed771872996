// bench/validate_report.cpp: issue 17's timing targets for translation validation, as a report.
//
// For generated programs of about 30, 300 and 3,000 body nodes (the generator's, fixed seeds,
// kept when their size is within a quarter of the target), and for the model zoo's decoder
// with 1 to 32 layers: `early` places the program, and validate (proofs::prepare +
// proofs::checkEquivalence, the oracle's tier detection and both view modes included) proves
// the placed program equivalent to it. Each program is timed twice: with its shapes (the
// element tier, arrays) and with every annotation removed (the storage tier, terms). Reported:
// median and maximum wall-clock time per group, and the verdicts.
//
// Targets (issue 17): under 50 ms at 30 nodes, under 5 s at 3,000 nodes, no unknown below
// 3,000 nodes at the default limits; judged on CPU time (the machine is shared: wall-clock
// time is printed too). Exit code: 0 all hold, 1 one does not, 2 bad arguments.
//
//   build-release/bench/validate_report [--programs 10] [--sizes 30,300,3000] [--layers 1,2,4,8,16,32]
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "core/placement.h"
#include "gen/generator.h"
#include "gen/zoo.h"
#include "proofs/equivalence.h"

namespace wb {
namespace {

double cpuMs() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) * 1e-6;
}

struct Sample {
  double ms = 0;     // wall clock
  double cpu = 0;    // CPU time of the process (the figure that holds on a shared machine)
  proofs::EquivalenceVerdict verdict = proofs::EquivalenceVerdict::Equivalent;
  std::size_t nodes = 0;
};

Sample timeValidate(const Program& program, const SchemaTable& schemas) {
  Sample s;
  s.nodes = program.graph.nodes.size();
  const auto start = std::chrono::steady_clock::now();
  const double cpuStart = cpuMs();
  const PlacedProgram placed = place(program, Placement::Early, schemas);
  Result<proofs::PreparedPair> pair = proofs::prepare(program, placed.program);
  if (!pair) {
    s.verdict = proofs::EquivalenceVerdict::Unknown;
    std::fprintf(stderr, "prepare failed: %s\n", formatAll(pair.errors).c_str());
  } else {
    const proofs::EquivalenceOptions options;
    s.verdict = proofs::checkEquivalence(*pair, options).verdict;
  }
  s.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  s.cpu = cpuMs() - cpuStart;
  return s;
}

Program withoutShapes(Program p) {
  for (Node& n : p.graph.nodes) n.typeText.clear();
  return p;
}

struct Row {
  std::string group, tier;
  std::vector<Sample> samples;
};

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
double maximum(const std::vector<double>& v) { return v.empty() ? 0 : *std::max_element(v.begin(), v.end()); }

void print(const std::vector<Row>& rows) {
  std::printf("| programs | tier | n | nodes (median) | CPU median ms | CPU max ms | wall median ms | wall max ms | verdicts |\n"
              "|---|---|---|---|---|---|---|---|---|\n");
  for (const Row& r : rows) {
    std::vector<double> wall, cpu, nodes;
    std::map<std::string, int> verdicts;
    for (const Sample& s : r.samples) {
      wall.push_back(s.ms);
      cpu.push_back(s.cpu);
      nodes.push_back(static_cast<double>(s.nodes));
      ++verdicts[std::string(proofs::toString(s.verdict))];
    }
    std::string v;
    for (const auto& [name, count] : verdicts) v += (v.empty() ? "" : ", ") + name + " " + std::to_string(count);
    std::printf("| %s | %s | %zu | %.0f | %.1f | %.1f | %.1f | %.1f | %s |\n", r.group.c_str(), r.tier.c_str(), r.samples.size(),
                median(nodes), median(cpu), maximum(cpu), median(wall), maximum(wall), v.c_str());
  }
}

}  // namespace
}  // namespace wb

int main(int argc, char** argv) {
  using namespace wb;
  CLI::App app{"Translation validation timings (issue 17)"};
  int programs = 10;
  std::vector<int> sizes = {30, 300, 3000};
  std::vector<int> layers = {1, 2, 4, 8, 16, 32};
  app.add_option("--programs", programs, "generated programs per size")->capture_default_str();
  app.add_option("--sizes", sizes, "target body-node counts")->delimiter(',');
  app.add_option("--layers", layers, "decoder layer counts")->delimiter(',');
  bool verbose = false;
  std::vector<std::uint64_t> onlySeeds;
  app.add_option("--seeds", onlySeeds, "only the generated programs of these seeds (to reproduce one)")->delimiter(',');
  app.add_flag("--verbose", verbose, "print each program's seed, size, time and verdict to stderr as it goes");
  CLI11_PARSE(app, argc, argv);
  if (programs < 1) return 2;

  std::vector<Row> rows;
  bool ok = true;
  const SchemaTable builtins = builtinSchemas();
  for (int size : sizes) {
    gen::GenOptions options;
    options.maxNodes = size + size / 4;
    gen::Generator generator(options);
    Row shaped{"generated ~" + std::to_string(size), "element (arrays)", {}};
    Row unshaped{"generated ~" + std::to_string(size), "storage (terms)", {}};
    for (std::uint64_t seed = 0; static_cast<int>(shaped.samples.size()) < programs && seed < 100000; ++seed) {
      if (!onlySeeds.empty() && std::find(onlySeeds.begin(), onlySeeds.end(), seed) == onlySeeds.end()) continue;
      gen::RandomChoices choices(seed);
      const gen::Generated g = generator.generate(choices);
      const std::size_t body = g.program.graph.nodes.size();
      if (body < static_cast<std::size_t>(size - size / 4) || body > static_cast<std::size_t>(size + size / 4 + 40)) continue;
      const SchemaTable schemas = schemasFor(g.program, generator.schemas());
      if (verbose) std::fprintf(stderr, "generated ~%d seed %llu: %zu nodes\n", size, static_cast<unsigned long long>(seed), body);
      shaped.samples.push_back(timeValidate(g.program, schemas));
      if (verbose) std::fprintf(stderr, "  element: %.1f ms CPU, %s\n", shaped.samples.back().cpu, std::string(proofs::toString(shaped.samples.back().verdict)).c_str());
      unshaped.samples.push_back(timeValidate(withoutShapes(g.program), schemas));
      if (verbose) std::fprintf(stderr, "  storage: %.1f ms CPU, %s\n", unshaped.samples.back().cpu, std::string(proofs::toString(unshaped.samples.back().verdict)).c_str());
    }
    for (const Row* r : {&shaped, &unshaped})
      for (const Sample& s : r->samples) {
        if (s.verdict != proofs::EquivalenceVerdict::Equivalent && size < 3000) ok = false;
        if (size <= 30 && s.cpu >= 50) ok = false;
        if (size >= 3000 && s.cpu >= 5000) ok = false;
      }
    rows.push_back(std::move(shaped));
    rows.push_back(std::move(unshaped));
  }
  for (int l : layers) {
    gen::ZooOptions options;
    options.layers = l;
    const std::optional<Program> model = gen::generateModel("decoder", options, builtins);
    if (!model) return 2;
    const SchemaTable schemas = schemasFor(*model, builtins);
    rows.push_back({"decoder " + std::to_string(l) + " layer(s)", "element (arrays)", {timeValidate(*model, schemas)}});
    rows.push_back({"decoder " + std::to_string(l) + " layer(s)", "storage (terms)", {timeValidate(withoutShapes(*model), schemas)}});
  }
  wb::print(rows);
  return ok ? 0 : 1;
}
