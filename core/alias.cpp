// core/alias.cpp: alias and effect analysis (see alias.h for the rules).
#include "core/alias.h"

#include <algorithm>
#include <array>

namespace wb {

bool isCopyViewVariant(std::string_view target) {
  // Everything ExecuTorch's view passes may turn into a view of the op's self (to_edge turns
  // every view op into its *_copy form; ReplaceViewCopyWithViewPass turns them back).
  static constexpr std::array<std::string_view, 24> kViewCopies = {  // static: not rebuilt per call
      "view_copy",      "slice_copy",         "select_copy",     "permute_copy",
      "expand_copy",    "transpose_copy",     "t_copy",          "unsqueeze_copy",
      "squeeze_copy",   "split_copy",         "split_with_sizes_copy", "unbind_copy",
      "alias_copy",     "as_strided_copy",    "diagonal_copy",   "narrow_copy",
      "_unsafe_view",   "detach_copy",        "unfold_copy",     "_reshape_alias_copy",
      "view_as_real_copy", "view_as_complex_copy", "values_copy", "indices_copy",
  };
  // Only ops of the "aten" and "edge" namespaces (what precedes the first "::"; neither name
  // contains a colon, so a prefix test says it). The op's name runs up to its overload.
  if (!target.starts_with("aten::") && !target.starts_with("edge::")) return false;
  std::string_view name = target.substr(6);
  name = name.substr(0, name.find('.'));
  if (!name.ends_with("_copy") && name != "_unsafe_view") return false;  // most targets: no scan
  return std::find(kViewCopies.begin(), kViewCopies.end(), name) != kViewCopies.end();
}

std::span<const RootId> AliasInfo::elementRootsOf(NodeId v, std::int64_t i) const {
  Span e = nodes_[v].elements;
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

// A parameter a call may leave out: it has a default, or it may be None (`Tensor?`, `int[1]?`).
static bool omittable(const SchemaArgument& param) {
  return param.defaultValue || param.type.optional || param.type.listOptional;
}

// One pass over the graph in order; every set is final when its node is visited, because
// arguments are defined before their uses.
class AliasBuilder {
 public:
  AliasBuilder(const Program& program, const SchemaTable& schemas, const AliasOptions& options)
      : graph_(program.graph),
        schemas_(schemas),
        options_(options),
        targetIndex_(TargetName{&targets_}, 16) {
    // Enough for a small program without regrowth; larger ones grow these once or twice.
    targets_.reserve(16);
    roots_.reserve(16);
    refs_.reserve(16);
    argRefs_.reserve(8);
    kwParam_.reserve(4);
  }

  AliasInfo run() {
    const std::size_t n = graph_.nodes.size();
    // Reserved at their likely final sizes: a regrowth would copy tens of megabytes.
    info_.nodes_.reserve(n);
    info_.rootSpan_.reserve(n);
    info_.rootPool_.reserve(n + n / 2);
    info_.readPool_.reserve(n * 2);
    info_.writePool_.reserve(n / 4);
    info_.nodes_.resize(n);
    info_.rootSpan_.resize(n);
    constexpr std::size_t kLookahead = 8;
    for (std::size_t i = 0; i < n; ++i) {
      // The nodes themselves are streamed from memory: a Node spans several cache lines and its
      // arguments live elsewhere on the heap, which the hardware prefetchers do not follow.
      if (i + 2 * kLookahead < n) prefetchNode(graph_.nodes[i + 2 * kLookahead]);
      if (i + kLookahead < n) prefetchArgs(graph_.nodes[i + kLookahead]);
      visit(static_cast<NodeId>(i));
    }
    return std::move(info_);
  }

 private:
  // What the analysis needs of a call's target, once per (target, arity): targets repeat, and
  // finding a schema hashes and compares the target. The schema's alias facts come from the
  // table, derived when the schema entered it.
  struct TargetInfo {
    std::string_view target;
    const Schema* schema = nullptr;
    const SchemaAliasFacts* facts = nullptr;  // set with schema
    std::uint32_t arity = 0;  // 32 bits: 48 bytes an entry, so 16 entries stay a small block
    std::uint32_t next = kNoNode;  // the entry of the same target with another arity
    bool copyView = false;
    bool getitem = false;  // operator.getitem: a projection, whatever its schema
    // Most ops: one return, not annotated, no `*_copy` view, nothing written. Such a node's
    // roots are itself (a tensor result) or none, and it reads its arguments and writes
    // nothing; precise() settles it without binding arguments to returns.
    bool plain = false;
    bool plainTensor = false;  // a plain op returning a tensor
    // How `arity` positional arguments bind, as the oracle binds them (oracle/ops.cpp,
    // bindArguments): more than the schema's positional parameters, or a required parameter
    // after them that only a keyword argument can then give.
    bool tooManyPositional = false;
    bool requiredLeftToKeywords = false;
  };
  struct TargetName {
    const std::vector<TargetInfo>* targets;
    std::string_view operator()(std::uint32_t id) const { return (*targets)[id].target; }
  };

  // Nodes of one op share their target's block (SharedString), so the block's address, with
  // the arity, finds the entry without hashing the text: a direct-mapped cache in front of the
  // index. A miss (another op in the slot, or a target that is not shared) only costs the
  // index lookup; equal texts in different blocks still meet in the index.
  struct CachedTarget {
    const std::string* block = nullptr;
    std::uint32_t arity = 0;
    std::uint32_t id = kNoNode;
  };
  static constexpr std::size_t kTargetCacheSlots = 32;
  static std::size_t targetCacheSlot(const std::string* block, std::size_t arity) {
    const auto p = reinterpret_cast<std::uintptr_t>(block);
    return ((p >> 4) ^ (p >> 9) ^ (arity * 0x9E37u)) & (kTargetCacheSlots - 1);
  }

  const TargetInfo& targetInfo(const Node& node) {
    const std::size_t arity = node.args.size();
    const std::string* block = &node.target.str();
    CachedTarget& cached = targetCache_[targetCacheSlot(block, arity)];
    if (cached.block == block && cached.arity == arity) return targets_[cached.id];
    const TargetInfo& info = lookupTarget(node, arity);
    cached = CachedTarget{block, static_cast<std::uint32_t>(arity), static_cast<std::uint32_t>(&info - targets_.data())};
    return info;
  }

  const TargetInfo& lookupTarget(const Node& node, std::size_t arity) {
    const std::string_view target = node.target;
    const std::uint64_t hash = hashName(target);  // once, for the lookup and the insertion
    std::uint32_t id = targetIndex_.findHashed(target, hash);
    std::uint32_t last = kNoNode;
    for (; id != kNoNode; last = id, id = targets_[id].next)
      if (targets_[id].arity == arity) return targets_[id];
    const std::uint32_t fresh = static_cast<std::uint32_t>(targets_.size());
    TargetInfo t;
    t.target = target;
    t.arity = static_cast<std::uint32_t>(arity);
    t.getitem = target == std::string_view("operator.getitem");
    const SchemaTable::Found found = schemas_.lookupHashed(target, hash, arity);
    t.schema = found.schema;
    t.facts = found.aliasFacts;
    if (t.schema) {
      t.copyView = options_.copyViewsAlias && t.facts->writtenArguments.empty() && isCopyViewVariant(target);
      const auto& returns = t.facts->returns;
      t.plain = t.schema->returns.size() == 1 && !returns[0].annotated && !t.copyView &&
                t.facts->writtenArguments.empty();
      t.plainTensor = t.plain && returns[0].tensor;
      const std::vector<SchemaArgument>& params = t.schema->arguments;
      std::size_t positionalParams = 0;
      for (const SchemaArgument& p : params) positionalParams += !p.kwargOnly;
      t.tooManyPositional = arity > positionalParams;
      for (std::size_t i = arity; i < params.size(); ++i) t.requiredLeftToKeywords |= !omittable(params[i]);
    }
    targets_.push_back(t);
    if (last == kNoNode)
      targetIndex_.insertHashed(fresh, hash);
    else
      targets_[last].next = fresh;
    return targets_[fresh];
  }


  // Every node referenced inside `arg`, in order (list and tuple arguments flattened).
  void collectRefs(const Arg& arg, std::vector<NodeId>& out) {
    if (arg.kind == Arg::Kind::Ref) {
      out.push_back(arg.node);
    } else if (arg.isSequence()) {
      for (const Arg& item : arg.items) collectRefs(item, out);
    }
  }

  // Every node the node uses into refs_, in order (args, then kwargs; lists flattened);
  // argRefs_[i] is the range of argument i (positional ones, then kwargs).
  // Also records args[0] for in-place lineage walks.
  void gatherRefs(NodeId n, const Node& node) {
    refs_.clear();
    argRefs_.clear();
    for (const Arg& a : node.args) {
      const std::uint32_t begin = static_cast<std::uint32_t>(refs_.size());
      collectRefs(a, refs_);
      argRefs_.push_back({begin, static_cast<std::uint32_t>(refs_.size())});
    }
    for (const auto& kv : node.kwargs) {
      const std::uint32_t begin = static_cast<std::uint32_t>(refs_.size());
      collectRefs(kv.second, refs_);
      argRefs_.push_back({begin, static_cast<std::uint32_t>(refs_.size())});
    }
    if (!node.args.empty() && node.args[0].isRef() && argRefs_[0].end > argRefs_[0].begin)
      info_.nodes_[n].firstArg = refs_[argRefs_[0].begin];
  }

  struct Range {
    std::uint32_t begin = 0, end = 0;
  };
  std::span<const NodeId> refsOf(Range r) const { return {refs_.data() + r.begin, r.end - r.begin}; }

  // Calls f(v) for every node bound to schema argument k: the positional argument k, then the
  // kwargs naming k, in order (kwParam_ holds the schema index of each kwarg).
  template <typename F>
  void forBound(std::size_t k, std::size_t positional, F&& f) const {
    if (k < positional)
      for (NodeId v : refsOf(argRefs_[k])) f(v);
    for (std::size_t j = 0; j < kwParam_.size(); ++j)
      if (kwParam_[j] == k)
        for (NodeId v : refsOf(argRefs_[positional + j])) f(v);
  }

  // Appends the sorted, deduplicated contents of `scratch` to the root pool.
  AliasInfo::Span commitRoots(std::vector<RootId>& scratch) {
    if (scratch.size() > 1) std::sort(scratch.begin(), scratch.end());
    const std::uint32_t begin = static_cast<std::uint32_t>(info_.rootPool_.size());
    RootId last = kNoNode;  // never a root
    for (RootId r : scratch)
      if (r != last) info_.rootPool_.push_back(last = r);
    return {begin, static_cast<std::uint32_t>(info_.rootPool_.size()) - begin};
  }

  // commitRoots() of the single root r.
  AliasInfo::Span commitRoot(RootId r) {
    const std::uint32_t begin = static_cast<std::uint32_t>(info_.rootPool_.size());
    info_.rootPool_.push_back(r);
    return {begin, 1};
  }

  void addRootsOf(NodeId v, std::vector<RootId>& out) const {
    auto rs = info_.rootsOf(v);
    out.insert(out.end(), rs.begin(), rs.end());
  }

  // The accesses of the node being visited are appended straight to the pools (from
  // readsBegin_ / writesBegin_ on), then sorted and deduplicated there: no scratch copy.
  // Records them for node n, one per root (the first via wins), and updates the per-root last
  // access unless n is the output node.
  template <LastAccess AliasInfo::PerNode::*last>
  AliasInfo::Span commitAccesses(NodeId n, HugePageVector<RootAccess>& pool, std::uint32_t begin, bool isOutput) {
    const std::uint32_t size = static_cast<std::uint32_t>(pool.size()) - begin;
    if (size == 0) return {begin, 0};  // most nodes write nothing
    RootAccess* first = pool.data() + begin;
    RootAccess* end = first + size;
    if (size == 1) {  // most reads: one argument of one root
      if (!isOutput) info_.nodes_[first->root].*last = LastAccess{n, first->via};
      return {begin, 1};
    }
    // Stable, so the first argument through which a root is reached is kept. Insertion sort:
    // the lists are short, and std::stable_sort allocates.
    auto byRoot = [](const RootAccess& a, const RootAccess& b) { return a.root < b.root; };
    if (size > 32) {
      std::stable_sort(first, end, byRoot);
    } else {
      for (RootAccess* i = first + 1; i < end; ++i)
        for (RootAccess* j = i; j > first && byRoot(*j, *(j - 1)); --j) std::swap(*j, *(j - 1));
    }
    RootAccess* kept = first;  // sorted stably: the first access of a root stays
    for (RootAccess* a = first; a < end; ++a) {
      if (a != first && a->root == (kept - 1)->root) continue;
      *kept++ = *a;
      if (!isOutput) info_.nodes_[a->root].*last = LastAccess{n, a->via};
    }
    const std::uint32_t count = static_cast<std::uint32_t>(kept - first);
    if (count < size) pool.resize(begin + count);
    return {begin, count};
  }

  static void accessOf(const AliasInfo& info, NodeId v, HugePageVector<RootAccess>& out) {
    for (RootId r : info.rootsOf(v)) out.push_back(RootAccess{r, v});
  }
  void readOf(NodeId v) { accessOf(info_, v, info_.readPool_); }
  void writeOf(NodeId v) { accessOf(info_, v, info_.writePool_); }
  void readsOf(std::span<const NodeId> values) {
    for (NodeId v : values) readOf(v);
  }
  void writesOf(std::span<const NodeId> values) {
    for (NodeId v : values) writeOf(v);
  }

  void finish(NodeId n, bool isOutput) {
    AliasInfo::PerNode& at = info_.nodes_[n];
    at.reads = commitAccesses<&AliasInfo::PerNode::lastRead>(n, info_.readPool_, readsBegin_, isOutput);
    at.writes = commitAccesses<&AliasInfo::PerNode::lastWrite>(n, info_.writePool_, writesBegin_, isOutput);
  }

  void visit(NodeId n) {
    const Node& node = graph_.nodes[n];
    roots_.clear();
    readsBegin_ = static_cast<std::uint32_t>(info_.readPool_.size());
    writesBegin_ = static_cast<std::uint32_t>(info_.writePool_.size());

    switch (node.op) {
      case NodeOp::Placeholder:
      case NodeOp::GetAttr:
        if (!node.args.empty() && node.args[0].isRef()) info_.nodes_[n].firstArg = node.args[0].node;
        roots_.push_back(n);
        info_.rootSpan_[n] = commitRoots(roots_);
        finish(n, false);
        return;
      case NodeOp::Output: {
        gatherRefs(n, node);
        readsOf(refs_);
        info_.rootSpan_[n] = commitRoots(roots_);  // empty
        finish(n, true);
        info_.output_ = n;
        const std::span<const Arg> values = graph_.returnedArgs();
        info_.returned_.reserve(info_.returned_.size() + values.size());
        for (const Arg& a : values) info_.returned_.push_back(a.isRef() ? a.node : kNoNode);
        return;
      }
      case NodeOp::CallModule:
        gatherRefs(n, node);
        conservative(n, node);
        return;
      case NodeOp::CallFunction:
        break;
    }

    const TargetInfo& target = targetInfo(node);
    if (target.getitem) {
      if (!node.args.empty() && node.args[0].isRef()) info_.nodes_[n].firstArg = node.args[0].node;
      getitem(n, node);
      return;
    }
    gatherRefs(n, node);
    if (!target.schema || !precise(n, node, target)) conservative(n, node);
    // Only a call that binds returns its self: the oracle gives one that does not the
    // behaviours of an op without a schema, whose result need not be any argument.
    else if (target.facts->inplaceKind) info_.nodes_[n].flags |= AliasInfo::kInplaceKind;
  }

  // Schema-less, higher-order, delegate, call_module, or unbindable: the result may alias every
  // tensor argument (and is also fresh), and the node may read and write all of them.
  // refs_ holds the node's references (gatherRefs).
  void conservative(NodeId n, const Node& node) {
    info_.nodes_[n].flags |= AliasInfo::kConservative;
    // A result annotated as a SymInt (`operator.mul` on sizes) is no storage.
    if (!node.typeText.starts_with("Sym(")) {
      roots_.push_back(n);
      for (NodeId v : refs_) addRootsOf(v, roots_);
    }
    info_.rootSpan_[n] = commitRoots(roots_);
    readsOf(refs_);
    writesOf(refs_);
    finish(n, false);
  }

  // A projection: the element's roots; no storage is touched.
  void getitem(NodeId n, const Node& node) {
    NodeId container = info_.nodes_[n].firstArg;
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

  // Binds the node's arguments (refs_, argRefs_) to the schema and derives roots, reads and
  // writes precisely. Returns false (nothing recorded) when the arguments do not bind as the
  // oracle binds them: the node is then conservative.
  bool precise(NodeId n, const Node& node, const TargetInfo& target) {
    const Schema& schema = *target.schema;
    const std::size_t arity = schema.arguments.size();
    const std::size_t positional = node.args.size();
    if (target.tooManyPositional) return false;
    kwParam_.clear();
    for (const auto& kv : node.kwargs) {
      std::optional<std::size_t> k = schema.argumentIndex(kv.first);
      if (!k) return false;
      kwParam_.push_back(*k);
    }
    if (target.requiredLeftToKeywords)
      for (std::size_t i = positional; i < arity; ++i)
        if (!omittable(schema.arguments[i]) && std::find(kwParam_.begin(), kwParam_.end(), i) == kwParam_.end())
          return false;

    std::optional<int> share;
    if (!node.meta.empty()) share = node.shareAllocArgIndex();
    if (share && static_cast<std::size_t>(*share) >= positional) return false;  // unusable annotation
    std::span<const NodeId> shareRefs;
    if (share) shareRefs = refsOf(argRefs_[static_cast<std::size_t>(*share)]);
    if (target.plain && !share) {  // see TargetInfo::plain: what the general path gives them
      if (target.plainTensor) info_.rootSpan_[n] = commitRoot(n);
      else info_.rootSpan_[n] = AliasInfo::Span{static_cast<std::uint32_t>(info_.rootPool_.size()), 0};
      readsOf(refs_);
      finish(n, false);
      return true;
    }
    bool shareHasRoots = false;
    for (NodeId v : shareRefs) shareHasRoots |= !info_.rootsOf(v).empty();

    // Per-return roots; false for an alias set no argument declares (say nothing precise).
    auto returnRoots = [&](const SchemaAliasFacts::Return& ret, std::vector<RootId>& out) {
      if (!ret.tensor) return true;
      const std::size_t before = out.size();
      bool fresh = true;
      if (ret.annotated) {
        if (!ret.matched) return false;
        for (std::uint32_t a : ret.aliasedArguments) forBound(a, positional, [&](NodeId v) { addRootsOf(v, out); });
        fresh = false;
      }
      if (target.copyView && arity > 0) {
        forBound(0, positional, [&](NodeId v) { addRootsOf(v, out); });
        fresh = false;
      }
      if (share && shareHasRoots) {
        for (NodeId v : shareRefs) addRootsOf(v, out);
        fresh = false;
      }
      // A tensor result whose aliased arguments hold no storage (a view or `*_copy` of a
      // constant, say) is storage of its own: without a root, writes through it would be lost.
      if (fresh || out.size() == before) out.push_back(n);
      return true;
    };
    const std::size_t returns = schema.returns.size();
    if (returns == 1) {  // nearly every op: its roots are the value's
      if (!returnRoots(target.facts->returns[0], roots_)) return false;
      info_.rootSpan_[n] = commitRoots(roots_);
    } else {
      if (elementRoots_.size() < returns) elementRoots_.resize(returns);
      for (std::size_t ri = 0; ri < returns; ++ri) {
        elementRoots_[ri].clear();
        if (!returnRoots(target.facts->returns[ri], elementRoots_[ri])) return false;
      }
      for (std::size_t ri = 0; ri < returns; ++ri)
        roots_.insert(roots_.end(), elementRoots_[ri].begin(), elementRoots_[ri].end());
      info_.rootSpan_[n] = commitRoots(roots_);
      if (returns > 1) {  // a tuple: getitem picks one element
        AliasInfo::Span es{static_cast<std::uint32_t>(info_.elementPool_.size()), static_cast<std::uint32_t>(returns)};
        for (std::size_t ri = 0; ri < returns; ++ri) info_.elementPool_.push_back(commitRoots(elementRoots_[ri]));
        info_.nodes_[n].elements = es;
      }
    }

    // Reads: every node used. Writes: arguments bound to `(a!)` (lists included) and the
    // storage a `_share_alloc_with_arg_idx` result lands in.
    readsOf(refs_);
    for (std::uint32_t a : target.facts->writtenArguments) forBound(a, positional, [&](NodeId v) { writeOf(v); });
    if (share) writesOf(shareRefs);
    finish(n, false);
    return true;
  }

  const Graph& graph_;
  const SchemaTable& schemas_;
  AliasOptions options_;
  AliasInfo info_;
  std::vector<TargetInfo> targets_;
  FlatNameIndex<TargetName> targetIndex_;  // target -> first entry in targets_
  std::array<CachedTarget, kTargetCacheSlots> targetCache_{};  // see targetInfo
  // Scratch buffers, reused across nodes.
  std::vector<RootId> roots_;
  std::uint32_t readsBegin_ = 0, writesBegin_ = 0;  // the visited node's accesses: see commitAccesses
  std::vector<NodeId> refs_;
  std::vector<Range> argRefs_;
  std::vector<std::size_t> kwParam_;
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
