// proofs/ordering_words.h: the ordering proof's facts in graph words: violated dependences
// ("copy_(b_s) at 4 precedes %add at 6, which reads b_s's storage") and the explanation of a
// copy's position, in the words of `place --explain` (not a public header).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "proofs/ordering_internal.h"

namespace wb::proofs::detail {

class Words {
 public:
  Words(const Program& program, const std::vector<InsertedNode>& inserted, const std::vector<std::size_t>& placedOf)
      : g_(program.graph), inserted_(inserted), placedOf_(placedOf) {}

  std::string insertedLabel(std::size_t u) const {
    const InsertedNode& n = inserted_[u];
    if (n.kind == InsertedNode::Kind::Clone) return "clone(%" + g_.nodes[n.value].name + ")";
    return "copy_(" + g_.nodes[n.target].name + ")";
  }
  std::string node(NodeId i) const { return nodeLabel(g_, i); }
  std::string at(NodeId i) const { return placedOf_[i] == kNone ? "(dropped)" : std::to_string(placedOf_[i]); }

  // " through %view_copy", " through list argument 0", " (its result shares that storage)".
  std::string through(const Access& a) const {
    std::string s;
    if (a.through != kNoNode && a.through != a.root) s += " through " + node(a.through);
    if (a.via == Via::ListElement) s += (s.empty() ? " through" : ",") + std::string(" list argument ") + std::to_string(a.argument);
    else if (a.via == Via::ShareAlloc) s += " (its result is allocated in that storage: _share_alloc_with_arg_idx)";
    else if (a.via == Via::Havoc) s += " (no schema: it may read and write every argument)";
    return s;
  }
  // Why value `through` shares root `root`, when it does through an op without a schema or a
  // `*_copy` view: " (%getitem may be a view of b_s: %executorch_call_delegate has no schema)".
  std::string aliasReason(const Effects& e, NodeId value, NodeId root) const {
    for (std::size_t steps = 0; steps < 64 && value != kNoNode && value != root; ++steps) {
      const NodeEffects& ne = e.nodes[value];
      auto it = std::find_if(ne.roots.begin(), ne.roots.end(), [&](const RootLink& l) { return l.root == root; });
      if (it == ne.roots.end()) return {};
      if (it->via == Via::Havoc)
        return " (" + node(value) + " may be a view of " + node(root) + ": no schema)";
      if (it->via == Via::CopyView) return " (" + node(value) + " is a view of " + node(root) + " once *_copy views are views)";
      if (it->via == Via::ShareAlloc) return " (" + node(value) + " is allocated in " + node(root) + "'s storage)";
      value = it->from;
    }
    return {};
  }

  std::string violation(const Dependence& d, const Effects& e) const {
    const std::string u = insertedLabel(d.inserted) + " at " + std::to_string(inserted_[d.inserted].placedIndex);
    std::string s;
    if (d.other) {
      const std::string o = insertedLabel(*d.other) + " at " + std::to_string(inserted_[*d.other].placedIndex);
      if (d.kind == DepKind::BeforeOverwrite)
        s = u + " follows " + o + ", which overwrites " + node(d.root) + ", and " + insertedLabel(d.inserted) +
            " reads " + node(d.root) + through(d.access);
      else if (d.kind == DepKind::TargetOrder)
        s = u + " follows " + o + ": both write " + node(d.root) + ", and output " +
            std::to_string(inserted_[d.inserted].outputIndex) + " must be written before output " +
            std::to_string(inserted_[*d.other].outputIndex);
      else
        s = u + " precedes " + o + ", the clone it copies";
      return s + modesText(d.modes);
    }
    if (d.before) return u + " follows the output node";
    const std::string n = node(d.node) + " at " + at(d.node);
    switch (d.kind) {
      case DepKind::AfterPlaceholders: s = u + " precedes the placeholder " + n + " (placeholders come first)"; break;
      case DepKind::AfterValue:
        s = u + " precedes " + n + ", which defines the value it " +
            (inserted_[d.inserted].kind == InsertedNode::Kind::Clone ? "clones" : "copies");
        break;
      case DepKind::AfterTargetAccess:
        s = u + " precedes " + n + ", which " + (d.writes ? "writes " : "reads ") + node(d.root) + "'s storage" +
            through(d.access) + aliasReason(e, d.access.through, d.root);
        break;
      case DepKind::AfterValueWrite:
        s = u + " precedes " + n + ", which writes " + node(d.root) + "'s storage" + through(d.access) +
            aliasReason(e, d.access.through, d.root);
        if (d.root != inserted_[d.inserted].value) s += ", shared by the value " + node(inserted_[d.inserted].value);
        break;
      default: break;
    }
    if (!d.live) s += "; no run observes what " + node(d.node) + " computes";
    return s + modesText(d.modes);
  }

  // The explanation of why u cannot go earlier, from the dependence that binds it, in the
  // words of `place --explain` (core/placement_early.cpp explain()).
  std::string explanation(const Dependence& d, std::size_t u, const Effects& e, std::string& rule, std::string& binding) const {
    const InsertedNode& n = inserted_[u];
    auto throughVia = [&](NodeId via, NodeId root) { return via != kNoNode && via != root ? " through " + node(via) : ""; };
    if (d.other || d.inserted != u) {
      // Bound by another inserted node p that must precede u.
      const std::size_t p = d.inserted == u ? *d.other : d.inserted;
      const InsertedNode& pn = inserted_[p];
      binding = pn.name;
      if (d.kind == DepKind::AfterValue) {
        rule = "CLONE";
        return "after %" + pn.name + ": copies a clone of %" + g_.nodes[n.value].name +
               " taken where it is final, because a cycle of copies would overwrite it first";
      }
      if (pn.kind == InsertedNode::Kind::Clone) {
        rule = "R2";
        return "after %" + pn.name + ": reads " + node(d.root) + throughVia(d.access.through, d.root) +
               " (the clone that breaks a cycle of copies)";
      }
      rule = "C";
      std::string s = "after %" + pn.name + " (copy_ of " + g_.nodes[pn.target].name + ", C): ";
      if (d.kind == DepKind::TargetOrder) return s + "both write " + g_.nodes[n.target].name + "; output order keeps the later write last";
      return s + "that copy reads " + node(d.root) + throughVia(d.access.through, d.root) + ", which this copy overwrites";
    }
    binding = g_.nodes[d.node].name;
    rule = std::string(toString(d.kind));
    const std::string head = "after %" + binding + ": ";
    switch (d.kind) {
      case DepKind::AfterPlaceholders: return head + "the last placeholder (copies never go among the placeholders)";
      case DepKind::AfterValue: return head + "the value is defined here";
      case DepKind::AfterTargetAccess:
        return head + (d.writes ? "writes " : "reads ") + node(d.root) + throughVia(d.access.through, d.root) +
               aliasReason(e, d.access.through, d.root) + modesText(d.modes);
      case DepKind::AfterValueWrite:
        return head + "writes %" + g_.nodes[d.root].name + "'s storage" + throughVia(d.access.through, d.root) +
               (n.kind == InsertedNode::Kind::Copy ? " (value of " + g_.nodes[n.target].name + ")" : "") + modesText(d.modes);
      default: return head + std::string(toString(d.kind));
    }
  }

 private:
  const Graph& g_;
  const std::vector<InsertedNode>& inserted_;
  const std::vector<std::size_t>& placedOf_;
};

}  // namespace wb::proofs::detail
