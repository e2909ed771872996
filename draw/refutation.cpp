// draw/refutation.cpp: the marks of a refuted placement, from the oracle's check and early's
// explanations, or from the ordering proof (see draw/refutation.h).
#include "draw/refutation.h"

#include <algorithm>
#include <map>
#include <sstream>
#include <string_view>
#include <utility>

#include "core/alias.h"

namespace wb::draw {

namespace {

// The k-th copy into each buffer, by buffer name: a buffer written back twice (two mutation
// outputs with one target) pairs its copies in order.
using CopyKey = std::pair<std::string, std::size_t>;

std::map<CopyKey, const CopyExplanation*> copiesByBuffer(const std::vector<CopyExplanation>& copies) {
  std::map<CopyKey, const CopyExplanation*> out;
  std::map<std::string, std::size_t> seen;
  for (const CopyExplanation& c : copies) out[{c.buffer, seen[c.buffer]++}] = &c;
  return out;
}

std::map<std::string, std::size_t> positions(const Graph& graph) {
  std::map<std::string, std::size_t> out;
  for (std::size_t i = 0; i < graph.nodes.size(); ++i) out.emplace(graph.nodes[i].name, i);
  return out;
}

std::string rule(const CopyExplanation& e) { return std::string(toString(e.rule)); }

// "after %sum_1: reads b_s through %view_copy" -> "must follow %sum_1, which reads b_s through
// %view_copy (early, R2)"; an explanation of another shape is quoted whole.
std::string mustFollow(const CopyExplanation& e) {
  const std::string prefix = "after %" + e.bindingNode + ": ";
  if (e.text.rfind(prefix, 0) == 0)
    return "must follow %" + e.bindingNode + ", which " + e.text.substr(prefix.size()) + " (early, " + rule(e) + ")";
  return "must follow %" + e.bindingNode + " (early, " + rule(e) + ": " + e.text + ")";
}

std::string earlyReason(const CopyExplanation& e) { return "early, " + rule(e) + ": " + e.text; }

void addOffending(Refutation& r, const std::string& copy) {
  if (std::find(r.offendingCopies.begin(), r.offendingCopies.end(), copy) == r.offendingCopies.end())
    r.offendingCopies.push_back(copy);
}

// Dependences on early's binding node (R0-R3) or on the copy early's rule C names.
void bindingDependences(const PlacedProgram& placed, const PlacedProgram& early, Refutation& r) {
  const auto placedCopies = copiesByBuffer(placed.copies);
  const auto earlyCopies = copiesByBuffer(early.copies);
  std::map<std::string, CopyKey> earlyKeyOfCopy;
  for (const auto& [key, e] : earlyCopies) earlyKeyOfCopy[e->copyNode] = key;
  const auto at = positions(placed.program.graph);

  for (const auto& [key, e] : earlyCopies) {
    const auto mine = placedCopies.find(key);
    if (mine == placedCopies.end()) {
      MissingWriteBack m{e->buffer, e->value, "", earlyReason(*e), std::nullopt};
      const auto binding = at.find(e->bindingNode);
      if (e->rule != CopyRule::CopyOrder && e->rule != CopyRule::Clone && binding != at.end() &&
          !placed.program.graph.nodes[binding->second].isPlaceholder())
        m.after = e->bindingNode;
      r.missing.push_back(std::move(m));
      continue;
    }
    const CopyExplanation& copy = *mine->second;
    std::string first;
    if (e->rule == CopyRule::CopyOrder) {
      // The binding is another copy of early's: the same write-back in the placed program.
      const auto earlyKey = earlyKeyOfCopy.find(e->bindingNode);
      if (earlyKey == earlyKeyOfCopy.end()) continue;
      const auto other = placedCopies.find(earlyKey->second);
      if (other == placedCopies.end()) continue;
      first = other->second->copyNode;
    } else if (e->rule == CopyRule::End || e->rule == CopyRule::Clone || e->bindingNode.empty()) {
      continue;
    } else {
      first = e->bindingNode;
    }
    const auto firstAt = at.find(first);
    const auto copyAt = at.find(copy.copyNode);
    if (firstAt == at.end() || copyAt == at.end() || copyAt->second > firstAt->second) continue;
    addOffending(r, copy.copyNode);
    r.broken.push_back({first, copy.copyNode, e->rule == CopyRule::CopyOrder ? "must follow %" + first + " (early, C: " + e->text + ")"
                                                             : mustFollow(*e)});
  }
}

// Copy against copy: copy Y reads the buffer copy X writes, X runs first, and early orders Y's
// write-back before X's. (Early's explanation names only the latest thing a copy follows, so a
// copy that must precede another, as in H8, shows here rather than in its own explanation.)
void copyOrderDependences(const PlacedProgram& placed, const PlacedProgram& early, const SchemaTable& schemas,
                          Refutation& r) {
  if (placed.copies.size() < 2) return;
  const Graph& graph = placed.program.graph;
  const AliasInfo aliases = analyzeAliases(placed.program, schemas);
  const auto at = positions(graph);
  std::map<std::string, std::size_t> earlyOrder;  // buffer -> index of its first copy in early
  for (std::size_t i = 0; i < early.copies.size(); ++i) earlyOrder.emplace(early.copies[i].buffer, i);

  for (const CopyExplanation& x : placed.copies) {
    const auto xAt = at.find(x.copyNode);
    const auto bufferAt = at.find(x.buffer);
    if (xAt == at.end() || bufferAt == at.end()) continue;
    const RootId written = static_cast<RootId>(bufferAt->second);
    for (const CopyExplanation& y : placed.copies) {
      const auto yAt = at.find(y.copyNode);
      if (&x == &y || yAt == at.end() || yAt->second < xAt->second) continue;
      const auto valueAt = at.find(y.value);
      if (valueAt == at.end() || !aliases.mayAliasRoot(static_cast<NodeId>(valueAt->second), written)) continue;
      const auto ex = earlyOrder.find(x.buffer), ey = earlyOrder.find(y.buffer);
      if (ex == earlyOrder.end() || ey == earlyOrder.end() || ey->second > ex->second) continue;
      addOffending(r, x.copyNode);
      r.broken.push_back({y.copyNode, x.copyNode,
                          "must follow %" + y.copyNode + ", which reads the old " + x.buffer + " (early, C)"});
    }
  }
}

// What each output means: for a visible output, the node it returns; for a mutation output, the
// buffer it writes back.
void changedOutputs(const Program& input, const PlacedProgram& placed, Refutation& r) {
  const std::vector<Arg> before = input.graph.returnedValues();
  const std::vector<Arg> after = placed.program.graph.returnedValues();
  const auto name = [](const Graph& g, const Arg& a) {
    return a.isRef() ? "%" + g.nodes[a.node].name : std::string("a constant");
  };
  std::vector<std::string> visibleBefore;
  for (std::size_t i = 0; i < input.signature.outputs.size() && i < before.size(); ++i)
    if (!isMutation(input.signature.outputs[i].kind)) visibleBefore.push_back(name(input.graph, before[i]));

  std::map<std::string, std::string> copyBuffer;  // copy node -> buffer it writes
  for (const CopyExplanation& c : placed.copies) copyBuffer[c.copyNode] = c.buffer;
  std::size_t visible = 0;
  const Signature& sig = placed.program.signature;
  for (std::size_t i = 0; i < sig.outputs.size() && i < after.size(); ++i) {
    const OutputSpec& spec = sig.outputs[i];
    const std::string returned = name(placed.program.graph, after[i]);
    if (!isMutation(spec.kind)) {
      if (visible < visibleBefore.size() && visibleBefore[visible] != returned)
        r.changedOutputs.push_back({i, std::string(toString(spec.kind)) + " " + std::to_string(visible) +
                                           " returns " + returned + ", not " + visibleBefore[visible]});
      ++visible;
      continue;
    }
    const InputSpec* target = sig.mutatedInput(spec);
    if (!target || !after[i].isRef()) continue;
    const std::string& node = placed.program.graph.nodes[after[i].node].name;
    const auto copy = copyBuffer.find(node);
    if (copy != copyBuffer.end() && copy->second != target->name)
      r.changedOutputs.push_back({i, std::string(toString(spec.kind)) + " '" + spec.target + "' names %" + node +
                                         ", the write-back of " + copy->second});
  }
}

// The output position of the mutation spec writing back `buffer`, in the placed program.
std::optional<std::size_t> mutationOutput(const Program& placed, const std::string& buffer) {
  const Signature& sig = placed.signature;
  for (std::size_t i = 0; i < sig.outputs.size(); ++i) {
    if (!isMutation(sig.outputs[i].kind)) continue;
    if (const InputSpec* target = sig.mutatedInput(sig.outputs[i]); target && target->name == buffer) return i;
  }
  return std::nullopt;
}

oracle::ViewModeSet with(oracle::ViewModeSet set, oracle::ViewMode mode) {
  using oracle::ViewModeSet;
  const bool copy = set == ViewModeSet::CopyViews || set == ViewModeSet::Both || mode == oracle::ViewMode::CopyViews;
  const bool alias = set == ViewModeSet::AliasViews || set == ViewModeSet::Both || mode == oracle::ViewMode::AliasViews;
  return copy && alias ? ViewModeSet::Both : copy ? ViewModeSet::CopyViews : ViewModeSet::AliasViews;
}

std::string modesText(oracle::ViewModeSet modes) {
  return modes == oracle::ViewModeSet::Both ? "in both view modes" : "[" + std::string(oracle::toString(modes)) + "]";
}

void divergences(const Program& drawn, const oracle::CheckReport& report, Refutation& r) {
  const std::vector<Arg> returned = drawn.graph.returnedValues();
  for (const oracle::Mismatch& m : report.bugs) {
    const oracle::Difference& d = m.difference;
    const auto same = std::find_if(r.divergences.begin(), r.divergences.end(), [&](const Divergence& v) {
      return v.isOutput == d.isOutput && v.label == d.label;
    });
    if (same != r.divergences.end()) {
      same->viewModes = with(same->viewModes, m.viewMode);
      continue;
    }
    Divergence v;
    v.viewModes = with(oracle::ViewModeSet::None, m.viewMode);
    v.isOutput = d.isOutput;
    v.label = d.label;
    v.firstDivergingNode = m.firstDivergingNode;
    if (d.isOutput) {
      // The oracle counts visible outputs (those that are no BUFFER_MUTATION), in order.
      std::size_t visible = 0;
      for (std::size_t i = 0; i < drawn.signature.outputs.size() && i < returned.size(); ++i) {
        if (drawn.signature.outputs[i].kind == OutputKind::BufferMutation) continue;
        if (visible++ == d.index) {
          v.position = i;
          break;
        }
      }
    } else {
      v.placeholder = d.label;
    }
    r.divergences.push_back(std::move(v));
  }
  // The words, once the view modes are known. The values are in `wbcheck check`'s report: in
  // a picture they say nothing a person can check.
  for (Divergence& v : r.divergences) {
    std::string what;
    if (v.isOutput && v.position && *v.position < returned.size() && returned[*v.position].isRef()) {
      what = "output " + std::to_string(*v.position) + " (%" + drawn.graph.nodes[returned[*v.position].node].name + ")";
    } else {
      what = v.isOutput ? v.label : "the final value of %" + v.placeholder;
    }
    v.text = what + " differs from S_par " + modesText(v.viewModes);
  }
}

}  // namespace

Refutation refute(const Program& input, const PlacedProgram& placed, const PlacedProgram& early,
                  const oracle::CheckReport& report, const SchemaTable& schemas) {
  Refutation r;
  if (placed.failure) {
    r.placementFailure = placed.failure;
    return r;
  }
  if (report.placementFailure) r.placementFailure = report.placementFailure;
  if (report.bugs.empty() && !r.placementFailure) return r;
  bindingDependences(placed, early, r);
  for (MissingWriteBack& m : r.missing) m.outputPosition = mutationOutput(placed.program, m.buffer);
  copyOrderDependences(placed, early, schemas, r);
  changedOutputs(input, placed, r);
  divergences(placed.program, report, r);
  return r;
}

void useProofViolations(const proofs::OrderingReport& proof, const Program& input, Refutation& r) {
  if (proof.verdict == proofs::Verdict::Unknown) return;
  std::vector<BrokenDependence> broken;
  std::vector<std::string> offending;
  for (const proofs::Violation& v : proof.violations) {
    if (!v.live || v.dependence >= proof.dependences.size()) continue;
    const proofs::Dependence& d = proof.dependences[v.dependence];
    const std::string& inserted = proof.inserted[d.inserted].name;
    std::string other;
    if (d.other) {
      other = proof.inserted[*d.other].name;
    } else if (d.node != kNoNode && d.node < input.graph.nodes.size()) {
      other = input.graph.nodes[d.node].name;
    } else {
      continue;
    }
    // `first` must run before `late`, which the placement put before it.
    const std::string& first = d.before ? inserted : other;
    const std::string& late = d.before ? other : inserted;
    const std::string reason = v.text + " (Z3 ordering proof, " + std::string(proofs::toString(d.kind)) + ")";
    broken.push_back({first, late, reason});
    const bool lateIsInserted = !d.before || d.other.has_value();
    if (lateIsInserted && std::find(offending.begin(), offending.end(), late) == offending.end())
      offending.push_back(late);
  }
  r.broken = std::move(broken);
  r.offendingCopies = std::move(offending);
  r.fromProof = true;
}

}  // namespace wb::draw
