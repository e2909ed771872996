// tests/broken_early.h: deliberately broken variants of `early` (never shipped), as a developer
// of the pass could get it wrong, for the tests that a campaign finds and shrinks findings
// against the placement under change. Each is an oracle::PlaceFunction: pass it as
// CheckOptions::placeWith / CampaignOptions::placeWith with the placement `early`.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

#include "core/alias.h"
#include "core/placement.h"
#include "core/rewrite.h"

namespace wb::testing {

inline PlacedProgram placeRequests(const Program& program, std::vector<CopyInsertion> requests) {
  std::stable_sort(requests.begin(), requests.end(),
                   [](const CopyInsertion& a, const CopyInsertion& b) { return a.afterNode < b.afterNode; });
  PlacedProgram placed;
  placed.program = insertWriteBacks(program, requests, OutputOrder::KeepPositions).program;
  return placed;
}

// Every copy right after its value's definition (or the last placeholder): R2 (readers of the
// buffer's old contents), R3 (later writers of the value) and the copy-to-copy order dropped.
inline PlacedProgram earlyWithoutReaders(const Program& program, const SchemaTable& schemas) {
  const WriteBackSelection selected = selectWriteBacks(program, analyzeAliases(program, schemas));
  std::size_t lastPlaceholder = 0;
  for (std::size_t i = 0; i < program.graph.nodes.size(); ++i)
    if (program.graph.nodes[i].isPlaceholder()) lastPlaceholder = i;
  std::vector<CopyInsertion> requests;
  for (const WriteBack& wb : selected.writeBacks)
    requests.push_back({wb.outputIndex, std::max<std::size_t>(lastPlaceholder, wb.value)});
  return placeRequests(program, std::move(requests));
}

// `early`'s copies at `early`'s anchors, but in output-spec order at each anchor: the order
// between copies (rule C: a copy that reads a buffer another copy overwrites goes first) dropped.
// Where `early` breaks a cycle of copies with a clone, this is `early`.
inline PlacedProgram earlyWithoutCopyOrder(const Program& program, const SchemaTable& schemas) {
  const EarlyPlan plan = planEarly(program, analyzeAliases(program, schemas));
  if (!plan.clones.empty()) return placeEarly(program, schemas);
  std::vector<CopyInsertion> requests;
  for (const EarlyPlan::Copy& c : plan.copies) requests.push_back({c.writeBack.outputIndex, c.afterNode});
  std::stable_sort(requests.begin(), requests.end(), [](const CopyInsertion& a, const CopyInsertion& b) {
    return a.afterNode != b.afterNode ? a.afterNode < b.afterNode : a.outputIndex < b.outputIndex;
  });
  return placeRequests(program, std::move(requests));
}

// `early` as if every op without a schema (a delegate, an undeclared custom op, call_module, a
// higher-order op: what the alias analysis treats conservatively) were pure and read nothing:
// no reads, writes or aliases from it. `early` is planned on a copy of the program whose such
// nodes have no references among their arguments, and its copies are inserted into the
// program as it is (where `early` breaks a cycle of copies with a clone, this is `early`).
// Hazards H2 (a delegate that mutates a buffer) and H9 (a delegate whose result aliases one).
inline Arg withoutReferences(const Arg& arg) {
  if (arg.isRef()) return Arg::none();
  Arg out = arg;
  for (Arg& item : out.items) item = withoutReferences(item);
  return out;
}
inline PlacedProgram earlyTreatingSchemalessAsPure(const Program& program, const SchemaTable& schemas) {
  const AliasInfo aliases = analyzeAliases(program, schemas);
  Program pure = program;
  for (std::size_t i = 0; i < pure.graph.nodes.size(); ++i) {
    Node& n = pure.graph.nodes[i];
    if (n.isPlaceholder() || n.isOutput() || !aliases.isConservative(static_cast<NodeId>(i))) continue;
    for (Arg& a : n.args) a = withoutReferences(a);
    for (auto& [name, a] : n.kwargs) a = withoutReferences(a);
  }
  const EarlyPlan plan = planEarly(pure, analyzeAliases(pure, schemas));
  if (!plan.clones.empty()) return placeEarly(program, schemas);
  std::vector<CopyInsertion> requests;
  for (const EarlyPlan::Copy& c : plan.copies) requests.push_back({c.writeBack.outputIndex, c.afterNode});
  return placeRequests(program, std::move(requests));
}

}  // namespace wb::testing
