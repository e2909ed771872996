// proofs/effects.cpp: storage effects for the proofs (see effects.h for the rules).
#include "proofs/effects.h"

#include <algorithm>
#include <array>
#include <optional>
#include <string_view>
#include <utility>

namespace wb::proofs {

NodeId placeholderNamed(const Graph& graph, std::string_view name) {
  for (std::size_t i = 0; i < graph.nodes.size() && graph.nodes[i].isPlaceholder(); ++i)
    if (graph.nodes[i].name == name) return static_cast<NodeId>(i);
  return kNoNode;
}

std::string_view toString(Via via) {
  switch (via) {
    case Via::Own: return "own";
    case Via::Argument: return "argument";
    case Via::ListElement: return "list element";
    case Via::CopyView: return "copy view";
    case Via::ShareAlloc: return "share alloc";
    case Via::Havoc: return "havoc";
    case Via::Getitem: return "getitem";
  }
  return "?";
}

std::string nodeLabel(const Graph& graph, NodeId n) {
  if (n == kNoNode || n >= graph.nodes.size()) return "?";
  const Node& node = graph.nodes[n];
  return node.isPlaceholder() ? node.name : "%" + node.name;
}

namespace {

// The `*_copy` view variants the oracle turns into views in the alias-views mode, by schema
// base name (the oracle's list, oracle/ops.cpp kCopyVariants: what ExecuTorch's view passes
// may make views of). `_unsafe_view` is a view at run time without an alias annotation.
bool isCopyViewVariant(std::string_view schemaName) {
  static constexpr std::array<std::string_view, 17> kVariants = {
      "view_copy",      "slice_copy",     "select_copy",    "permute_copy", "expand_copy",
      "transpose_copy", "t_copy",         "unsqueeze_copy", "squeeze_copy", "split_copy",
      "split_with_sizes_copy", "unbind_copy", "alias_copy", "as_strided_copy", "diagonal_copy",
      "narrow_copy",    "_unsafe_view",
  };
  return std::find(kVariants.begin(), kVariants.end(), schemaName) != kVariants.end();
}

bool setsIntersect(const std::optional<AliasAnnotation>& a, const std::optional<AliasAnnotation>& b) {
  if (!a || !b) return false;
  for (const std::string& x : a->beforeSets)
    for (const std::string& y : b->beforeSets)
      if (x == y) return true;
  return false;
}

// Binds a call's arguments to schema positions as Python does: positional arguments fill the
// positional parameters in order, keywords by name; a parameter not given needs a default.
// nullptr for a defaulted parameter. False when they do not bind.
bool bindArguments(const Node& node, const Schema& schema, std::vector<const Arg*>& bound) {
  bound.assign(schema.arguments.size(), nullptr);
  std::size_t next = 0;
  for (const Arg& a : node.args) {
    if (next >= schema.arguments.size() || schema.arguments[next].kwargOnly) return false;
    bound[next++] = &a;
  }
  for (const auto& [name, value] : node.kwargs) {
    std::optional<std::size_t> k = schema.argumentIndex(name);
    if (!k || bound[*k]) return false;
    bound[*k] = &value;
  }
  for (std::size_t k = 0; k < bound.size(); ++k)
    if (!bound[k] && !schema.arguments[k].defaultValue) return false;
  return true;
}

class Deriver {
 public:
  // `other`: the same program's effects in the other mode, or null. A node whose named values
  // all have the same roots in both modes, and that is no `*_copy` view variant, has the same
  // effects in both: they are copied from `other` instead of derived again.
  Deriver(const Program& program, const SchemaTable& schemas, ViewMode mode, const Effects* other = nullptr)
      : program_(program), graph_(program.graph), schemas_(schemas), mode_(mode), other_(other) {}

  Effects run() {
    const std::size_t n = graph_.nodes.size();
    out_.mode = mode_;
    out_.nodes.resize(n);
    out_.readersOf.resize(n);
    out_.writersOf.resize(n);
    markKeptViewCopies();
    rootsDiffer_.assign(other_ ? n : 0, false);
    for (std::size_t i = 0; i < n; ++i) {
      const NodeId id = static_cast<NodeId>(i);
      if (other_ && !mayDiffer(id)) {
        out_.nodes[i] = other_->nodes[i];
        continue;
      }
      visit(id);
      if (other_)
        rootsDiffer_[i] = out_.nodes[i].roots != other_->nodes[i].roots || out_.nodes[i].elements != other_->nodes[i].elements;
    }
    for (std::size_t i = 0; i < n; ++i) {
      if (graph_.nodes[i].isOutput()) continue;
      for (const Access& a : out_.nodes[i].reads) out_.readersOf[a.root].push_back(static_cast<NodeId>(i));
      for (const Access& a : out_.nodes[i].writes) out_.writersOf[a.root].push_back(static_cast<NodeId>(i));
    }
    computeLiveness();
    return std::move(out_);
  }

 private:
  const Program& program_;
  const Graph& graph_;
  const SchemaTable& schemas_;
  ViewMode mode_;
  const Effects* other_ = nullptr;
  std::vector<bool> rootsDiffer_;  // with other_: the node's roots or elements differ from other_'s
  Effects out_;
  std::vector<bool> kept_;  // view_copy nodes the program returns at a non-mutation position
  std::vector<const Arg*> bound_;

  void markKeptViewCopies() {
    kept_.assign(graph_.nodes.size(), false);
    const std::span<const Arg> returned = graph_.returnedArgs();
    const std::vector<OutputSpec>& specs = program_.signature.outputs;
    for (std::size_t p = 0; p < returned.size(); ++p) {
      if (p < specs.size() && isMutation(specs[p].kind)) continue;
      markRefs(returned[p]);
    }
  }
  void markRefs(const Arg& a) {
    if (a.isRef()) {
      kept_[a.node] = true;
    } else if (a.isSequence()) {
      for (const Arg& item : a.items) markRefs(item);
    }
  }

  const std::vector<RootLink>& rootsOf(NodeId v) const { return out_.nodes[v].roots; }

  // Roots of value `v` (an argument of the node being visited) into `into`, as reached
  // through `v` by `via`.
  void shareRoots(NodeId v, Via via, std::vector<RootLink>& into) const {
    for (const RootLink& l : rootsOf(v)) into.push_back({l.root, v, via});
  }
  void shareRootsOfArg(const Arg& a, Via via, std::vector<RootLink>& into) const {
    if (a.isRef()) {
      shareRoots(a.node, via, into);
    } else if (a.isSequence()) {
      for (const Arg& item : a.items) shareRootsOfArg(item, via == Via::Argument ? Via::ListElement : via, into);
    }
  }

  // Every root of every node `a` names, as accesses through argument `argument`.
  void access(const Arg& a, std::int32_t argument, std::int32_t element, Via via, std::vector<Access>& into) const {
    if (a.isRef()) {
      const NodeId v = a.node;
      for (const RootLink& l : rootsOf(v)) into.push_back({l.root, v, argument, element, via});
    } else if (a.isSequence()) {
      for (std::size_t j = 0; j < a.items.size(); ++j) {
        const Arg& item = a.items[j];
        access(item, argument, static_cast<std::int32_t>(j), via == Via::Argument ? Via::ListElement : via, into);
      }
    }
  }

  // Stable by root: the first link or access of each root is the one kept. The lists hold a
  // few entries as a rule, which an insertion sort orders without std::stable_sort's buffer
  // (an allocation per call: a tenth of the derivation's time).
  template <typename T>
  static void stableSortByRoot(std::vector<T>& items) {
    if (items.size() > 32) {
      std::stable_sort(items.begin(), items.end(), [](const T& a, const T& b) { return a.root < b.root; });
      return;
    }
    for (std::size_t i = 1; i < items.size(); ++i)
      for (std::size_t j = i; j > 0 && items[j].root < items[j - 1].root; --j) std::swap(items[j], items[j - 1]);
  }
  static void normaliseLinks(std::vector<RootLink>& links) {
    stableSortByRoot(links);
    links.erase(std::unique(links.begin(), links.end(), [](const RootLink& a, const RootLink& b) { return a.root == b.root; }),
                links.end());
  }
  static void normaliseAccesses(std::vector<Access>& accesses) {
    stableSortByRoot(accesses);
    accesses.erase(
        std::unique(accesses.begin(), accesses.end(), [](const Access& a, const Access& b) { return a.root == b.root; }),
        accesses.end());
  }

  // With other_: may node i's effects differ from other_'s? Only the roots and elements of the
  // values a node names enter its effects (shareRoots, access, getitem), and only `*_copy`
  // view variants are treated differently by the modes.
  bool mayDiffer(NodeId i) const {
    const Node& node = graph_.nodes[i];
    if (node.isPlaceholder() || node.op == NodeOp::GetAttr) return false;
    bool differs = false;
    forEachNamed(node, [&](NodeId v) { differs = differs || rootsDiffer_[v]; });
    if (differs || node.op != NodeOp::CallFunction) return differs;
    const Schema* schema = schemas_.find(node.target, node.args.size());
    return schema && isCopyViewVariant(schema->name);
  }

  void visit(NodeId i) {
    const Node& node = graph_.nodes[i];
    NodeEffects& e = out_.nodes[i];
    switch (node.op) {
      case NodeOp::Placeholder:
      case NodeOp::GetAttr: e.roots.push_back({i, i, Via::Own}); return;
      case NodeOp::Output:
        for (std::size_t k = 0; k < node.args.size(); ++k) access(node.args[k], static_cast<std::int32_t>(k), -1, Via::Argument, e.reads);
        normaliseAccesses(e.reads);
        return;
      case NodeOp::CallModule: havoc(i); break;
      case NodeOp::CallFunction:
        if (node.target == "operator.getitem") {
          getitem(i);
          return;
        }
        if (!schemaCall(i)) havoc(i);
        break;
    }
    shareAlloc(i);
    normaliseLinks(e.roots);
    for (auto& element : e.elements) normaliseLinks(element);
    normaliseAccesses(e.reads);
    normaliseAccesses(e.writes);
  }

  // No usable schema: may read, write and alias every tensor argument; or a fresh result.
  void havoc(NodeId i) {
    const Node& node = graph_.nodes[i];
    NodeEffects& e = out_.nodes[i];
    e.havoc = true;
    e.roots.push_back({i, i, Via::Own});
    std::int32_t k = 0;
    auto each = [&](const Arg& a) {
      shareRootsOfArg(a, Via::Havoc, e.roots);
      access(a, k, -1, Via::Havoc, e.reads);
      access(a, k, -1, Via::Havoc, e.writes);
      ++k;
    };
    for (const Arg& a : node.args) each(a);
    for (const auto& kv : node.kwargs) each(kv.second);
  }

  void getitem(NodeId i) {
    const Node& node = graph_.nodes[i];
    NodeEffects& e = out_.nodes[i];
    if (node.args.empty()) return;
    if (!node.args[0].isRef()) return;
    const NodeId container = node.args[0].node;
    const NodeEffects& c = out_.nodes[container];
    const std::vector<RootLink>* from = &c.roots;
    if (node.args.size() >= 2 && node.args[1].kind == Arg::Kind::Int && !c.elements.empty()) {
      std::int64_t k = node.args[1].integer;
      const std::int64_t size = static_cast<std::int64_t>(c.elements.size());
      if (k < 0) k += size;
      if (k >= 0 && k < size) from = &c.elements[static_cast<std::size_t>(k)];
    }
    for (const RootLink& l : *from) e.roots.push_back({l.root, container, Via::Getitem});
    normaliseLinks(e.roots);
  }

  bool schemaCall(NodeId i) {
    const Node& node = graph_.nodes[i];
    NodeEffects& e = out_.nodes[i];
    const Schema* schema = schemas_.find(node.target, node.args.size());
    if (!schema || !bindArguments(node, *schema, bound_)) return false;
    const Schema& s = *schema;
    // Reads: every node named anywhere in the arguments.
    for (std::size_t k = 0; k < bound_.size(); ++k)
      if (bound_[k]) access(*bound_[k], static_cast<std::int32_t>(k), -1, Via::Argument, e.reads);
    // Writes: `(a!)` arguments, list elements included.
    for (std::size_t k = 0; k < bound_.size(); ++k)
      if (bound_[k] && s.arguments[k].type.isTensor() && s.arguments[k].type.isWrite())
        access(*bound_[k], static_cast<std::int32_t>(k), -1, Via::Argument, e.writes);
    // The `*_copy` view variants.
    if (isCopyViewVariant(s.name)) {
      const std::size_t self = s.argumentIndex("self").value_or(0);
      const bool viewInAliasMode = !(s.name == "view_copy" && kept_[i]);
      out_.viewModesDiffer = out_.viewModesDiffer || viewInAliasMode;
      const bool becomesView = mode_ == ViewMode::AliasViews && viewInAliasMode;
      if (becomesView && self < bound_.size() && bound_[self]) {
        shareRootsOfArg(*bound_[self], Via::CopyView, e.roots);
        if (s.returns.size() > 1)
          for (std::size_t r = 0; r < s.returns.size(); ++r) e.elements.push_back(e.roots);
      } else {
        e.roots.push_back({i, i, Via::Own});
        if (s.returns.size() > 1) e.elements.assign(s.returns.size(), e.roots);
      }
      return true;
    }
    // Results.
    std::vector<std::vector<RootLink>> perReturn(s.returns.size());
    for (std::size_t r = 0; r < s.returns.size(); ++r) {
      const SchemaType& type = s.returns[r].type;
      if (!type.isTensor()) continue;
      bool aliased = false;
      for (std::size_t k = 0; k < s.arguments.size(); ++k) {
        const SchemaType& arg = s.arguments[k].type;
        if (!bound_[k]) continue;
        if (setsIntersect(type.alias, arg.alias) || setsIntersect(type.alias, arg.containerAlias)) {
          shareRootsOfArg(*bound_[k], Via::Argument, perReturn[r]);
          aliased = true;
        }
      }
      if (!aliased && type.alias && !type.alias->beforeSets.empty()) {
        // An alias set no argument declares: it may be a view of any tensor argument.
        for (std::size_t k = 0; k < s.arguments.size(); ++k)
          if (bound_[k] && s.arguments[k].type.isTensor()) shareRootsOfArg(*bound_[k], Via::Argument, perReturn[r]);
        perReturn[r].push_back({i, i, Via::Own});
        aliased = true;
      }
      if (!aliased) perReturn[r].push_back({i, i, Via::Own});
    }
    for (const auto& links : perReturn) e.roots.insert(e.roots.end(), links.begin(), links.end());
    if (s.returns.size() > 1) e.elements = std::move(perReturn);
    return true;
  }

  // `_share_alloc_with_arg_idx = k`: the result lives in (raw) argument k's storage, which
  // the node therefore writes.
  void shareAlloc(NodeId i) {
    const Node& node = graph_.nodes[i];
    if (node.meta.empty()) return;
    std::optional<int> k = node.shareAllocArgIndex();
    if (!k || static_cast<std::size_t>(*k) >= node.args.size() || !node.args[*k].isRef()) return;
    NodeEffects& e = out_.nodes[i];
    if (e.roots.empty()) return;  // no tensor result: nothing is allocated
    const NodeId base = node.args[*k].node;
    // The result is not fresh: it is computed into the argument's storage.
    e.roots.erase(std::remove_if(e.roots.begin(), e.roots.end(), [&](const RootLink& l) { return l.root == i; }),
                  e.roots.end());
    shareRoots(base, Via::ShareAlloc, e.roots);
    for (const RootLink& l : rootsOf(base)) e.writes.push_back({l.root, base, *k, -1, Via::ShareAlloc});
  }

  void computeLiveness() {
    liveness(/*havocWrites=*/true);
    liveness(/*havocWrites=*/false);
  }

  // One backward pass. Without `havocWrites`, the writes ops without a schema may make keep
  // nothing live (NodeEffects::liveWithoutHavocWrites).
  void liveness(bool havocWrites) {
    const std::size_t n = graph_.nodes.size();
    std::vector<bool> liveValue(n, false), liveRoot(n, false);
    // Every placeholder's storage is observed at the end, except a mutation output's target:
    // S_par's end write overwrites it whole, so what was written there before is seen only by
    // the nodes that read it (and by the end write itself, when the value aliases it: the
    // output node reads every returned value).
    for (std::size_t i = 0; i < n; ++i)
      if (graph_.nodes[i].isPlaceholder()) liveRoot[i] = true;
    for (const OutputSpec& spec : program_.signature.outputs)
      if (isMutation(spec.kind))
        if (const InputSpec* input = program_.signature.mutatedInput(spec))
          if (NodeId t = placeholderNamed(graph_, input->name); t != kNoNode) liveRoot[t] = false;
    for (std::size_t i = n; i-- > 0;) {
      const Node& node = graph_.nodes[i];
      NodeEffects& e = out_.nodes[i];
      bool live = true;
      if (node.isOutput()) {
        for (const Access& a : e.reads) {
          liveValue[a.through] = true;
          liveRoot[a.root] = true;
        }
      } else if (!node.isPlaceholder()) {
        live = liveValue[i];
        for (const Access& a : e.writes)
          if (havocWrites || a.via != Via::Havoc) live = live || liveRoot[a.root];
        if (live) {
          forEachNamed(node, [&](NodeId v) { liveValue[v] = true; });
          for (const Access& a : e.reads) liveRoot[a.root] = true;
        }
      }
      (havocWrites ? e.live : e.liveWithoutHavocWrites) = live;
    }
  }

  template <typename F>
  void forEachNamed(const Node& node, F&& f) const {
    auto visitArg = [&](const Arg& a, auto& self) -> void {
      if (a.isRef()) {
        f(a.node);
      } else if (a.isSequence()) {
        for (const Arg& item : a.items) self(item, self);
      }
    };
    for (const Arg& a : node.args) visitArg(a, visitArg);
    for (const auto& kv : node.kwargs) visitArg(kv.second, visitArg);
  }
};

template <typename T>
const T* findByRoot(const std::vector<T>& sorted, NodeId root) {
  auto it = std::lower_bound(sorted.begin(), sorted.end(), root, [](const T& a, NodeId r) { return a.root < r; });
  return it != sorted.end() && it->root == root ? &*it : nullptr;
}

}  // namespace

bool Effects::mayAlias(NodeId value, NodeId root) const {
  return findByRoot(nodes[value].roots, root) != nullptr;
}
const Access* Effects::readOf(NodeId node, NodeId root) const { return findByRoot(nodes[node].reads, root); }
const Access* Effects::writeOf(NodeId node, NodeId root) const { return findByRoot(nodes[node].writes, root); }

std::vector<RootLink> aliasPath(const Effects& effects, NodeId value, NodeId root) {
  std::vector<RootLink> path;
  for (std::size_t steps = 0; steps <= effects.nodes.size() && value != kNoNode; ++steps) {
    const RootLink* link = findByRoot(effects.nodes[value].roots, root);
    if (!link) return {};
    path.push_back(*link);
    if (link->via == Via::Own || link->from == value) break;
    value = link->from;
  }
  return path;
}

bool sharesOnlyThroughHavoc(const Effects& effects, NodeId value, NodeId root) {
  for (const RootLink& l : aliasPath(effects, value, root))
    if (l.via == Via::Havoc) return true;
  return false;
}

Effects deriveEffects(const Program& program, const SchemaTable& schemas, ViewMode mode) {
  return Deriver(program, schemas, mode).run();
}

Effects deriveEffects(const Program& program, const SchemaTable& schemas, ViewMode mode, const Effects& otherMode) {
  return Deriver(program, schemas, mode, &otherMode).run();
}

namespace {

// The placeholder whose whole storage value `v` is, or kNoNode: a placeholder itself, or an op
// returning (as its first result) an argument it writes (`add_`, `index_put_`, `copy_`,
// `add.out(..., out=t)`), followed back.
NodeId wholeStorageOf(const Program& program, const SchemaTable& schemas, NodeId v) {
  std::vector<const Arg*> bound;
  for (std::size_t steps = 0; v != kNoNode && steps <= program.graph.nodes.size(); ++steps) {
    const Node& node = program.graph.nodes[v];
    if (node.isPlaceholder()) return v;
    if (node.op != NodeOp::CallFunction || node.shareAllocArgIndex()) return kNoNode;
    const Schema* s = schemas.find(node.target, node.args.size());
    if (!s || s->returns.empty() || !bindArguments(node, *s, bound)) return kNoNode;
    const SchemaType& ret = s->returns[0].type;
    NodeId next = kNoNode;
    for (std::size_t k = 0; k < s->arguments.size() && next == kNoNode; ++k)
      if (bound[k] && bound[k]->isRef() && s->arguments[k].type.isSingleTensor() && s->arguments[k].type.isWrite() &&
          setsIntersect(ret.alias, s->arguments[k].type.alias))
        next = bound[k]->node;
    v = next;
  }
  return kNoNode;
}

}  // namespace

std::vector<MutationOutput> mutationOutputs(const Program& program, const SchemaTable& schemas) {
  std::vector<MutationOutput> result;
  const std::span<const Arg> returned = program.graph.returnedArgs();
  const std::vector<OutputSpec>& specs = program.signature.outputs;
  for (std::size_t p = 0; p < specs.size() && p < returned.size(); ++p) {
    if (!isMutation(specs[p].kind)) continue;
    MutationOutput m;
    m.outputIndex = p;
    if (const InputSpec* input = program.signature.mutatedInput(specs[p])) m.target = placeholderNamed(program.graph, input->name);
    m.value = returned[p].node;
    m.identity = m.value == kNoNode || (m.target != kNoNode && wholeStorageOf(program, schemas, m.value) == m.target);
    result.push_back(m);
  }
  return result;
}

}  // namespace wb::proofs
