// core/alias.cpp: alias and effect analysis (see alias.h for the rules).
#include "core/alias.h"

#include <algorithm>
#include <array>
#include <unordered_map>

namespace wb {

namespace {

// "aten::slice_copy.Tensor" -> {"aten", "slice_copy"}; names without "::" have no namespace.
struct QualifiedName {
  std::string_view ns;
  std::string_view name;
};

QualifiedName splitTarget(std::string_view target) {
  QualifiedName q;
  std::size_t colons = target.find("::");
  if (colons == std::string_view::npos) {
    q.name = target;
    return q;
  }
  q.ns = target.substr(0, colons);
  std::string_view rest = target.substr(colons + 2);
  q.name = rest.substr(0, rest.find('.'));
  return q;
}

// Two alias annotations share a set (a return's set against an argument's sets, `*` matching
// everything).
bool sharesAliasSet(const AliasAnnotation& ret, const AliasAnnotation& arg) {
  auto hit = [&](const std::string& set) {
    if (set == "*") return true;
    for (const std::string& a : arg.beforeSets)
      if (a == set || a == "*") return true;
    for (const std::string& a : arg.afterSets)
      if (a == set || a == "*") return true;
    return false;
  };
  for (const std::string& set : ret.beforeSets)
    if (hit(set)) return true;
  return false;
}

const AliasAnnotation* annotationOf(const SchemaType& type) {
  if (type.alias) return &*type.alias;
  if (type.containerAlias) return &*type.containerAlias;
  return nullptr;
}

bool hasWriteArgument(const Schema& schema) {
  for (const SchemaArgument& a : schema.arguments)
    if (a.type.isWrite()) return true;
  return false;
}

// Node name -> index: open addressing over one flat array (a node-based hash map spends most
// of the analysis in cache misses on large graphs). Each slot keeps 32 bits of the hash, so a
// name is compared only on a likely hit.
class NameIndex {
 public:
  explicit NameIndex(const Graph& graph) : graph_(graph) {
    std::size_t capacity = 16;
    while (capacity < graph.nodes.size() * 2) capacity <<= 1;
    slots_.assign(capacity, Slot{});
    mask_ = capacity - 1;
    for (std::size_t i = 0; i < graph.nodes.size(); ++i) insert(static_cast<NodeId>(i));
  }

  NodeId find(std::string_view name) const {
    const std::size_t h = std::hash<std::string_view>{}(name);
    for (std::size_t at = h & mask_;; at = (at + 1) & mask_) {
      const Slot& s = slots_[at];
      if (s.id == kNoNode) return kNoNode;
      if (s.hash == static_cast<std::uint32_t>(h) && graph_.nodes[s.id].name == name) return s.id;
    }
  }

 private:
  struct Slot {
    std::uint32_t hash = 0;
    NodeId id = kNoNode;
  };
  void insert(NodeId id) {
    const std::string& name = graph_.nodes[id].name;
    const std::size_t h = std::hash<std::string_view>{}(name);
    for (std::size_t at = h & mask_;; at = (at + 1) & mask_) {
      Slot& s = slots_[at];
      if (s.id == kNoNode) {
        s = Slot{static_cast<std::uint32_t>(h), id};
        return;
      }
      if (s.hash == static_cast<std::uint32_t>(h) && graph_.nodes[s.id].name == name) return;  // first wins
    }
  }
  const Graph& graph_;
  std::vector<Slot> slots_;
  std::size_t mask_ = 0;
};

}  // namespace

bool isCopyViewVariant(std::string_view target) {
  // Everything ExecuTorch's view passes may turn into a view of the op's self (to_edge turns
  // every view op into its *_copy form; ReplaceViewCopyWithViewPass turns them back).
  constexpr std::array<std::string_view, 24> kViewCopies = {
      "view_copy",      "slice_copy",         "select_copy",     "permute_copy",
      "expand_copy",    "transpose_copy",     "t_copy",          "unsqueeze_copy",
      "squeeze_copy",   "split_copy",         "split_with_sizes_copy", "unbind_copy",
      "alias_copy",     "as_strided_copy",    "diagonal_copy",   "narrow_copy",
      "_unsafe_view",   "detach_copy",        "unfold_copy",     "_reshape_alias_copy",
      "view_as_real_copy", "view_as_complex_copy", "values_copy", "indices_copy",
  };
  QualifiedName q = splitTarget(target);
  if (q.ns != "aten" && q.ns != "edge") return false;
  return std::find(kViewCopies.begin(), kViewCopies.end(), q.name) != kViewCopies.end();
}

std::span<const RootId> AliasInfo::elementRootsOf(NodeId v, std::int64_t i) const {
  Span e = elementSpan_[v];
  if (e.size == 0) return rootsOf(v);
  if (i < 0) i += e.size;
  if (i < 0 || i >= static_cast<std::int64_t>(e.size)) return rootsOf(v);
  return span(rootPool_, elementPool_[e.begin + static_cast<std::uint32_t>(i)]);
}

bool AliasInfo::readsRoot(NodeId n, RootId r) const {
  auto rs = reads(n);
  auto it = std::lower_bound(rs.begin(), rs.end(), r, [](const RootAccess& a, RootId x) { return a.root < x; });
  return it != rs.end() && it->root == r;
}

bool AliasInfo::writesRoot(NodeId n, RootId r) const {
  auto ws = writes(n);
  auto it = std::lower_bound(ws.begin(), ws.end(), r, [](const RootAccess& a, RootId x) { return a.root < x; });
  return it != ws.end() && it->root == r;
}

bool AliasInfo::mayAliasRoots(NodeId a, NodeId b) const {
  auto ra = rootsOf(a), rb = rootsOf(b);
  auto i = ra.begin();
  auto j = rb.begin();
  while (i != ra.end() && j != rb.end()) {
    if (*i == *j) return true;
    if (*i < *j) ++i; else ++j;
  }
  return false;
}

bool AliasInfo::mayAliasRoot(NodeId v, RootId r) const {
  auto rs = rootsOf(v);
  return std::binary_search(rs.begin(), rs.end(), r);
}

// One pass over the graph in order; every set is final when its node is visited, because
// arguments are defined before their uses.
class AliasBuilder {
 public:
  AliasBuilder(const Program& program, const SchemaTable& schemas, const AliasOptions& options)
      : graph_(program.graph), schemas_(schemas), options_(options), index_(program.graph) {}

  AliasInfo run() {
    const std::size_t n = graph_.nodes.size();
    info_.rootSpan_.resize(n);
    info_.elementSpan_.resize(n);
    info_.readSpan_.resize(n);
    info_.writeSpan_.resize(n);
    info_.lastRead_.resize(n);
    info_.lastWrite_.resize(n);
    info_.flags_.assign(n, 0);
    info_.firstArg_.assign(n, kNoNode);
    info_.rootPool_.reserve(n + n / 2);
    info_.readPool_.reserve(n * 2);
    info_.writePool_.reserve(n / 4);
    for (std::size_t i = 0; i < n; ++i) visit(static_cast<NodeId>(i));
    return std::move(info_);
  }

 private:
  NodeId resolve(std::string_view name) const { return index_.find(name); }

  // The schema of a call and whether it is a `*_copy` view variant, cached per (target,
  // arity): targets repeat, and a table lookup compares strings.
  struct TargetInfo {
    std::size_t arity = 0;
    const Schema* schema = nullptr;
    bool copyView = false;
  };
  const TargetInfo& targetInfo(const Node& node) {
    std::vector<TargetInfo>& known = targets_[node.target];
    for (const TargetInfo& t : known)
      if (t.arity == node.args.size()) return t;
    const Schema* schema = schemas_.find(node.target, node.args.size());
    known.push_back({node.args.size(), schema,
                     schema && options_.copyViewsAlias && isCopyViewVariant(node.target) && !hasWriteArgument(*schema)});
    return known.back();
  }

  // Every node referenced inside `arg`, in order (list and tuple arguments flattened).
  void collectRefs(const Arg& arg, std::vector<NodeId>& out) const {
    forEachRef(arg, [&](const std::string& name) {
      NodeId id = resolve(name);
      if (id != kNoNode) out.push_back(id);
    });
  }

  // Appends the sorted, deduplicated contents of `scratch` to the root pool.
  AliasInfo::Span commitRoots(std::vector<RootId>& scratch) {
    std::sort(scratch.begin(), scratch.end());
    scratch.erase(std::unique(scratch.begin(), scratch.end()), scratch.end());
    AliasInfo::Span s{static_cast<std::uint32_t>(info_.rootPool_.size()), static_cast<std::uint32_t>(scratch.size())};
    info_.rootPool_.insert(info_.rootPool_.end(), scratch.begin(), scratch.end());
    return s;
  }

  void addRootsOf(NodeId v, std::vector<RootId>& out) const {
    auto rs = info_.rootsOf(v);
    out.insert(out.end(), rs.begin(), rs.end());
  }

  // Records accesses (root, via) for node n in `pool`, one per root (the first via wins), and
  // updates the per-root last access unless n is the output node.
  AliasInfo::Span commitAccesses(NodeId n, std::vector<RootAccess>& scratch, std::vector<RootAccess>& pool,
                                 std::vector<LastAccess>& last, bool isOutput) {
    // Stable, so the first argument through which a root is reached is kept. Insertion sort:
    // the lists are short, and std::stable_sort allocates.
    auto byRoot = [](const RootAccess& a, const RootAccess& b) { return a.root < b.root; };
    if (scratch.size() > 32) {
      std::stable_sort(scratch.begin(), scratch.end(), byRoot);
    } else {
      for (std::size_t i = 1; i < scratch.size(); ++i)
        for (std::size_t j = i; j > 0 && byRoot(scratch[j], scratch[j - 1]); --j) std::swap(scratch[j], scratch[j - 1]);
    }
    scratch.erase(std::unique(scratch.begin(), scratch.end(),
                              [](const RootAccess& a, const RootAccess& b) { return a.root == b.root; }),
                  scratch.end());
    AliasInfo::Span s{static_cast<std::uint32_t>(pool.size()), static_cast<std::uint32_t>(scratch.size())};
    pool.insert(pool.end(), scratch.begin(), scratch.end());
    if (!isOutput)
      for (const RootAccess& a : scratch) last[a.root] = LastAccess{n, a.via};
    return s;
  }

  void accessesOf(const std::vector<NodeId>& values, std::vector<RootAccess>& out) const {
    for (NodeId v : values)
      for (RootId r : info_.rootsOf(v)) out.push_back(RootAccess{r, v});
  }

  void allRefs(const Node& node, std::vector<NodeId>& out) const {
    for (const Arg& a : node.args) collectRefs(a, out);
    for (const auto& kv : node.kwargs) collectRefs(kv.second, out);
  }

  void finish(NodeId n, bool isOutput) {
    info_.readSpan_[n] = commitAccesses(n, reads_, info_.readPool_, info_.lastRead_, isOutput);
    info_.writeSpan_[n] = commitAccesses(n, writes_, info_.writePool_, info_.lastWrite_, isOutput);
  }

  void visit(NodeId n) {
    const Node& node = graph_.nodes[n];
    roots_.clear();
    reads_.clear();
    writes_.clear();
    if (!node.args.empty() && node.args[0].isRef()) info_.firstArg_[n] = resolve(node.args[0].text);

    switch (node.op) {
      case NodeOp::Placeholder:
      case NodeOp::GetAttr:
        roots_.push_back(n);
        info_.rootSpan_[n] = commitRoots(roots_);
        finish(n, false);
        return;
      case NodeOp::Output: {
        refs_.clear();
        allRefs(node, refs_);
        accessesOf(refs_, reads_);
        info_.rootSpan_[n] = commitRoots(roots_);  // empty
        finish(n, true);
        info_.output_ = n;
        for (const Arg& a : graph_.returnedValues())
          info_.returned_.push_back(a.isRef() ? resolve(a.text) : kNoNode);
        return;
      }
      case NodeOp::CallModule:
        conservative(n, node);
        return;
      case NodeOp::CallFunction:
        break;
    }

    if (node.target == "operator.getitem") {
      getitem(n, node);
      return;
    }
    const TargetInfo& target = targetInfo(node);
    if (!target.schema || !precise(n, node, *target.schema, target.copyView)) conservative(n, node);
  }

  // Schema-less, higher-order, delegate, call_module, or unbindable: the result may alias every
  // tensor argument (and is also fresh), and the node may read and write all of them.
  void conservative(NodeId n, const Node& node) {
    info_.flags_[n] |= AliasInfo::kConservative;
    refs_.clear();
    allRefs(node, refs_);
    // A result annotated as a SymInt (`operator.mul` on sizes) is no storage.
    if (!node.typeText.starts_with("Sym(")) {
      roots_.push_back(n);
      for (NodeId v : refs_) addRootsOf(v, roots_);
    }
    info_.rootSpan_[n] = commitRoots(roots_);
    accessesOf(refs_, reads_);
    accessesOf(refs_, writes_);
    finish(n, false);
  }

  // A projection: the element's roots; no storage is touched.
  void getitem(NodeId n, const Node& node) {
    NodeId container = info_.firstArg_[n];
    if (container != kNoNode) {
      const bool known = node.args.size() > 1 && node.args[1].kind == Arg::Kind::Int;
      auto rs = known ? info_.elementRootsOf(container, node.args[1].integer) : info_.rootsOf(container);
      roots_.assign(rs.begin(), rs.end());
    } else {
      roots_.push_back(n);  // getitem of a constant container: a fresh value
    }
    info_.rootSpan_[n] = commitRoots(roots_);
    finish(n, false);
  }

  // Binds the node's arguments to the schema and derives roots, reads and writes precisely.
  // Returns false (nothing recorded) when the arguments do not bind.
  bool precise(NodeId n, const Node& node, const Schema& schema, bool viewCopy) {
    const std::size_t arity = schema.arguments.size();
    if (node.args.size() > arity) return false;
    // bound_[k]: the nodes passed (flattened) to schema argument k.
    if (bound_.size() < arity) bound_.resize(arity);
    for (std::size_t k = 0; k < arity; ++k) bound_[k].clear();
    for (std::size_t i = 0; i < node.args.size(); ++i) collectRefs(node.args[i], bound_[i]);
    for (const auto& [key, value] : node.kwargs) {
      std::optional<std::size_t> k = schema.argumentIndex(key);
      if (!k) return false;
      collectRefs(value, bound_[*k]);
    }
    if (schema.isInplaceKind()) info_.flags_[n] |= AliasInfo::kInplaceKind;

    std::optional<int> share = node.shareAllocArgIndex();
    if (share && static_cast<std::size_t>(*share) >= node.args.size()) return false;  // unusable annotation
    shareRefs_.clear();
    if (share) collectRefs(node.args[static_cast<std::size_t>(*share)], shareRefs_);
    bool shareHasRoots = false;
    for (NodeId v : shareRefs_) shareHasRoots |= !info_.rootsOf(v).empty();

    // Per-return roots.
    const std::size_t returns = schema.returns.size();
    if (elementRoots_.size() < returns) elementRoots_.resize(returns);
    for (std::size_t ri = 0; ri < returns; ++ri) {
      const SchemaArgument& ret = schema.returns[ri];
      std::vector<RootId>& out = elementRoots_[ri];
      out.clear();
      if (!ret.type.isTensor()) continue;
      const AliasAnnotation* retAlias = annotationOf(ret.type);
      bool fresh = true;
      if (retAlias && !retAlias->beforeSets.empty()) {
        bool matched = false;
        for (std::size_t k = 0; k < arity; ++k) {
          const AliasAnnotation* argAlias = annotationOf(schema.arguments[k].type);
          if (!argAlias || !sharesAliasSet(*retAlias, *argAlias)) continue;
          matched = true;
          for (NodeId v : bound_[k]) addRootsOf(v, out);
        }
        // An alias set no argument declares: say nothing precise about it.
        if (!matched) return false;
        fresh = false;
      }
      if (viewCopy && arity > 0) {
        for (NodeId v : bound_[0]) addRootsOf(v, out);
        fresh = false;
      }
      if (share && shareHasRoots) {
        for (NodeId v : shareRefs_) addRootsOf(v, out);
        fresh = false;
      }
      if (fresh) out.push_back(n);
    }

    for (std::size_t ri = 0; ri < returns; ++ri)
      roots_.insert(roots_.end(), elementRoots_[ri].begin(), elementRoots_[ri].end());
    info_.rootSpan_[n] = commitRoots(roots_);
    if (returns > 1) {  // a tuple: getitem picks one element
      AliasInfo::Span es{static_cast<std::uint32_t>(info_.elementPool_.size()), static_cast<std::uint32_t>(returns)};
      for (std::size_t ri = 0; ri < returns; ++ri) info_.elementPool_.push_back(commitRoots(elementRoots_[ri]));
      info_.elementSpan_[n] = es;
    }

    // Reads: every node used. Writes: arguments bound to `(a!)` (lists included) and the
    // storage a `_share_alloc_with_arg_idx` result lands in.
    refs_.clear();
    allRefs(node, refs_);
    accessesOf(refs_, reads_);
    for (std::size_t k = 0; k < arity; ++k)
      if (schema.arguments[k].type.isWrite()) accessesOf(bound_[k], writes_);
    if (share) accessesOf(shareRefs_, writes_);
    finish(n, false);
    return true;
  }

  const Graph& graph_;
  const SchemaTable& schemas_;
  AliasOptions options_;
  AliasInfo info_;
  NameIndex index_;
  std::unordered_map<std::string_view, std::vector<TargetInfo>> targets_;
  // Scratch buffers, reused across nodes.
  std::vector<RootId> roots_;
  std::vector<RootAccess> reads_, writes_;
  std::vector<NodeId> refs_, shareRefs_;
  std::vector<std::vector<NodeId>> bound_;
  std::vector<std::vector<RootId>> elementRoots_;
};

AliasInfo analyzeAliases(const Program& program, const SchemaTable& schemas, const AliasOptions& options) {
  return AliasBuilder(program, schemas, options).run();
}

namespace {
std::vector<std::string> namesOf(const Graph& graph, std::span<const RootId> roots) {
  std::vector<std::string> names;
  for (RootId r : roots) names.push_back(graph.nodes.at(r).name);
  return names;
}
std::vector<std::string> namesOf(const Graph& graph, std::span<const RootAccess> accesses) {
  std::vector<std::string> names;
  for (const RootAccess& a : accesses) names.push_back(graph.nodes.at(a.root).name);
  return names;
}
}  // namespace

std::vector<std::string> rootNames(const AliasInfo& info, const Graph& graph, std::string_view value) {
  auto i = graph.indexOf(value);
  return i ? namesOf(graph, info.rootsOf(static_cast<NodeId>(*i))) : std::vector<std::string>{};
}

std::vector<std::string> readNames(const AliasInfo& info, const Graph& graph, std::string_view node) {
  auto i = graph.indexOf(node);
  return i ? namesOf(graph, info.reads(static_cast<NodeId>(*i))) : std::vector<std::string>{};
}

std::vector<std::string> writeNames(const AliasInfo& info, const Graph& graph, std::string_view node) {
  auto i = graph.indexOf(node);
  return i ? namesOf(graph, info.writes(static_cast<NodeId>(*i))) : std::vector<std::string>{};
}

}  // namespace wb
