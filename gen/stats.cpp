// gen/stats.cpp: what the generator makes over many programs (`wbcheck gen --stats`): modes,
// hazard features, ops, and the kinds of ops without a schema. Apart from the generator's
// Session (gen/session.h), which builds one program: these only count what it built.
#include <set>

#include "core/placement.h"
#include "gen/choices.h"
#include "gen/generator.h"

namespace wb::gen {

std::vector<std::string> schemaLessKinds() {
  return {"executorch_call_delegate", "undeclared custom op", "call_module", "higher-order op"};
}

namespace {

// The schema-less kinds of schemaLessKinds() that `program` calls.
std::set<std::string> schemaLessKindsIn(const Program& program, const SchemaTable& base) {
  std::set<std::string> kinds;
  const std::optional<SchemaTable> own =
      program.schemas.empty() ? std::nullopt : std::optional<SchemaTable>(schemasFor(program, base));
  const SchemaTable& table = own ? *own : base;
  for (const Node& n : program.graph.nodes) {
    if (n.op == NodeOp::CallModule) kinds.insert("call_module");
    if (n.op != NodeOp::CallFunction) continue;
    if (n.target == "executorch_call_delegate") kinds.insert("executorch_call_delegate");
    else if (n.target.rfind("higher_order::", 0) == 0) kinds.insert("higher-order op");
    else if (n.target.find("::") != std::string::npos && !table.find(n.target))
      kinds.insert("undeclared custom op");
  }
  return kinds;
}

}  // namespace

GenStats collectStats(std::uint64_t firstSeed, int count, const GenOptions& options) {
  const Generator generator(options);
  GenStats stats;
  for (int i = 0; i < count; ++i) {
    RandomChoices choices(firstSeed + static_cast<std::uint64_t>(i));
    const Generated g = generator.generate(choices);
    ++stats.programs;
    ++stats.modes[std::string(toString(g.mode))];
    for (const auto& f : g.features) ++stats.features[f];
    std::set<std::string> ops;
    for (const Node& n : g.program.graph.nodes) {
      if (n.op == NodeOp::CallFunction) ops.insert(n.target);
      if (n.op != NodeOp::Placeholder && n.op != NodeOp::Output) ++stats.nodes;
    }
    for (const auto& op : ops) ++stats.ops[op];
    for (const auto& kind : schemaLessKindsIn(g.program, generator.schemas())) ++stats.schemaLess[kind];
    for (const auto& spec : g.program.signature.outputs)
      if (isMutation(spec.kind)) ++stats.mutationSpecs;
  }
  return stats;
}

std::string formatStats(const GenStats& stats) {
  std::string out = "programs: " + std::to_string(stats.programs) + "\nnodes: " + std::to_string(stats.nodes) +
                    "\nmutation specs: " + std::to_string(stats.mutationSpecs) + "\n\nmodes:\n";
  for (const auto& [mode, n] : stats.modes) out += "  " + mode + ": " + std::to_string(n) + "\n";
  out += "\nfeatures (programs in which each occurs):\n";
  for (const auto& f : featureNames()) {
    auto it = stats.features.find(f);
    const int n = it == stats.features.end() ? 0 : it->second;
    out += "  " + f + ": " + std::to_string(n) + (n == 0 ? "   <-- never generated" : "") + "\n";
  }
  out += "\nops without a schema (programs in which each kind occurs):\n";
  for (const auto& kind : schemaLessKinds()) {
    auto it = stats.schemaLess.find(kind);
    const int n = it == stats.schemaLess.end() ? 0 : it->second;
    out += "  " + kind + ": " + std::to_string(n) + (n == 0 ? "   <-- never generated" : "") + "\n";
  }
  out += "\nops (programs in which each occurs):\n";
  for (const auto& [op, n] : stats.ops) out += "  " + op + ": " + std::to_string(n) + "\n";
  return out;
}

}  // namespace wb::gen
