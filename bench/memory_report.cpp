// bench/memory_report.cpp: what each placement costs in ExecuTorch's memory plan (issue 21).
//
// For every program (the model zoo at several sizes, and program files given on the command
// line) and every placement (end, early, pr20744, upstream): peak live bytes and the greedy
// arena of core/memplan.h's model, the oracle's verdict on the placement (a wrong placement's
// memory is no saving), and a lower bound on the peak of every correct placement.
//
// The bound ("free write-back"): the program with every mutation output returning its target
// placeholder instead of the new value, planned as it is. There a value written back lives
// from its definition to its last use other than the copy, and every buffer and input is
// planned exactly as in any placed program. A placement only inserts copies (and clones); each
// copy reads its value, so under any placement every allocation is live at least over the
// nodes it spans in that program (the inserted nodes add indices but take none away), and live
// bytes are monotone in lifetimes: no placement's peak is below the bound's, correct or not.
// It is reached when every copy can go right after its value's last other use; a copy that
// must wait for readers of the buffer's old contents (rule R2) keeps its value longer, and
// `early` puts each copy at the earliest point its dependences allow.
//
// Output: one JSON object per program on stdout (bench/memory_plots.py turns them into tables
// and SVG plots). Exit code 1 if some placement's peak is below the bound (the argument above
// would then be wrong), 0 otherwise.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "core/alias.h"
#include "core/memplan.h"
#include "core/placement.h"
#include "core/text.h"
#include "core/validate.h"
#include "gen/zoo.h"
#include "oracle/oracle.h"

namespace {

using namespace wb;

// The bound's program: mutation outputs return their targets (see the file comment).
Program freeWriteBackProgram(const Program& program, const SchemaTable& schemas) {
  Program bound = program;
  const WriteBackSelection selection = selectWriteBacks(program, analyzeAliases(program, schemas));
  std::vector<Arg> returned = bound.graph.returnedValues();
  for (const WriteBack& w : selection.writeBacks) {
    returned[w.outputIndex] = Arg::ref(w.buffer);
    bound.signature.outputs[w.outputIndex].name = bound.graph.nodes[w.buffer].name;
  }
  bound.graph.nodes.back().args = {Arg::tuple(std::move(returned))};
  return bound;
}

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// Returns false if a placement's peak is below the bound (the argument above would be wrong).
bool report(const std::string& name, const std::string& family, const std::string& style, int layers,
            const Program& program, const SchemaTable& schemas, bool runOracle) {
  std::ostringstream out;
  out << "{\"program\": " << quoted(name) << ", \"family\": " << quoted(family) << ", \"style\": " << quoted(style)
      << ", \"layers\": " << layers << ", \"nodes\": " << program.graph.nodes.size();
  const MemoryPlan bound = planMemory(freeWriteBackProgram(program, schemas), schemas);
  out << ", \"bound_peak\": " << bound.peakLiveBytes << ", \"placements\": {";
  const std::pair<const char*, Placement> placements[] = {
      {"end", Placement::End}, {"early", Placement::Early}, {"pr20744", kLatestPr20744}, {"upstream", Placement::Upstream}};
  bool first = true;
  bool bounded = true;
  for (const auto& [label, placement] : placements) {
    const PlacedProgram placed = place(program, placement, schemas);
    out << (first ? "" : ", ") << quoted(label) << ": {";
    first = false;
    if (placed.failure) {
      out << "\"failure\": " << quoted(*placed.failure) << "}";
      continue;
    }
    const MemoryPlan plan = planMemory(placed.program, schemas);
    if (plan.peakLiveBytes < bound.peakLiveBytes) {
      std::cerr << "memory_report: " << name << ": " << label << "'s peak " << plan.peakLiveBytes << " is below the bound "
                << bound.peakLiveBytes << "\n";
      bounded = false;
    }
    out << "\"peak\": " << plan.peakLiveBytes << ", \"arena\": " << plan.arenaBytes
        << ", \"unplanned\": " << plan.unplanned.size() << ", \"clone_bytes\": " << insertedCloneBytes(program, placed.program);
    if (runOracle) {
      oracle::CheckOptions options;
      options.placement = placement;
      options.inputs = 2;
      options.programFindings = false;
      const oracle::CheckReport r = oracle::check(program, options, schemas);
      out << ", \"oracle\": "
          << quoted(r.verdict == oracle::Verdict::Holds ? "holds" : r.verdict == oracle::Verdict::PlacementBug ? "BUG" : "error");
    }
    out << "}";
  }
  out << "}}\n";
  std::cout << out.str() << std::flush;
  return bounded;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Peak live bytes and greedy arena of end, early, pr20744 and upstream, with a lower bound"};
  std::vector<int> layers = {1, 2, 4, 8, 16, 32};
  std::vector<std::string> files;
  bool oracle = true;
  app.add_option("--layers", layers, "zoo sizes (layers, counters)")->delimiter(',');
  app.add_option("FILES", files, "program files (the corpus)");
  app.add_flag("!--no-oracle", oracle, "skip the oracle's verdict per placement");
  CLI11_PARSE(app, argc, argv);

  const SchemaTable builtins = builtinSchemas();
  bool bounded = true;
  for (const std::string& model : gen::modelNames()) {
    const bool decoder = model == "decoder";
    for (gen::CacheUpdate style : decoder ? gen::allCacheUpdates() : std::vector<gen::CacheUpdate>{gen::CacheUpdate::IndexPut}) {
      for (int n : layers) {
        gen::ZooOptions options;
        options.layers = n;
        options.counters = n;
        options.cacheUpdate = style;
        std::optional<Program> program = gen::generateModel(model, options, builtins);
        if (!program) continue;
        const SchemaTable schemas = schemasFor(*program, builtins);
        const std::string styleName = decoder ? std::string(gen::toString(style)) : "";
        bounded &= report(model + (decoder ? "/" + styleName : "") + "/" + std::to_string(n), model, styleName, n,
                          *program, schemas, oracle);
      }
    }
  }
  for (const std::string& file : files) {
    std::ifstream in(file);
    std::stringstream text;
    text << in.rdbuf();
    Result<Program> program = readProgram(text.str(), file);
    if (!program.ok() || !validate(*program).empty()) {
      std::cerr << "memory_report: skipped " << file << " (does not read or validate)\n";
      continue;
    }
    const SchemaTable schemas = schemasFor(*program, builtins);
    bounded &= report(file, "corpus", "", 0, *program, schemas, oracle);
  }
  return bounded ? 0 : 1;
}
