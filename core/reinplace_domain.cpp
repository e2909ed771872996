// core/reinplace_domain.cpp: reinplace's domain of `_share_alloc_with_arg_idx` (see
// reinplace_domain.h). Linear: one pass for the last use of each node, one over the annotated
// nodes.
#include "core/reinplace_domain.h"

#include <set>
#include <string_view>

namespace wb {

namespace {

// Reinplace annotates functional nodes only. An in-place op (ATen names them with a trailing
// `_`: add_, index_put_) or an out= variant already writes storage of its own choosing.
bool writesInPlaceByName(const Node& n) {
  std::string_view t = n.target;
  const std::size_t colons = t.find("::");
  if (colons == std::string_view::npos) return false;
  t.remove_prefix(colons + 2);
  const std::size_t dot = t.find('.');
  const std::string_view base = t.substr(0, dot);
  const std::string_view overload = dot == std::string_view::npos ? std::string_view() : t.substr(dot + 1);
  const bool inPlace = base.size() >= 2 && base.back() == '_' && base[base.size() - 2] != '_';  // not a dunder
  bool out = overload.substr(0, 3) == "out";
  for (const auto& kw : n.kwargs) out = out || kw.first == "out";
  return inPlace || out;
}

}  // namespace

std::vector<AnnotationOutsideDomain> annotationsOutsideReinplaceDomain(const Program& program) {
  std::vector<AnnotationOutsideDomain> out;
  const std::vector<Node>& nodes = program.graph.nodes;
  bool any = false;
  for (const Node& n : nodes) any = any || !n.meta.empty();
  if (!any) return out;  // nearly every program: nothing to look at

  // Per node: the last node that uses it (kNoNode: none), and the last use by a node that is
  // neither the output node nor annotated itself (what reinplace counts as a later use).
  std::vector<NodeId> lastUser(nodes.size(), kNoNode), lastCountedUser(nodes.size(), kNoNode);
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const Node& n = nodes[i];
    const bool counted = !n.isOutput() && !n.shareAllocArgIndex();
    auto use = [&](NodeId r) {
      if (r >= nodes.size()) return;
      lastUser[r] = static_cast<NodeId>(i);
      if (counted) lastCountedUser[r] = static_cast<NodeId>(i);
    };
    for (const Arg& a : n.args) forEachRef(a, use);
    for (const auto& kw : n.kwargs) forEachRef(kw.second, use);
  }
  // The placeholders an output mutates.
  std::set<std::string_view> mutated;
  for (const OutputSpec& spec : program.signature.outputs)
    if (isMutation(spec.kind))
      if (const InputSpec* input = program.signature.mutatedInput(spec)) mutated.insert(input->name);

  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const Node& n = nodes[i];
    if (n.meta.empty()) continue;
    const std::optional<int> k = n.shareAllocArgIndex();
    if (!k || static_cast<std::size_t>(*k) >= n.args.size() || !n.args[*k].isRef()) continue;  // validate()'s
    const NodeId a = n.args[*k].node;
    if (a >= nodes.size()) continue;
    const std::string arg = "argument " + std::to_string(*k) + " (%" + nodes[a].name + ")";
    std::string reason;
    if (writesInPlaceByName(n)) {
      reason = "%" + n.name + " is an in-place or out= op (reinplace annotates functional nodes only)";
    } else if (lastUser[i] == kNoNode) {
      reason = "its result is used nowhere (export removes dead code before reinplace annotates)";
    } else if (nodes[a].isPlaceholder() && !mutated.count(nodes[a].name)) {
      const InputSpec* spec = program.signature.inputForPlaceholder(nodes[a].name);
      reason = arg + " is " + (spec ? "a " + std::string(toString(spec->kind)) : std::string("a placeholder")) +
               " that no output mutates (reinplace overwrites only mutated buffers and user inputs)";
    } else if (lastCountedUser[a] != kNoNode && lastCountedUser[a] > i) {
      reason = arg + " is used later by %" + nodes[lastCountedUser[a]].name +
               " (reinplace overwrites only an argument nothing uses later)";
    }
    if (!reason.empty()) out.push_back({static_cast<NodeId>(i), std::move(reason)});
  }
  return out;
}

}  // namespace wb
