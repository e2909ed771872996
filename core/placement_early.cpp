// core/placement_early.cpp: the `early` placement (DESIGN §6), our default.
//
// Each copy c = copy_(B, V) gets a lower bound from the graph (rules R0-R3, from the per-root
// last readers and writers the alias analysis precomputes: no walk per copy), then copies are
// ordered among themselves: a copy reading a root that another copy writes goes first (C), and
// copies of one target keep output order. A cycle of such reads gets a clone of one value,
// taken where that value is final. Every copy then sits right after the latest thing it must
// follow, which is the earliest position the analysis allows; the result equals the parallel
// assignment S_par because nothing after a copy touches its buffer or changes its value.
#include <algorithm>
#include <initializer_list>
#include <limits>
#include <optional>
#include <queue>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include "core/placement.h"
#include "core/rewrite.h"

namespace wb {

namespace {

using Copy = EarlyPlan::Copy;

// Ties between graph rules at one node are reported in this order (the most telling first).
enum GraphRule : int { kR1 = 0, kR2 = 1, kR3 = 2, kR0 = 3 };

struct GraphBound {
  std::size_t anchor = 0;
  bool exists = false;
  int rule = kR0;
  NodeId via = kNoNode;
  RootId root = kNoNode;
  bool writes = false;
  // Takes the candidate if it is later, or as late with a more telling rule.
  void offer(std::size_t node, int r, NodeId v = kNoNode, RootId rt = kNoNode, bool w = false) {
    if (exists && (node < anchor || (node == anchor && r >= rule))) return;
    *this = GraphBound{node, true, r, v, rt, w};
  }
};

constexpr CopyRule kGraphRules[] = {CopyRule::R1, CopyRule::R2, CopyRule::R3, CopyRule::R0};  // by GraphRule

enum class EdgeKind : std::uint8_t { Reads, SameTarget, CloneReads, CloneValue };
struct Edge {
  std::uint32_t to = 0;
  EdgeKind kind = EdgeKind::Reads;
  RootId root = kNoNode;  // the root the source reads (Reads, CloneReads) or both write
};

// Strongly connected components (iterative Tarjan): comp[v] for every vertex.
std::vector<std::uint32_t> components(const std::vector<std::vector<Edge>>& edges,
                                      const std::vector<bool>& dropReads, std::uint32_t& count) {
  const std::uint32_t n = static_cast<std::uint32_t>(edges.size());
  constexpr std::uint32_t kUnvisited = std::numeric_limits<std::uint32_t>::max();
  std::vector<std::uint32_t> index(n, kUnvisited), low(n, 0), comp(n, kUnvisited), stack;
  std::vector<bool> onStack(n, false);
  std::vector<std::pair<std::uint32_t, std::uint32_t>> frames;  // (vertex, next edge)
  std::uint32_t next = 0;
  count = 0;
  auto live = [&](std::uint32_t v, const Edge& e) { return !(e.kind == EdgeKind::Reads && dropReads[v]); };
  for (std::uint32_t s = 0; s < n; ++s) {
    if (index[s] != kUnvisited) continue;
    frames.push_back({s, 0});
    index[s] = low[s] = next++;
    stack.push_back(s);
    onStack[s] = true;
    while (!frames.empty()) {
      auto& [v, e] = frames.back();
      if (e < edges[v].size()) {
        const Edge& edge = edges[v][e++];
        if (!live(v, edge)) continue;
        const std::uint32_t w = edge.to;
        if (index[w] == kUnvisited) {
          index[w] = low[w] = next++;
          stack.push_back(w);
          onStack[w] = true;
          frames.push_back({w, 0});
        } else if (onStack[w]) {
          low[v] = std::min(low[v], index[w]);
        }
        continue;
      }
      const std::uint32_t done = v;
      frames.pop_back();
      if (!frames.empty()) low[frames.back().first] = std::min(low[frames.back().first], low[done]);
      if (low[done] == index[done]) {
        std::uint32_t w;
        do {
          w = stack.back();
          stack.pop_back();
          onStack[w] = false;
          comp[w] = count;
        } while (w != done);
        ++count;
      }
    }
  }
  return comp;
}

// The copies' order among themselves, as a graph over items: copies 0..k-1 (in output-spec
// order), then one clone per cloned copy.
struct CopyGraph {
  std::uint32_t copies = 0;                           // k
  std::vector<std::vector<Edge>> edges;               // per item
  std::vector<std::vector<std::uint32_t>> writersOf;  // per placeholder root: the copies writing it
  bool anyReads = false;                              // some copy reads another's target
  std::vector<std::uint32_t> cloneOf;                 // clone item - k -> its copy
};

// Phase 2, copy edges: j -> i when copy j reads a root copy i writes (j must go first), and
// copies of one target in output order.
CopyGraph copyEdges(const std::vector<WriteBack>& wbs, const AliasInfo& aliases, std::size_t placeholders) {
  CopyGraph g;
  g.copies = static_cast<std::uint32_t>(wbs.size());
  // Targets are placeholders, so the roots they write are < #placeholders.
  g.writersOf.resize(placeholders);
  for (std::uint32_t i = 0; i < g.copies; ++i) g.writersOf[wbs[i].buffer].push_back(i);
  g.edges.resize(g.copies);
  for (std::uint32_t j = 0; j < g.copies; ++j) {
    for (RootId r : aliases.rootsOf(wbs[j].value)) {
      if (r >= placeholders) break;  // sorted: no later root is a target
      for (std::uint32_t i : g.writersOf[r])
        if (i != j) {
          g.edges[j].push_back({i, EdgeKind::Reads, r});
          g.anyReads = true;
        }
    }
  }
  for (const std::vector<std::uint32_t>& same : g.writersOf)
    for (std::size_t t = 1; t < same.size(); ++t)
      g.edges[same[t - 1]].push_back({same[t], EdgeKind::SameTarget, wbs[same[t]].buffer});
  return g;
}

// Phase 3, break cycles: clone the value of one copy per cyclic component (the first in output
// order that reads another copy's target inside it), then look again, until none is left.
// Returns which copies read a clone.
std::vector<bool> copiesToClone(const CopyGraph& g) {
  const std::uint32_t k = g.copies;
  std::vector<bool> cloned(k, false);
  while (g.anyReads) {
    std::uint32_t count = 0;
    std::vector<std::uint32_t> comp = components(g.edges, cloned, count);
    std::vector<std::uint32_t> size(count, 0);
    for (std::uint32_t v = 0; v < k; ++v) ++size[comp[v]];
    std::vector<bool> handled(count, false);
    bool changed = false;
    for (std::uint32_t j = 0; j < k; ++j) {
      if (cloned[j] || size[comp[j]] < 2 || handled[comp[j]]) continue;
      bool inCycle = false;
      for (const Edge& e : g.edges[j]) inCycle |= e.kind == EdgeKind::Reads && comp[e.to] == comp[j];
      if (!inCycle) continue;
      cloned[j] = true;
      handled[comp[j]] = true;
      changed = true;
    }
    if (!changed) break;
  }
  return cloned;
}

// Adds one clone item per cloned copy. The clone reads the value's roots: it goes before every
// copy writing one of them, and the copy reads the clone instead of the value, so the copy's
// own read edges go.
void addClones(CopyGraph& g, const std::vector<WriteBack>& wbs, const AliasInfo& aliases,
               const std::vector<bool>& cloned) {
  const std::size_t placeholders = g.writersOf.size();
  for (std::uint32_t j = 0; j < g.copies; ++j) {
    if (!cloned[j]) continue;
    const std::uint32_t t = g.copies + static_cast<std::uint32_t>(g.cloneOf.size());
    g.cloneOf.push_back(j);
    g.edges.push_back({});
    for (RootId r : aliases.rootsOf(wbs[j].value)) {
      if (r >= placeholders) break;
      for (std::uint32_t i : g.writersOf[r]) g.edges[t].push_back({i, EdgeKind::CloneReads, r});
    }
    g.edges[t].push_back({j, EdgeKind::CloneValue, kNoNode});
  }
  for (std::uint32_t j = 0; j < g.copies; ++j)
    if (cloned[j])
      g.edges[j].erase(std::remove_if(g.edges[j].begin(), g.edges[j].end(),
                                      [](const Edge& e) { return e.kind == EdgeKind::Reads; }),
                       g.edges[j].end());
}

// Everything the placement computes per item, in one record (most programs have a copy or two:
// one allocation rather than one per field).
struct Pred {
  bool exists = false;
  std::size_t anchor = 0;
  std::uint32_t rank = 0;
  std::uint32_t from = 0;
  Edge edge;
};
struct Item {
  GraphBound bound;        // from the graph rules
  Pred pred;               // the latest predecessor among the items
  std::size_t anchor = 0;  // the node the item goes right after
  std::uint32_t rank = 0;  // orders the items at one anchor
  std::uint32_t indegree = 0;
  std::size_t finalIndex = 0;  // in plan.copies or plan.clones
};

// Phase 4, graph bounds (R0-R3). A clone of V goes where V is final (R0, R1, R3 of V); a cloned
// copy keeps R0 and R2 (its value is the clone).
void boundByGraph(std::vector<Item>& items, const CopyGraph& g, const std::vector<WriteBack>& wbs,
                  const std::vector<bool>& cloned, const AliasInfo& aliases,
                  std::optional<std::size_t> lastPlaceholder) {
  const std::uint32_t k = g.copies;
  for (std::uint32_t u = 0; u < items.size(); ++u) {
    const bool isClone = u >= k;
    const WriteBack& w = wbs[isClone ? g.cloneOf[u - k] : u];
    GraphBound& b = items[u].bound;
    if (lastPlaceholder) b.offer(*lastPlaceholder, kR0);
    if (isClone || !cloned[u]) {
      b.offer(w.value, kR1);
      for (RootId r : aliases.rootsOf(w.value))
        if (LastAccess a = aliases.lastWriter(r); a.exists()) b.offer(a.node, kR3, a.via, r, true);
    }
    if (!isClone) {
      for (RootId r : aliases.rootsOf(w.buffer)) {
        LastAccess read = aliases.lastReader(r), write = aliases.lastWriter(r);
        if (write.exists() && (!read.exists() || write.node >= read.node))
          b.offer(write.node, kR2, write.via, r, true);
        else if (read.exists())
          b.offer(read.node, kR2, read.via, r, false);
      }
    }
  }
}

// Phase 5, order (Kahn's algorithm, clones first, then copies in output order): each item's
// anchor is the latest of its graph bound and its predecessors' anchors; the rank orders items
// at one anchor consistently with every edge. Every cycle has a read edge and every cyclic
// component lost one (phase 3), so every item is ranked.
void orderItems(std::vector<Item>& items, const CopyGraph& g) {
  const std::uint32_t k = g.copies;
  const std::uint32_t n = static_cast<std::uint32_t>(items.size());
  for (const auto& out : g.edges)
    for (const Edge& e : out) ++items[e.to].indegree;
  auto priority = [&](std::uint32_t u) { return u >= k ? u - k : u + n; };  // clones first
  using Ready = std::pair<std::uint32_t, std::uint32_t>;                   // (priority, item)
  std::vector<Ready> readyStorage;
  readyStorage.reserve(n);  // every item is queued once: no regrowth
  std::priority_queue<Ready, std::vector<Ready>, std::greater<>> ready(std::greater<>{}, std::move(readyStorage));
  for (std::uint32_t u = 0; u < n; ++u)
    if (items[u].indegree == 0) ready.push({priority(u), u});
  std::uint32_t nextRank = 0;
  while (!ready.empty()) {
    const std::uint32_t u = ready.top().second;
    ready.pop();
    Item& at = items[u];
    at.rank = nextRank++;
    at.anchor = at.bound.anchor;
    if (at.pred.exists && at.pred.anchor >= at.anchor) at.anchor = at.pred.anchor;
    for (const Edge& e : g.edges[u]) {
      Pred& p = items[e.to].pred;
      if (!p.exists || std::tie(at.anchor, at.rank) > std::tie(p.anchor, p.rank)) p = Pred{true, at.anchor, at.rank, u, e};
      if (--items[e.to].indegree == 0) ready.push({priority(e.to), e.to});
    }
  }
}

// Phase 6, emit: the plan's clones and copies in final graph order, each copy with what binds it.
void emitPlan(EarlyPlan& plan, std::vector<Item>& items, const CopyGraph& g, const std::vector<WriteBack>& wbs) {
  const std::uint32_t k = g.copies;
  const std::uint32_t n = static_cast<std::uint32_t>(items.size());
  plan.copies.reserve(k);
  plan.clones.reserve(n - k);
  std::vector<std::uint32_t> order(n);
  for (std::uint32_t u = 0; u < n; ++u) order[u] = u;
  std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    return std::tie(items[a].anchor, items[a].rank) < std::tie(items[b].anchor, items[b].rank);
  });
  for (std::uint32_t u : order) {
    if (u >= k) {
      items[u].finalIndex = plan.clones.size();
      plan.clones.push_back({wbs[g.cloneOf[u - k]].outputIndex, wbs[g.cloneOf[u - k]].value, items[u].anchor});
    } else {
      items[u].finalIndex = plan.copies.size();
      plan.copies.emplace_back();
    }
  }
  for (std::uint32_t t = k; t < n; ++t) plan.copies[items[g.cloneOf[t - k]].finalIndex].clone = items[t].finalIndex;
  for (std::uint32_t u = 0; u < k; ++u) {
    Copy& c = plan.copies[items[u].finalIndex];
    c.writeBack = wbs[u];
    c.afterNode = items[u].anchor;
    const GraphBound& bound = items[u].bound;
    if (items[u].pred.exists && items[u].pred.anchor >= bound.anchor) {
      const Pred& p = items[u].pred;
      const bool fromClone = p.from >= k;
      c.bindingKind = fromClone ? Copy::Binding::Clone : Copy::Binding::Copy;
      c.binding = items[p.from].finalIndex;
      c.root = p.edge.root;
      switch (p.edge.kind) {
        case EdgeKind::Reads:
          c.rule = CopyRule::CopyOrder;
          c.via = wbs[p.from].value;
          break;
        case EdgeKind::SameTarget:
          c.rule = CopyRule::CopyOrder;
          c.bindingWrites = true;
          break;
        case EdgeKind::CloneReads:
          c.rule = CopyRule::R2;
          c.via = wbs[g.cloneOf[p.from - k]].value;
          break;
        case EdgeKind::CloneValue: c.rule = CopyRule::Clone; break;
      }
    } else {
      c.rule = kGraphRules[bound.rule];
      c.bindingKind = Copy::Binding::Node;
      c.binding = bound.anchor;
      c.via = bound.via;
      c.root = bound.root;
      c.bindingWrites = bound.writes;
    }
  }
}

}  // namespace

// The phases as LLVM's ADCE driver reads: select the write-backs, order the copies among
// themselves, break their cycles with clones, bound each by the graph, order, emit.
EarlyPlan planEarly(const Program& program, const AliasInfo& aliases) {
  EarlyPlan plan;
  WriteBackSelection selection = selectWriteBacks(program, aliases);  // phase 1
  plan.skipped = std::move(selection.skipped);
  const std::vector<WriteBack>& wbs = selection.writeBacks;
  if (wbs.empty()) return plan;

  // R0: placeholders are first, so the last one is the end of that prefix.
  std::optional<std::size_t> lastPlaceholder;
  for (std::size_t i = 0; i < program.graph.nodes.size() && program.graph.nodes[i].isPlaceholder(); ++i)
    lastPlaceholder = i;
  const std::size_t placeholders = lastPlaceholder ? *lastPlaceholder + 1 : 0;

  CopyGraph graph = copyEdges(wbs, aliases, placeholders);
  const std::vector<bool> cloned = copiesToClone(graph);
  addClones(graph, wbs, aliases, cloned);
  std::vector<Item> items(graph.edges.size());
  boundByGraph(items, graph, wbs, cloned, aliases, lastPlaceholder);
  orderItems(items, graph);
  emitPlan(plan, items, graph, wbs);
  return plan;
}

namespace {

// The names of the input nodes a plan's explanations mention, taken before the rewrite (which
// may move the nodes away): buffers, values, binding nodes, vias and roots.
class PlanNames {
 public:
  PlanNames(const Graph& graph, const EarlyPlan& plan) {
    std::vector<NodeId> ids;
    ids.reserve(plan.copies.size() * 5);
    for (const Copy& c : plan.copies) {
      ids.push_back(c.writeBack.buffer);
      ids.push_back(c.writeBack.value);
      if (c.bindingKind == Copy::Binding::Node) ids.push_back(static_cast<NodeId>(c.binding));
      if (c.via != kNoNode) ids.push_back(c.via);
      if (c.root != kNoNode) ids.push_back(c.root);
    }
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    ids_ = std::move(ids);
    names_.reserve(ids_.size());
    for (NodeId id : ids_) names_.push_back(graph.nodes[id].name);
  }
  const std::string& operator[](NodeId id) const {
    return names_[static_cast<std::size_t>(std::lower_bound(ids_.begin(), ids_.end(), id) - ids_.begin())];
  }

 private:
  std::vector<NodeId> ids_;
  std::vector<std::string> names_;
};

// The explanation of one planned copy, in words (DESIGN §6).
std::string explain(const PlanNames& names, const EarlyPlan::Copy& c, const std::string& bindingName,
                    const std::vector<std::string>& copyNames, const EarlyPlan& plan) {
  // Appended to one string: a placement may explain thousands of copies.
  std::string text;
  text.reserve(160);
  auto add = [&text](std::initializer_list<std::string_view> parts) {
    for (std::string_view part : parts) text += part;
  };
  auto through = [&](NodeId via, RootId root) {
    if (via != kNoNode && via != root) add({" through %", names[via]});
  };
  const std::string& buffer = names[c.writeBack.buffer];
  if (c.rule == CopyRule::CopyOrder) {  // bound by another copy
    const EarlyPlan::Copy& other = plan.copies[c.binding];
    add({"after %", copyNames[c.binding], " (copy_ of ", names[other.writeBack.buffer], ", C): "});
    if (c.bindingWrites) {
      add({"both write ", buffer, "; output order keeps the later write last"});
    } else {
      add({"that copy reads ", names[c.root]});
      through(c.via, c.root);
      add({", which this copy overwrites"});
    }
    return text;
  }
  add({"after %", bindingName, ": "});
  if (c.rule == CopyRule::R0) {
    add({"the last placeholder (copies never go among the placeholders)"});
  } else if (c.rule == CopyRule::R1) {
    add({"the value is defined here"});
  } else if (c.rule == CopyRule::R2) {
    add({c.bindingWrites ? "writes " : "reads ", names[c.root]});
    through(c.via, c.root);
    if (c.bindingKind == Copy::Binding::Clone) add({" (the clone that breaks a cycle of copies)"});
  } else if (c.rule == CopyRule::R3) {
    add({"writes %", names[c.root], "'s storage"});
    through(c.via, c.root);
    add({" (value of ", buffer, ")"});
  } else {  // CLONE
    add({"copies a clone of %", names[c.writeBack.value],
         " taken where it is final, because a cycle of copies would overwrite it first"});
  }
  return text;
}

// insertWriteBacks names copies in request (= graph) order. FX names them in creation order,
// which every other placement (and upstream's tests: `copy__default_1` is the copy of the
// second mutation output) follows: output-spec order. Reassign the same names that way, so a
// copy's name does not depend on where it was placed.
void nameCopiesInOutputOrder(RewriteResult& rewritten, const std::vector<CopyInsertion>& requests) {
  const std::size_t k = requests.size();
  // Requests already in output-spec order (graph order agrees with it, as in most programs):
  // the names are those, and nothing is built.
  if (std::is_sorted(requests.begin(), requests.end(),
                     [](const CopyInsertion& a, const CopyInsertion& b) { return a.outputIndex < b.outputIndex; }))
    return;
  std::vector<std::size_t> bySpec(k);
  for (std::size_t r = 0; r < k; ++r) bySpec[r] = r;
  std::sort(bySpec.begin(), bySpec.end(),
            [&](std::size_t a, std::size_t b) { return requests[a].outputIndex < requests[b].outputIndex; });
  std::vector<std::string> renamed(k);
  for (std::size_t rank = 0; rank < k; ++rank) renamed[bySpec[rank]] = rewritten.copyNames[rank];
  if (renamed == rewritten.copyNames) return;
  Program& p = rewritten.program;
  for (std::size_t r = 0; r < k; ++r) p.graph.nodes[rewritten.copyPositions[r]].name = renamed[r];
  // The output tuple refers to the copies by index; the specs name them.
  for (std::size_t r = 0; r < k; ++r) p.signature.outputs.at(requests[r].outputIndex).name = renamed[r];
  rewritten.copyNames = std::move(renamed);
}

// placeEarly for both overloads of place(): `kConsume` moves the input's nodes into the result
// (the caller passed an rvalue); otherwise each node is copied exactly once. See PlaceOptions
// for `options`.
template <bool kConsume>
PlacedProgram placeEarlyImpl(std::conditional_t<kConsume, Program&, const Program&> program,
                             const SchemaTable& schemas, const PlaceOptions& options) {
  auto take = [](auto& field) -> decltype(auto) {
    if constexpr (kConsume) return std::move(field); else return field;
  };
  const AliasInfo aliases = analyzeAliases(program, schemas);
  EarlyPlan plan = planEarly(program, aliases);
  PlacedProgram placed;
  placed.skipped = std::move(plan.skipped);
  if (plan.copies.empty()) {
    if (options.keepInput) placed.keptInput = true;
    else placed.program = take(program);
    return placed;
  }
  std::optional<PlanNames> names;  // for the explanations only (before the input is taken apart)
  if (options.explain) names.emplace(program.graph, plan);

  // Stage the clones: `clone = aten::clone(V)` right after its anchor, and the output that
  // returned V returns the clone, so the copy inserted for it reads the clone. Clones are in
  // graph order, so their anchors ascend. Clone c is node n + c in the numbering of the edit,
  // which renumberReferences maps to the staged layout.
  auto& graph = program.graph;
  const std::size_t n = graph.nodes.size();
  std::vector<std::string> cloneNames;
  std::vector<std::size_t> cloneAnchors;
  Program staged;
  if (!plan.clones.empty()) {
    // Fresh names "clone", "clone_1", ...: each clone takes the first candidate unused by the
    // input after the previous clone's (the ones before are taken).
    auto nodeName = [&](std::uint32_t id) { return std::string_view(graph.nodes[id].name); };
    FlatNameIndex<decltype(nodeName)> used(nodeName, n);
    for (std::size_t i = 0; i < n; ++i) used.insert(static_cast<std::uint32_t>(i));
    std::size_t suffix = 0;
    std::vector<Node> clones;
    std::vector<Arg> returned = graph.returnedValues();
    staged.signature = take(program.signature);
    for (const EarlyPlan::Clone& c : plan.clones) {
      std::string name;
      do {
        name = suffix == 0 ? std::string("clone") : "clone_" + std::to_string(suffix);
        ++suffix;
      } while (used.find(name) != used.kNone);
      const Node& value = graph.nodes[c.value];
      Node clone;
      clone.name = name;
      clone.op = NodeOp::CallFunction;
      clone.target = "aten::clone";
      clone.args = {Arg::ref(static_cast<NodeId>(c.value))};
      clone.typeText = value.typeText;
      returned[c.outputIndex] = Arg::ref(static_cast<NodeId>(n + clones.size()));
      clones.push_back(std::move(clone));
      staged.signature.outputs[c.outputIndex].name = name;
      cloneNames.push_back(std::move(name));
      cloneAnchors.push_back(c.afterNode);
    }
    staged.schemas = take(program.schemas);
    staged.submodules = take(program.submodules);
    staged.rangeConstraints = take(program.rangeConstraints);
    staged.signatureInferred = program.signatureInferred;
    staged.graph.nodes.reserve(n + clones.size());
    std::vector<NodeId> oldToNew(n + clones.size(), kNoNode);
    std::size_t next = 0;
    for (std::size_t i = 0; i < n; ++i) {
      oldToNew[i] = static_cast<NodeId>(staged.graph.nodes.size());
      staged.graph.nodes.push_back(take(graph.nodes[i]));
      for (; next < clones.size() && cloneAnchors[next] == i; ++next) {
        oldToNew[n + next] = static_cast<NodeId>(staged.graph.nodes.size());
        staged.graph.nodes.push_back(std::move(clones[next]));
      }
    }
    staged.graph.nodes.back().args = {Arg::tuple(std::move(returned))};
    renumberReferences(staged.graph, oldToNew);
  }

  // Copies anchored at node a follow the clones anchored there.
  std::vector<CopyInsertion> requests;
  requests.reserve(plan.copies.size());
  for (const EarlyPlan::Copy& c : plan.copies) {
    const std::size_t clonesUpTo = static_cast<std::size_t>(
        std::upper_bound(cloneAnchors.begin(), cloneAnchors.end(), c.afterNode) - cloneAnchors.begin());
    requests.push_back({c.writeBack.outputIndex, c.afterNode + clonesUpTo});
  }
  RewriteResult rewritten = plan.clones.empty() ? insertWriteBacks(take(program), requests, OutputOrder::KeepPositions)
                                                : insertWriteBacks(std::move(staged), requests, OutputOrder::KeepPositions);
  nameCopiesInOutputOrder(rewritten, requests);

  if (options.explain) placed.copies.reserve(plan.copies.size());
  for (std::size_t r = 0; options.explain && r < plan.copies.size(); ++r) {
    const EarlyPlan::Copy& c = plan.copies[r];
    CopyExplanation e;
    e.copyNode = rewritten.copyNames[r];
    e.buffer = (*names)[c.writeBack.buffer];
    e.value = (*names)[c.writeBack.value];
    switch (c.bindingKind) {
      case Copy::Binding::Node: e.bindingNode = (*names)[static_cast<NodeId>(c.binding)]; break;
      case Copy::Binding::Copy: e.bindingNode = rewritten.copyNames[c.binding]; break;
      case Copy::Binding::Clone: e.bindingNode = cloneNames[c.binding]; break;
    }
    if (c.clone) e.value = cloneNames[*c.clone];
    e.rule = c.rule;
    e.text = explain(*names, c, e.bindingNode, rewritten.copyNames, plan);
    placed.copies.push_back(std::move(e));
  }
  placed.program = std::move(rewritten.program);
  return placed;
}

}  // namespace

PlacedProgram placeEarly(const Program& program, const SchemaTable& schemas) {
  return placeEarlyImpl<false>(program, schemas, {});
}

PlacedProgram placeEarly(Program&& program, const SchemaTable& schemas) {
  return placeEarlyImpl<true>(program, schemas, {});
}

PlacedProgram placeEarly(const Program& program, const SchemaTable& schemas, const PlaceOptions& options) {
  return placeEarlyImpl<false>(program, schemas, options);
}

}  // namespace wb
