// proofs/ordering.cpp: the ordering proof (see ordering.h for what is proved and how).
#include "proofs/ordering.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <sstream>
#include <tuple>
#include <utility>

#include "core/name_index.h"
#include "core/validate.h"

namespace wb::proofs {

std::string_view toString(DepKind kind) {
  switch (kind) {
    case DepKind::AfterPlaceholders: return "R0";
    case DepKind::AfterValue: return "R1";
    case DepKind::AfterTargetAccess: return "R2";
    case DepKind::AfterValueWrite: return "R3";
    case DepKind::BeforeOverwrite: return "C";
    case DepKind::TargetOrder: return "C-order";
    case DepKind::BeforeOutput: return "END";
  }
  return "?";
}

std::string_view toString(FaultKind kind) {
  switch (kind) {
    case FaultKind::PlacementFailed: return "placement-failed";
    case FaultKind::PlacedInvalid: return "placed-program-invalid";
    case FaultKind::MissingWriteBack: return "missing-write-back";
    case FaultKind::UnexpectedCopy: return "unexpected-copy";
    case FaultKind::DuplicateCopy: return "duplicate-copy";
    case FaultKind::DroppedNode: return "dropped-node";
    case FaultKind::OutputLayout: return "output-layout";
  }
  return "?";
}

std::size_t OrderingReport::liveViolations() const {
  return static_cast<std::size_t>(std::count_if(violations.begin(), violations.end(), [](const Violation& v) { return v.live; }));
}

namespace {

constexpr ViewMode kModes[] = {ViewMode::CopyViews, ViewMode::AliasViews};
std::uint8_t modeBit(ViewMode m) { return m == ViewMode::CopyViews ? 1 : 2; }
constexpr std::size_t kNone = static_cast<std::size_t>(-1);

std::string modesText(std::uint8_t modes) {
  if (modes == 1) return " [copy-views mode]";
  if (modes == 2) return " [alias-views mode]";
  return "";
}

// ---------------------------------------------------------------------------------------------
// The placed program against the program: which nodes were inserted, where, and what else
// changed.

struct Matching {
  std::vector<InsertedNode> inserted;
  std::vector<std::size_t> placedOf;  // per original node: its index in the placed graph, or kNone
  std::vector<StructuralFault> faults;
  std::optional<std::string> outside;  // the placement did something the proof does not model
};

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
          const Effects (&effects)[2])
      : program_(program), placed_(placed), mutations_(mutations), effects_(effects) {}

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
  const Effects (&effects_)[2];
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
      const NodeEffects& copyViews = effects_[0].nodes[i];
      const NodeEffects& aliasViews = effects_[1].nodes[i];
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
  DependenceBuilder(const Program& program, const std::vector<InsertedNode>& inserted, const Effects (&effects)[2],
                    const std::vector<std::size_t>& placedOf, const std::optional<DepKind>& drop)
      : g_(program.graph), inserted_(inserted), effects_(effects), placedOf_(placedOf), drop_(drop) {
    for (std::size_t u = 0; u < inserted.size(); ++u)
      if (inserted[u].kind == InsertedNode::Kind::Copy) copiesOf_[inserted[u].target].push_back(u);
    for (std::size_t i = 0; i < g_.nodes.size(); ++i)
      if (g_.nodes[i].isPlaceholder()) lastPlaceholder_ = static_cast<NodeId>(i);
  }

  std::vector<Dependence> run() {
    for (const Effects& e : effects_)
      for (std::size_t u = 0; u < inserted_.size(); ++u) constraintsOf(u, e);
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
  const Effects (&effects_)[2];
  const std::vector<std::size_t>& placedOf_;
  std::optional<DepKind> drop_;
  std::map<NodeId, std::vector<std::size_t>> copiesOf_;  // target -> copies writing it
  NodeId lastPlaceholder_ = kNoNode;
  std::vector<Dependence> all_;

  void add(Dependence d, const Effects& e) {
    if (drop_ && d.kind == *drop_) return;
    if (!d.other && placedOf_[d.node] == kNone) return;
    d.modes = modeBit(e.mode);
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

// ---------------------------------------------------------------------------------------------
// Words.

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

// ---------------------------------------------------------------------------------------------
// The queries.

class Prover {
 public:
  Prover(const Program& program, const PlacedProgram& placed, const SchemaTable& schemas, bool requireMinimal,
         const OrderingOptions& options, z3::context& context, Solver& solver)
      : program_(program),
        placed_(placed),
        schemas_(schemas),
        options_(options),
        context_(&context),
        solver_(&solver),
        queriesBefore_(solver.queries()) {
    report_.minimalityRequired = requireMinimal;
  }

  OrderingReport run() {
    const auto start = std::chrono::steady_clock::now();
    prove();
    report_.totalSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return std::move(report_);
  }

 private:
  const Program& program_;
  const PlacedProgram& placed_;
  const SchemaTable& schemas_;
  const OrderingOptions& options_;
  OrderingReport report_;
  Effects effects_[2];
  std::vector<std::size_t> placedOf_;
  std::optional<Words> words_;
  z3::context* context_;
  Solver* solver_;
  std::size_t queriesBefore_;
  std::vector<z3::expr> pos_;    // per inserted node
  std::vector<z3::expr> facts_;  // per dependence
  std::vector<std::size_t> idOfDependence_;  // per dependence: its tracked id in scope, or kNone
  std::vector<std::size_t> dependenceOfId_;  // per tracked id in scope: its dependence, or kNone
  // Per tracked id in scope: the inserted nodes whose positions its fact relates (kNone for a
  // constant: the position of an original node, or the placed position).
  std::vector<std::pair<std::size_t, std::size_t>> endsOfId_;
  std::int64_t spacing_ = 1;

  void unknown(std::string why) {
    if (report_.verdict != Verdict::Unknown || report_.reason.empty()) report_.reason = std::move(why);
    report_.verdict = Verdict::Unknown;
  }

  void prove() {
    report_.verdict = Verdict::Proved;
    if (placed_.failure) {
      report_.faults.push_back({FaultKind::PlacementFailed, "the placement failed: " + *placed_.failure});
      return finish();
    }
    const Program& placedProgram = placed_.keptInput ? program_ : placed_.program;
    if (std::vector<Diagnostic> errors = validate(placedProgram); !errors.empty()) {
      report_.faults.push_back({FaultKind::PlacedInvalid, "the placed program is invalid: " + formatAll(errors)});
      return finish();
    }
    for (int m = 0; m < 2; ++m) effects_[m] = deriveEffects(program_, schemas_, kModes[m]);
    const std::vector<MutationOutput> mutations = mutationOutputs(program_, schemas_);
    Matching matching = Matcher(program_, placedProgram, mutations, effects_).run();
    if (matching.outside) {
      unknown(*matching.outside);
      return finish();
    }
    report_.inserted = std::move(matching.inserted);
    report_.faults = std::move(matching.faults);
    placedOf_ = std::move(matching.placedOf);
    words_.emplace(program_, report_.inserted, placedOf_);
    report_.dependences = DependenceBuilder(program_, report_.inserted, effects_, placedOf_, options_.dropKind).run();
    encode();
    // One scope for the proof: every dependence is tracked once, and each query enables the
    // ones it asks about.
    openScope();
    satisfied();
    if (report_.verdict != Verdict::Unknown && report_.satisfied == true && report_.violations.empty() && options_.minimality)
      minimality();
    closeScope();
    finish();
  }

  void finish() {
    report_.queries = solver_->queries() - queriesBefore_;
    if (report_.verdict == Verdict::Unknown) return;
    if (!report_.faults.empty() || report_.liveViolations() > 0) report_.verdict = Verdict::Refuted;
    else if (report_.minimalityRequired && report_.minimal == false) report_.verdict = Verdict::Refuted;
    else report_.verdict = Verdict::Proved;
  }

  std::int64_t originalPosition(NodeId i) const { return spacing_ * (static_cast<std::int64_t>(i) + 1); }

  const Effects& effectsOf(const Dependence& d) const { return effects_[(d.modes & 1) ? 0 : 1]; }

  std::string dependenceName(const Dependence& d) const {
    const Words& w = *words_;
    std::string s = std::string(toString(d.kind)) + " " + w.insertedLabel(d.inserted) + (d.before ? " before " : " after ");
    s += d.other ? w.insertedLabel(*d.other) : w.node(d.node);
    return s;
  }

  void encode() {
    z3::context& c = *context_;
    spacing_ = static_cast<std::int64_t>(report_.inserted.size()) + 1;
    for (const InsertedNode& u : report_.inserted) pos_.push_back(c.int_const(("pos_" + smtSymbol(u.name)).c_str()));
    for (const Dependence& d : report_.dependences) {
      const z3::expr& p = pos_[d.inserted];
      facts_.push_back(d.other ? (d.before ? p < pos_[*d.other] : pos_[*d.other] < p)
                               : (d.before ? p < c.int_val(originalPosition(d.node)) : p > c.int_val(originalPosition(d.node))));
      report_.dependenceNames.push_back(dependenceName(d));
    }
    idOfDependence_.assign(report_.dependences.size(), kNone);
  }

  // The proof runs in one solver scope (Solver::push): its dependences, placed positions and
  // questions are tracked there once, each query enables the ones it asks about, and nothing is
  // left for the next proof. (A scope per question would cost a pop each, which takes longer
  // than the question's query in a large program.)
  void openScope() { solver_->push(); }
  void closeScope() {
    solver_->pop();
    for (std::size_t id = solver_->tracked(); id < dependenceOfId_.size(); ++id)
      if (dependenceOfId_[id] != kNone) idOfDependence_[dependenceOfId_[id]] = kNone;
    dependenceOfId_.resize(solver_->tracked());
    endsOfId_.resize(solver_->tracked());
  }
  // Dependence `dep` as a tracked assertion of the open scope; its id.
  std::size_t track(std::size_t dep) {
    if (idOfDependence_[dep] != kNone) return idOfDependence_[dep];
    const Dependence& d = report_.dependences[dep];
    const std::size_t id = solver_->track(facts_[dep], report_.dependenceNames[dep]);
    dependenceOfId_.push_back(dep);
    endsOfId_.emplace_back(d.inserted, d.other.value_or(kNone));
    idOfDependence_[dep] = id;
    return id;
  }
  // A fact about the position of inserted node u alone.
  std::size_t trackOther(std::size_t u, const z3::expr& fact, std::string name) {
    const std::size_t id = solver_->track(fact, std::move(name));
    dependenceOfId_.push_back(kNone);
    endsOfId_.emplace_back(u, kNone);
    return id;
  }

  // The facts are difference constraints; their graph has one vertex per inserted node, one for
  // the constants, and one edge per fact. A set of facts whose edges form one simple cycle is a
  // minimal core when unsat: any proper subset forms a forest, and difference constraints over
  // a forest are satisfiable. Z3's conflict in difference logic is such a cycle as a rule.
  bool formsOneCycle(const std::vector<std::size_t>& ids) const {
    std::map<std::size_t, std::vector<std::size_t>> adjacent;  // vertex -> the facts at it
    for (std::size_t i = 0; i < ids.size(); ++i) {
      const auto [a, b] = endsOfId_[ids[i]];
      adjacent[a].push_back(i);
      adjacent[b].push_back(i);
    }
    for (const auto& [vertex, facts] : adjacent)
      if (facts.size() != 2) return false;
    // Every vertex has degree 2: a union of cycles; one cycle when a walk visits every fact.
    std::vector<bool> seen(ids.size(), false);
    std::size_t fact = 0, vertex = endsOfId_[ids[0]].first, visited = 0;
    while (!seen[fact]) {
      seen[fact] = true;
      ++visited;
      const auto [a, b] = endsOfId_[ids[fact]];
      vertex = vertex == a ? b : a;
      const std::vector<std::size_t>& at = adjacent[vertex];
      fact = at[0] == fact ? at[1] : at[0];
    }
    return visited == ids.size();
  }

  // A query whose unsat core is minimal (no proper subset is a core): Z3's core when it forms
  // one cycle, else minimised by deletion (each fact dropped in turn, the core of the next unsat
  // answer kept), every step a query of its own. Unknown if any step is.
  QueryResult checkMinimalCore(const std::vector<std::size_t>& enabled, std::string_view what) {
    QueryResult r = solver_->check(enabled, what);
    account(r);
    if (!r.unsat() || r.core.empty() || formsOneCycle(r.core)) return r;
    std::vector<std::size_t> core = r.core;
    for (std::size_t i = 0; i < core.size();) {
      std::vector<std::size_t> without = core;
      without.erase(without.begin() + static_cast<std::ptrdiff_t>(i));
      QueryResult m = solver_->check(without, what);
      account(m);
      if (m.unknown()) return m;
      if (m.sat()) ++i;  // core[i] is needed
      else core = m.core;  // a subset of `without` that keeps core[0..i): each is needed, and they
                           // stay its smallest ids
    }
    r.core = std::move(core);
    return r;
  }
  // The dependences in a core of the open scope.
  std::vector<std::size_t> dependencesOf(const std::vector<std::size_t>& core) const {
    std::vector<std::size_t> deps;
    for (std::size_t id : core)
      if (id < dependenceOfId_.size() && dependenceOfId_[id] != kNone) deps.push_back(dependenceOfId_[id]);
    std::sort(deps.begin(), deps.end());
    return deps;
  }

  // Where the placement put inserted node u, as a tracked fact.
  std::size_t trackPlacement(std::size_t u) {
    const InsertedNode& n = report_.inserted[u];
    const std::int64_t at = spacing_ * (n.anchor + 1) + n.rank;
    const std::string where = n.anchor < 0 ? "first" : "right after " + words_->node(static_cast<NodeId>(n.anchor));
    return trackOther(u, pos_[u] == context_->int_val(at), "placed " + words_->insertedLabel(u) + " " + where);
  }

  void account(const QueryResult& r) {
    report_.seconds += r.seconds;
    report_.rlimitUsed += r.rlimitUsed;
  }

  void satisfied() {
    const std::size_t deps = report_.dependences.size();
    std::vector<std::size_t> enabled;
    enabled.reserve(deps + report_.inserted.size());
    for (std::size_t i = 0; i < deps; ++i) enabled.push_back(track(i));
    for (std::size_t u = 0; u < report_.inserted.size(); ++u) enabled.push_back(trackPlacement(u));
    bool anyLive = false;
    while (true) {
      QueryResult r = checkMinimalCore(enabled, "do the placed positions satisfy every dependence?");
      if (r.unknown()) return unknown("satisfaction query: " + r.reason);
      if (r.sat()) break;
      const std::vector<std::size_t> violated = dependencesOf(r.core);
      if (violated.empty()) return unknown("the placed positions contradict each other (no dependence in the core)");
      for (std::size_t dep : violated) {
        const Dependence& d = report_.dependences[dep];
        anyLive = anyLive || d.live;
        if (report_.violations.size() < options_.maxViolations)
          report_.violations.push_back({dep, words_->violation(d, effectsOf(d)), d.live});
        else
          report_.moreViolations = true;
        enabled.erase(std::find(enabled.begin(), enabled.end(), idOfDependence_[dep]));
      }
      if (anyLive && report_.moreViolations) break;
    }
    std::stable_sort(report_.violations.begin(), report_.violations.end(),
                     [](const Violation& a, const Violation& b) { return a.live > b.live; });
    report_.satisfied = report_.liveViolations() == 0 && !report_.moreViolations;
  }

  // ---- minimality ----

  // The inserted nodes that must precede u (transitively), u included.
  std::vector<bool> windowOf(std::size_t u, const std::vector<std::vector<std::size_t>>& preds) const {
    std::vector<bool> in(report_.inserted.size(), false);
    std::vector<std::size_t> stack = {u};
    in[u] = true;
    while (!stack.empty()) {
      const std::size_t v = stack.back();
      stack.pop_back();
      for (std::size_t p : preds[v])
        if (!in[p]) {
          in[p] = true;
          stack.push_back(p);
        }
    }
    return in;
  }

  void minimality() {
    const std::size_t k = report_.inserted.size();
    std::vector<std::vector<std::size_t>> preds(k), depsOf(k);
    for (std::size_t i = 0; i < report_.dependences.size(); ++i) {
      const Dependence& d = report_.dependences[i];
      depsOf[d.inserted].push_back(i);
      if (!d.other) continue;
      depsOf[*d.other].push_back(i);
      if (d.before) preds[*d.other].push_back(d.inserted);
      else preds[d.inserted].push_back(*d.other);
    }
    std::map<std::string, const CopyExplanation*, std::less<>> coreByName;
    for (const CopyExplanation& e : placed_.copies) coreByName.emplace(e.copyNode, &e);
    bool all = true;
    for (std::size_t u = 0; u < k; ++u) {
      InsertedVerdict v;
      v.inserted = u;
      if (auto it = coreByName.find(report_.inserted[u].name); it != coreByName.end()) v.coreExplanation = *it->second;
      if (!minimalityOf(u, preds, depsOf, v)) return;
      all = all && (v.minimal.value_or(false) || report_.inserted[u].noOp);
      if (v.agreesWithCore == false) ++report_.disagreements;
      report_.verdicts.push_back(std::move(v));
    }
    report_.minimal = all;
  }

  // The dependences of the window: both ends inside it.
  std::vector<std::size_t> windowDependences(const std::vector<bool>& in,
                                             const std::vector<std::vector<std::size_t>>& depsOf) const {
    std::vector<std::size_t> ids;
    for (std::size_t w = 0; w < in.size(); ++w) {
      if (!in[w]) continue;
      for (std::size_t id : depsOf[w]) {
        const Dependence& d = report_.dependences[id];
        if (d.inserted != w) continue;  // listed once, under its own inserted node
        if (d.other && !in[*d.other]) continue;
        ids.push_back(id);
      }
    }
    return ids;
  }

  // In the open scope: can u go before original node `node`, with the dependences `window`?
  bool feasibleBefore(std::size_t u, std::int64_t node, const std::vector<std::size_t>& window, QueryResult* out) {
    std::vector<std::size_t> enabled;
    enabled.reserve(window.size() + 1);
    for (std::size_t dep : window) enabled.push_back(track(dep));
    enabled.push_back(trackOther(u, pos_[u] < context_->int_val(originalPosition(static_cast<NodeId>(node))),
                                 "query " + words_->insertedLabel(u) + " before " + words_->node(static_cast<NodeId>(node))));
    QueryResult r = checkMinimalCore(enabled, "can " + words_->insertedLabel(u) + " go before " +
                                                  words_->node(static_cast<NodeId>(node)) + "?");
    const bool sat = r.sat();
    if (out) *out = std::move(r);
    return sat;
  }

  bool minimalityOf(std::size_t u, const std::vector<std::vector<std::size_t>>& preds,
                    const std::vector<std::vector<std::size_t>>& depsOf, InsertedVerdict& v) {
    const InsertedNode& n = report_.inserted[u];
    if (n.noOp) {
      v.explanation = "a no-op: " + words_->node(n.value) + " is " + words_->node(n.target) +
                      "'s whole storage, so the copy changes nothing wherever it goes (minimality not asked)";
      return true;
    }
    if (n.anchor < 0) {  // nothing to go before
      v.minimal = true;
      v.explanation = "first in the program";
      return true;
    }
    const std::vector<bool> in = windowOf(u, preds);
    const std::vector<std::size_t> window = windowDependences(in, depsOf);
    QueryResult r;
    feasibleBefore(u, n.anchor, window, &r);
    if (r.unknown()) {
      unknown("minimality query of " + words_->insertedLabel(u) + ": " + r.reason);
      return false;
    }
    if (r.unsat()) {
      v.minimal = true;
      v.core = dependencesOf(r.core);
      explain(u, v);
    } else {
      v.minimal = false;
      // Binary search for the earliest original node it may precede (feasibility is monotone).
      std::int64_t lo = 0, hi = n.anchor;  // feasible(hi)
      while (lo < hi) {
        const std::int64_t mid = lo + (hi - lo) / 2;
        QueryResult m;
        const bool ok = feasibleBefore(u, mid, window, &m);
        if (m.unknown()) {
          unknown("minimality query of " + words_->insertedLabel(u) + ": " + m.reason);
          return false;
        }
        if (ok) hi = mid;
        else lo = mid + 1;
      }
      v.earliestAfterNode = lo - 1;
      v.earliestAfter = lo == 0 ? std::string("the start") : words_->node(static_cast<NodeId>(lo - 1));
      v.explanation = "could go right after " + v.earliestAfter + " (before " +
                      words_->node(static_cast<NodeId>(lo)) + "), earlier than right after " +
                      words_->node(static_cast<NodeId>(n.anchor));
    }
    // Core's explanation claims minimality only for `early`; the models explain their own rules.
    if (v.coreExplanation && report_.minimalityRequired) compareWithCore(u, window, v);
    return true;
  }

  // Does dependence d order u after the other end?
  static bool bindsAfter(const Dependence& d, std::size_t u) {
    if (d.inserted == u) return !d.before;
    return d.other && *d.other == u && d.before;
  }

  void explain(std::size_t u, InsertedVerdict& v) {
    // The dependence of the core that binds u itself (the latest of them if several).
    std::optional<std::size_t> best;
    std::int64_t bestAt = -1;
    for (std::size_t id : v.core) {
      const Dependence& d = report_.dependences[id];
      if (!bindsAfter(d, u)) continue;
      std::int64_t at = d.other || d.inserted != u
                            ? static_cast<std::int64_t>(report_.inserted[d.inserted == u ? *d.other : d.inserted].placedIndex)
                            : static_cast<std::int64_t>(placedOf_[d.node]);
      if (!best || at > bestAt) {
        best = id;
        bestAt = at;
      }
    }
    if (!best) {
      v.explanation = "(the core names no dependence of this node)";
      return;
    }
    const Dependence& d = report_.dependences[*best];
    v.explanation = words_->explanation(d, u, effectsOf(d), v.rule, v.bindingNode);
  }

  // Core's reason for u's position is one of the proof's dependences, and it forces u after its
  // anchor together with the constraints of the nodes that must precede u.
  void compareWithCore(std::size_t u, const std::vector<std::size_t>& window, InsertedVerdict& v) {
    const CopyExplanation& e = *v.coreExplanation;
    const InsertedNode& n = report_.inserted[u];
    std::vector<std::size_t> claimed, rest;
    for (std::size_t id : window) {
      const Dependence& d = report_.dependences[id];
      const bool direct = d.inserted == u || (d.other && *d.other == u);
      if (!direct) {
        rest.push_back(id);
        continue;
      }
      if (!bindsAfter(d, u)) continue;
      std::string otherName;
      if (d.other || d.inserted != u) otherName = report_.inserted[d.inserted == u ? *d.other : d.inserted].name;
      else otherName = program_.graph.nodes[d.node].name;
      if (otherName != e.bindingNode) continue;
      const std::string_view k = toString(d.kind);
      bool kindMatches = false;
      switch (e.rule) {
        case CopyRule::R0:
        case CopyRule::R1:
        case CopyRule::R3: kindMatches = k == toString(e.rule); break;
        case CopyRule::R2:  // or after a clone reading the target
          kindMatches = k == toString(e.rule) || d.kind == DepKind::BeforeOverwrite;
          break;
        case CopyRule::CopyOrder: kindMatches = d.kind == DepKind::BeforeOverwrite || d.kind == DepKind::TargetOrder; break;
        case CopyRule::Clone: kindMatches = d.kind == DepKind::AfterValue; break;
        case CopyRule::End: break;
      }
      if (kindMatches) claimed.push_back(id);
    }
    if (claimed.empty()) {
      v.agreesWithCore = false;
      v.disagreement = "core explains " + words_->insertedLabel(u) + " by " + std::string(toString(e.rule)) + " after %" + e.bindingNode +
                       " (\"" + e.text + "\"), but the storage semantics gives no such dependence";
      return;
    }
    // The minimality core already shows it when core's reason holds every dependence of u the
    // core needs (the core with the rest of the window is then a subset of this query).
    if (v.minimal == true) {
      bool covered = true;
      for (std::size_t dep : v.core) {
        const Dependence& d = report_.dependences[dep];
        const bool direct = d.inserted == u || (d.other && *d.other == u);
        if (direct && std::find(claimed.begin(), claimed.end(), dep) == claimed.end()) covered = false;
      }
      if (covered) {
        v.agreesWithCore = true;
        return;
      }
    }
    std::vector<std::size_t> enabled;
    for (std::size_t dep : rest) enabled.push_back(track(dep));
    for (std::size_t dep : claimed) enabled.push_back(track(dep));
    enabled.push_back(trackOther(u, pos_[u] < context_->int_val(originalPosition(static_cast<NodeId>(n.anchor))),
                                 "query " + words_->insertedLabel(u) + " before its anchor, by core's reason"));
    QueryResult r = solver_->check(enabled, "does core's reason for " + words_->insertedLabel(u) + " force its position?");
    account(r);
    if (r.unknown()) {
      unknown("comparison with core's explanation: " + r.reason);
      return;
    }
    v.agreesWithCore = r.unsat();
    if (!r.unsat())
      v.disagreement = "core explains " + words_->insertedLabel(u) + " by " + std::string(toString(e.rule)) + " after %" + e.bindingNode +
                       " (\"" + e.text + "\"), but that does not keep it from going earlier";
  }
};

}  // namespace

struct OrderingProver::State {
  OrderingOptions options;
  z3::context context;
  Solver solver;
  explicit State(OrderingOptions o) : options(std::move(o)), solver(context, withLogic(options.smt), "ordering") {}
  static SmtOptions withLogic(SmtOptions smt) {
    smt.logic = "QF_IDL";  // every dependence and query is a difference constraint
    smt.minimizeCores = false;  // the proof shows its cores minimal (checkMinimalCore)
    smt.models = false;         // it reads no model
    return smt;
  }
};

OrderingProver::OrderingProver(OrderingOptions options) : state_(std::make_unique<State>(std::move(options))) {}
OrderingProver::~OrderingProver() = default;
OrderingProver::OrderingProver(OrderingProver&&) noexcept = default;
OrderingProver& OrderingProver::operator=(OrderingProver&&) noexcept = default;

OrderingReport OrderingProver::prove(const Program& program, const PlacedProgram& placed, const SchemaTable& schemas,
                                     bool requireMinimal) {
  return Prover(program, placed, schemas, requireMinimal, state_->options, state_->context, state_->solver).run();
}

OrderingReport OrderingProver::prove(const Program& program, Placement placement, const SchemaTable& schemas) {
  const PlacedProgram placed = place(program, placement, schemas);
  return prove(program, placed, schemas, placement == Placement::Early);
}

OrderingReport proveOrdering(const Program& program, const PlacedProgram& placed, const SchemaTable& schemas,
                             bool requireMinimal, const OrderingOptions& options) {
  return OrderingProver(options).prove(program, placed, schemas, requireMinimal);
}

OrderingReport proveOrdering(const Program& program, Placement placement, const SchemaTable& schemas,
                             const OrderingOptions& options) {
  return OrderingProver(options).prove(program, placement, schemas);
}

std::string formatOrderingReport(const OrderingReport& r, std::string_view placementName) {
  std::ostringstream s;
  s << "ordering proof of placement " << placementName << ": " << r.inserted.size() << " inserted node(s), "
    << r.dependences.size() << " dependences (both view modes), " << r.queries << " queries\n";
  for (const StructuralFault& f : r.faults) s << "FAULT (" << toString(f.kind) << "): " << f.text << "\n";
  if (r.satisfied) {
    s << "satisfied: " << (*r.satisfied ? "yes (every dependence holds at the placed positions)" : "no") << "\n";
    for (const Violation& v : r.violations)
      s << (v.live ? "  VIOLATED: " : "  violated, unobservable: ") << v.text << "\n";
    if (r.moreViolations) s << "  (more violations not listed)\n";
  }
  if (r.minimal) {
    s << "minimal: " << (*r.minimal ? "yes (no inserted node can go before the node it follows)" : "no")
      << (r.minimalityRequired ? "" : " (not required of this placement)") << "\n";
    for (const InsertedVerdict& v : r.verdicts) {
      const InsertedNode& n = r.inserted[v.inserted];
      s << "  %" << n.name << " = " << n.text << " at " << n.placedIndex << (v.minimal == true ? "" : " NOT MINIMAL")
        << ": " << v.explanation;
      if (!v.rule.empty()) s << "  [" << v.rule << "]";
      s << "\n";
      if (v.agreesWithCore == false) s << "    DISAGREES with core: " << v.disagreement << "\n";
    }
  }
  s << "verdict: " << toString(r.verdict);
  if (!r.reason.empty()) s << " (" << r.reason << ")";
  s << "\n";
  return s.str();
}

}  // namespace wb::proofs
