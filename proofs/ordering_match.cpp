// proofs/ordering_match.cpp: the placed program against the program (what was inserted,
// where, and what else changed), and the dependences of what was inserted (see ordering.h).
#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

#include "core/name_index.h"
#include "proofs/ordering_internal.h"

namespace wb::proofs::detail {

const Effects& effectsIn(std::span<const ModeEffects> modes, std::uint8_t bit) {
  for (const ModeEffects& m : modes)
    if (m.modes & bit) return *m.effects;
  return *modes.front().effects;
}

namespace {

// The visible outputs of the program under S_par, as the oracle observes them: every position
// whose spec is no BUFFER_MUTATION; a USER_INPUT_MUTATION position by its target's final
// contents (S_par writes the target at the end), any other by the node it returns.
std::vector<std::string> referenceOutputs(const Program& p) {
  std::vector<std::string> out;
  const std::span<const Arg> returned = p.graph.returnedArgs();
  const std::vector<OutputSpec>& specs = p.signature.outputs;
  for (std::size_t i = 0; i < returned.size(); ++i) {
    if (i < specs.size() && specs[i].kind == OutputKind::BufferMutation) continue;
    if (i < specs.size() && specs[i].kind == OutputKind::UserInputMutation)
      out.push_back("the final contents of " + specs[i].target);
    else
      out.push_back(returned[i].isRef() ? "%" + p.graph.nodes[returned[i].node].name : std::string("a constant"));
  }
  return out;
}

class Matcher {
 public:
  Matcher(const Program& program, const Program& placed, const std::vector<MutationOutput>& mutations,
          std::span<const ModeEffects> modes)
      : program_(program), placed_(placed), mutations_(mutations), modes_(modes) {}

  Matching run() {
    const Graph& g = program_.graph;
    const Graph& q = placed_.graph;
    m_.placedOf.assign(g.nodes.size(), kNone);
    matchByName();
    std::vector<std::size_t> insertedAt(q.nodes.size(), kNone);  // per placed node: its inserted node
    std::int64_t anchor = -1;
    std::uint32_t rank = 0;
    std::size_t lastOriginal = 0;
    bool anyOriginal = false;
    for (std::size_t j = 0; j + 1 < q.nodes.size(); ++j) {
      const Node& n = q.nodes[j];
      const NodeId i = originalOf_[j];
      if (i != kNoNode && !g.nodes[i].isOutput()) {
        if (!sameNodeText(g.nodes[i], g, n, q)) return outside("the placement changed %" + n.name);
        if (anyOriginal && i <= lastOriginal) return outside("the placement reordered %" + n.name);
        m_.placedOf[i] = j;
        lastOriginal = i;
        anyOriginal = true;
        anchor = static_cast<std::int64_t>(i);
        rank = 0;
        continue;
      }
      InsertedNode u;
      u.name = n.name;
      u.anchor = anchor;
      u.rank = ++rank;
      u.placedIndex = j;
      auto original = [&](const Arg& a) -> NodeId { return a.isRef() ? originalOf_[a.node] : kNoNode; };
      auto name = [&](const Arg& a) -> const std::string& { return q.nodes[a.node].name; };
      if (n.op == NodeOp::CallFunction && n.target == "aten::copy_" && n.args.size() >= 2 && n.args[0].isRef() &&
          n.args[1].isRef()) {
        u.kind = InsertedNode::Kind::Copy;
        u.target = original(n.args[0]);
        if (u.target == kNoNode || !g.nodes[u.target].isPlaceholder())
          return outside("%" + n.name + " copies into " + name(n.args[0]) + ", which is no placeholder of the program");
        if (const std::size_t c = insertedAt[n.args[1].node]; c != kNone) {
          if (m_.inserted[c].kind != InsertedNode::Kind::Clone)
            return outside("%" + n.name + " copies %" + name(n.args[1]) + ", another copy");
          u.clone = c;
          u.value = m_.inserted[c].value;
        } else {
          u.value = original(n.args[1]);
          if (u.value == kNoNode) return outside("%" + n.name + " copies " + name(n.args[1]) + ", unknown to the program");
        }
      } else if (n.op == NodeOp::CallFunction && n.target == "aten::clone" && !n.args.empty() && n.args[0].isRef()) {
        u.kind = InsertedNode::Kind::Clone;
        u.value = original(n.args[0]);
        if (u.value == kNoNode) return outside("%" + n.name + " clones " + name(n.args[0]) + ", unknown to the program");
      } else {
        return outside("%" + n.name + " (" + std::string(n.target) +
                       ") is neither a copy_ nor a clone: the ordering proof models placements that insert only those");
      }
      u.text = u.kind == InsertedNode::Kind::Clone ? "clone(" + nodeLabel(g, u.value) + ")"
                                                   : "copy_(" + nodeLabel(g, u.target) + ", %" + name(n.args[1]) + ")";
      insertedAt[j] = m_.inserted.size();
      m_.inserted.push_back(std::move(u));
    }
    m_.placedOf[g.nodes.size() - 1] = q.nodes.size() - 1;  // both end with their output node (validated)
    droppedNodes();
    writeBacks();
    outputLayout();
    return std::move(m_);
  }

 private:
  const Program& program_;
  const Program& placed_;
  const std::vector<MutationOutput>& mutations_;
  std::span<const ModeEffects> modes_;
  Matching m_;
  std::vector<NodeId> originalOf_;  // per placed node: the program's node of its name, or kNoNode

  // The two programs are matched by name (the text that identifies a node across programs; a
  // valid program names each node once): the placement keeps the program's nodes and names,
  // and what it inserts has names of its own.
  void matchByName() {
    const Graph& g = program_.graph;
    const Graph& q = placed_.graph;
    auto nameOf = [&g](std::uint32_t id) -> std::string_view { return g.nodes[id].name; };
    FlatNameIndex<decltype(nameOf)> byName(nameOf, g.nodes.size());
    for (std::size_t i = 0; i < g.nodes.size(); ++i) byName.insert(static_cast<std::uint32_t>(i));
    originalOf_.assign(q.nodes.size(), kNoNode);
    for (std::size_t j = 0; j < q.nodes.size(); ++j)
      if (const std::uint32_t i = byName.find(q.nodes[j].name); i != byName.kNone) originalOf_[j] = i;
  }

  Matching outside(std::string why) {
    m_.outside = std::move(why);
    return std::move(m_);
  }
  void fault(FaultKind kind, std::string text, NodeId node = kNoNode) {
    m_.faults.push_back({kind, std::move(text), node});
  }

  // A node the placement removed matters if some run could observe it (effects.h, liveness).
  // The placed program validates, so every user of a dropped node is dropped too: what can be
  // observed is what dropped nodes write. A live dropped node that writes is the fault.
  void droppedNodes() {
    const Graph& g = program_.graph;
    for (std::size_t i = 0; i + 1 < g.nodes.size(); ++i) {
      if (m_.placedOf[i] != kNone || g.nodes[i].isOutput()) continue;
      const NodeEffects& copyViews = effectsIn(modes_, 1).nodes[i];
      const NodeEffects& aliasViews = effectsIn(modes_, 2).nodes[i];
      if ((!copyViews.live && !aliasViews.live) || copyViews.writes.empty()) continue;
      const Access& w = copyViews.writes.front();
      std::string why = "the placed program drops %" + g.nodes[i].name + ", which writes " + nodeLabel(g, w.root) +
                        "'s storage" + (w.via == Via::ShareAlloc ? " (its result shares that storage)" : "");
      const std::uint8_t modes = static_cast<std::uint8_t>((copyViews.live ? 1 : 0) | (aliasViews.live ? 2 : 0));
      fault(FaultKind::DroppedNode, why + modesText(modes), static_cast<NodeId>(i));
      m_.faults.back().havoc = !copyViews.liveWithoutHavocWrites && !aliasViews.liveWithoutHavocWrites;
      if (m_.faults.back().havoc) m_.faults.back().text += " (only if ops without a schema write their arguments)";
    }
  }

  void writeBacks() {
    const Graph& g = program_.graph;
    std::vector<bool> written(mutations_.size(), false);
    for (InsertedNode& u : m_.inserted) {
      if (u.kind != InsertedNode::Kind::Copy) continue;
      std::optional<std::size_t> match, taken;
      for (std::size_t k = 0; k < mutations_.size(); ++k) {
        const MutationOutput& mo = mutations_[k];
        if (mo.target != u.target || mo.value != u.value) continue;
        if (!written[k]) {
          match = k;
          break;
        }
        taken = k;
      }
      if (match) {
        written[*match] = true;
        u.outputIndex = mutations_[*match].outputIndex;
        u.noOp = mutations_[*match].identity && !u.clone;
      } else if (taken) {
        u.outputIndex = mutations_[*taken].outputIndex;
        fault(FaultKind::DuplicateCopy, "%" + u.name + " writes " + nodeLabel(g, u.value) + " into " +
                                            nodeLabel(g, u.target) + " again (output " +
                                            std::to_string(mutations_[*taken].outputIndex) + " has a copy already)",
              u.target);
      } else {
        fault(FaultKind::UnexpectedCopy, "%" + u.name + " writes " + nodeLabel(g, u.value) + " into " +
                                             nodeLabel(g, u.target) + ", which no mutation output asks for",
              u.target);
      }
    }
    for (std::size_t k = 0; k < mutations_.size(); ++k) {
      const MutationOutput& mo = mutations_[k];
      if (written[k] || mo.identity || mo.target == kNoNode) continue;
      // Only the last mutation output of a target decides its final contents under S_par.
      bool last = true;
      for (std::size_t l = k + 1; l < mutations_.size(); ++l) last = last && mutations_[l].target != mo.target;
      if (!last) continue;
      const OutputSpec& spec = program_.signature.outputs[mo.outputIndex];
      fault(FaultKind::MissingWriteBack, "no copy writes " + nodeLabel(g, mo.value) + " into " + nodeLabel(g, mo.target) +
                                             " (output " + std::to_string(mo.outputIndex) + ", " +
                                             std::string(toString(spec.kind)) + " target='" + spec.target + "')",
            mo.target);
    }
  }

  // The placed program's visible outputs, as the oracle observes a placed program: the node
  // each position returns (what ExecuTorch's emitter returns there, bug B2 included). A copy
  // into x, or a mutation value that is x's whole storage, returns x's final contents.
  std::vector<std::string> placedOutputs() const {
    std::vector<std::string> out;
    const std::span<const Arg> returned = placed_.graph.returnedArgs();
    const std::vector<OutputSpec>& specs = placed_.signature.outputs;
    for (std::size_t i = 0; i < returned.size(); ++i) {
      if (i < specs.size() && specs[i].kind == OutputKind::BufferMutation) continue;
      if (!returned[i].isRef()) {
        out.push_back("a constant");
        continue;
      }
      const NodeId j = returned[i].node;
      std::optional<NodeId> contentsOf;
      for (const InsertedNode& u : m_.inserted)
        if (u.placedIndex == j && u.kind == InsertedNode::Kind::Copy) contentsOf = u.target;
      if (!contentsOf)
        if (NodeId v = originalOf_[j]; v != kNoNode)
          for (const MutationOutput& mo : mutations_)
            if (mo.identity && mo.value == v) contentsOf = mo.target;
      if (contentsOf && program_.graph.nodes[*contentsOf].isPlaceholder()) {
        const InputSpec* input = program_.signature.inputForPlaceholder(program_.graph.nodes[*contentsOf].name);
        if (input && input->kind == InputKind::UserInput && i < specs.size() && specs[i].kind == OutputKind::UserInputMutation) {
          out.push_back("the final contents of " + program_.graph.nodes[*contentsOf].name);
          continue;
        }
      }
      out.push_back("%" + placed_.graph.nodes[j].name);
    }
    return out;
  }

  void outputLayout() {
    const std::vector<std::string> want = referenceOutputs(program_), got = placedOutputs();
    if (want == got) return;
    std::string text = "the visible outputs differ: S_par returns (";
    for (std::size_t i = 0; i < want.size(); ++i) text += (i ? ", " : "") + want[i];
    text += "), the placed program returns (";
    for (std::size_t i = 0; i < got.size(); ++i) text += (i ? ", " : "") + got[i];
    fault(FaultKind::OutputLayout, text + ")");
  }
};

// ---------------------------------------------------------------------------------------------
// The dependences, from the effects of both view modes.

class DependenceBuilder {
 public:
  // Nodes the placement dropped (placedOf: kNone) bind nothing: the dropped node is a fault
  // of its own (Matcher), and it has no position to be before or after.
  DependenceBuilder(const Program& program, const std::vector<InsertedNode>& inserted, std::span<const ModeEffects> modes,
                    const std::vector<std::size_t>& placedOf, const std::optional<DepKind>& drop)
      : g_(program.graph), inserted_(inserted), modes_(modes), placedOf_(placedOf), drop_(drop) {
    for (std::size_t u = 0; u < inserted.size(); ++u)
      if (inserted[u].kind == InsertedNode::Kind::Copy) copiesOf_[inserted[u].target].push_back(u);
    for (std::size_t i = 0; i < g_.nodes.size(); ++i)
      if (g_.nodes[i].isPlaceholder()) lastPlaceholder_ = static_cast<NodeId>(i);
  }

  std::vector<Dependence> run() {
    for (const ModeEffects& m : modes_) {
      currentModes_ = m.modes;
      for (std::size_t u = 0; u < inserted_.size(); ++u) constraintsOf(u, *m.effects);
    }
    // One dependence per (kind, ends, root), holding the modes it exists in.
    std::vector<Dependence> merged;
    merged.reserve(all_.size());
    std::map<std::tuple<int, std::size_t, bool, NodeId, std::size_t, NodeId>, std::size_t> index;
    for (Dependence& d : all_) {
      auto key = std::make_tuple(static_cast<int>(d.kind), d.inserted, d.before, d.node, d.other.value_or(kNone), d.root);
      auto [it, fresh] = index.emplace(key, merged.size());
      if (fresh) {
        merged.push_back(std::move(d));
      } else {
        Dependence& m = merged[it->second];
        m.modes |= d.modes;
        m.live = m.live || d.live;
        m.havoc = m.havoc && d.havoc;
      }
    }
    return merged;
  }

 private:
  const Graph& g_;
  const std::vector<InsertedNode>& inserted_;
  std::span<const ModeEffects> modes_;
  std::uint8_t currentModes_ = 0;  // the modes of the effects being read
  const std::vector<std::size_t>& placedOf_;
  std::optional<DepKind> drop_;
  std::map<NodeId, std::vector<std::size_t>> copiesOf_;  // target -> copies writing it
  NodeId lastPlaceholder_ = kNoNode;
  std::vector<Dependence> all_;

  void add(Dependence d, const Effects& e) {
    if (drop_ && d.kind == *drop_) return;
    if (!d.other && placedOf_[d.node] == kNone) return;
    d.modes = currentModes_;
    // Havoc: the access is one an op without a schema may make, or the storage is reached
    // through such an op's result (from the accessing argument, or from the value read).
    if (d.root != kNoNode) {
      d.havoc = d.access.via == Via::Havoc ||
                (d.access.through != kNoNode && sharesOnlyThroughHavoc(e, d.access.through, d.root));
      const InsertedNode& u = inserted_[d.inserted];
      if ((d.kind == DepKind::AfterValueWrite || d.kind == DepKind::BeforeOverwrite) && u.value != kNoNode)
        d.havoc = d.havoc || sharesOnlyThroughHavoc(e, u.value, d.root);
    }
    // A reader kept live only by what ops without a schema may write.
    if (d.kind == DepKind::AfterTargetAccess && !d.writes && d.live && !e.nodes[d.node].liveWithoutHavocWrites)
      d.havoc = true;
    all_.push_back(std::move(d));
  }
  void after(std::size_t u, DepKind kind, NodeId node, const Effects& e, NodeId root = kNoNode,
             Access access = {}, bool writes = false, bool live = true) {
    Dependence d;
    d.kind = kind;
    d.inserted = u;
    d.node = node;
    d.root = root;
    d.access = access;
    d.writes = writes;
    d.live = live;
    add(std::move(d), e);
  }

  void constraintsOf(std::size_t u, const Effects& e) {
    const InsertedNode& n = inserted_[u];
    if (lastPlaceholder_ != kNoNode) after(u, DepKind::AfterPlaceholders, lastPlaceholder_, e);
    {
      Dependence d;
      d.kind = DepKind::BeforeOutput;
      d.inserted = u;
      d.before = true;
      d.node = static_cast<NodeId>(g_.nodes.size() - 1);
      add(std::move(d), e);
    }
    if (n.noOp) {  // copies its target onto itself: only its definition binds it
      after(u, DepKind::AfterValue, n.value, e);
      return;
    }
    const bool readsOriginal = n.kind == InsertedNode::Kind::Clone || !n.clone;
    if (n.kind == InsertedNode::Kind::Copy && n.clone) {
      Dependence d;  // the copy reads its clone: after it
      d.kind = DepKind::AfterValue;
      d.inserted = u;
      d.other = *n.clone;
      add(std::move(d), e);
    }
    if (readsOriginal) {
      after(u, DepKind::AfterValue, n.value, e);
      // R3: after every node writing a storage of the value.
      for (const RootLink& r : e.nodes[n.value].roots)
        for (NodeId w : e.writersOf[r.root])  // a write the copy misses always shows in the target
          after(u, DepKind::AfterValueWrite, w, e, r.root, *e.writeOf(w, r.root), true, true);
      // C: before every copy overwriting a storage of the value (S_par reads before it writes).
      for (const RootLink& r : e.nodes[n.value].roots) {
        auto it = copiesOf_.find(r.root);
        if (it == copiesOf_.end()) continue;
        for (std::size_t c : it->second) {
          if (c == u || inserted_[c].noOp) continue;  // a no-op copy overwrites nothing
          Dependence d;
          d.kind = DepKind::BeforeOverwrite;
          d.inserted = u;
          d.before = true;
          d.other = c;
          d.root = r.root;
          d.access = Access{r.root, n.value, -1, -1, r.via};
          add(std::move(d), e);
        }
      }
    }
    if (n.kind != InsertedNode::Kind::Copy) return;
    // R2: after every node reading or writing the target's storage.
    const NodeId t = n.target;
    // A write after the copy lands in the target's final contents: always observable (even
    // when S_par's end would overwrite it, so the writer itself is not live).
    for (NodeId w : e.writersOf[t]) after(u, DepKind::AfterTargetAccess, w, e, t, *e.writeOf(w, t), true, true);
    for (NodeId r : e.readersOf[t])
      if (!e.writeOf(r, t)) after(u, DepKind::AfterTargetAccess, r, e, t, *e.readOf(r, t), false, e.nodes[r].live);
    // C: copies of one target in output order.
    for (std::size_t c : copiesOf_[t]) {
      if (c == u || inserted_[c].outputIndex <= n.outputIndex) continue;
      Dependence d;
      d.kind = DepKind::TargetOrder;
      d.inserted = u;
      d.before = true;
      d.other = c;
      d.root = t;
      add(std::move(d), e);
    }
  }
};


}  // namespace

Matching matchPlacement(const Program& program, const Program& placed, const std::vector<MutationOutput>& mutations,
                        std::span<const ModeEffects> modes) {
  return Matcher(program, placed, mutations, modes).run();
}

std::vector<Dependence> deriveDependences(const Program& program, const std::vector<InsertedNode>& inserted,
                                          std::span<const ModeEffects> modes, const std::vector<std::size_t>& placedOf,
                                          const std::optional<DepKind>& drop) {
  return DependenceBuilder(program, inserted, modes, placedOf, drop).run();
}

}  // namespace wb::proofs::detail
