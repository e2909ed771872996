// core/memplan.cpp: the model of ExecuTorch's memory planner (DESIGN §8).
//
// Owns: the TensorSpecs of a placed program as ExecuTorch has them after the passes that follow
// the write-back (executorch-semantics §3, §6.1), their lifetimes (§6.3), the planned set
// (§6.4), the greedy allocator (§6.6) and the peak of live bytes (§5.4).
//
// Node indices. ExecuTorch numbers the nodes of the graph after ToOutVarPass, which puts a
// `memory.alloc` right before each functional op; the result's lifetime starts at that alloc.
// An alloc references no node, so no other lifetime starts or ends on it: the overlap relation
// of every pair of specs, and so greedy's result and the peak, are the same as with the
// program's own node indices, which are what this model reports (they match the printout).
#include "core/memplan.h"

#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <set>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <variant>

#include <fmt/format.h>

#include "core/shape_rules.h"

namespace wb {

std::string_view toString(AliasKind kind) {
  switch (kind) {
    case AliasKind::View: return "view";
    case AliasKind::InPlace: return "inplace";
    case AliasKind::GetItem: return "getitem";
  }
  return "?";
}

bool lifetimesOverlap(int startA, int endA, int startB, int endB) {
  if (startA > endA || startB > endB) return false;  // an empty interval overlaps nothing
  return startA <= endB && startB <= endA;
}

// ---------------------------------------------------------------------------------------------
// greedy (executorch-semantics §6.6)

namespace {

struct Allocation {
  std::size_t spec = 0;
  std::int64_t offset = 0;
};

struct SharedObject {
  std::int64_t size = 0;
  int firstUsedIndex = 0;
  int lastUsedIndex = 0;
  std::vector<Allocation> allocations;
};

bool overlapsInTime(const LifetimeSpec& a, const LifetimeSpec& b) {
  return lifetimesOverlap(a.start, a.end, b.start, b.end);
}

}  // namespace

GreedyLayout greedyLayout(const std::vector<LifetimeSpec>& specs) {
  GreedyLayout layout;
  layout.slots.resize(specs.size());

  // `bisect.insort` by allocated_memory then `reverse()`: size-descending, and specs of equal
  // size in reverse collection order.
  std::vector<std::size_t> order(specs.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (specs[a].allocatedBytes != specs[b].allocatedBytes)
      return specs[a].allocatedBytes > specs[b].allocatedBytes;
    return a > b;
  });

  std::vector<SharedObject> objects;
  std::vector<std::size_t> deferred;  // inplace specs, resolved after everything else
  for (std::size_t s : order) {
    const LifetimeSpec& spec = specs[s];
    if (spec.inplaceBase) {
      deferred.push_back(s);
      continue;
    }
    std::optional<std::size_t> picked;
    std::int64_t offset = 0;
    // 1) The first shared object none of whose allocations is live with the spec: offset 0.
    for (std::size_t o = 0; o < objects.size() && !picked; ++o) {
      bool free = std::none_of(objects[o].allocations.begin(), objects[o].allocations.end(),
                               [&](const Allocation& a) { return overlapsInTime(specs[a.spec], spec); });
      if (!free) continue;
      picked = o;
      objects[o].firstUsedIndex = std::min(objects[o].firstUsedIndex, spec.start);
      objects[o].lastUsedIndex = std::max(objects[o].lastUsedIndex, spec.end);
    }
    // 2) allow_overlapping_allocations: the first shared object with room above every
    //    allocation live with the spec.
    for (std::size_t o = 0; o < objects.size() && !picked; ++o) {
      std::int64_t top = 0;
      for (const Allocation& a : objects[o].allocations)
        if (overlapsInTime(specs[a.spec], spec)) top = std::max(top, a.offset + specs[a.spec].allocatedBytes);
      if (top > 0 && top + spec.allocatedBytes <= objects[o].size) {
        picked = o;
        offset = top;
      }
    }
    // 3) A new shared object of the spec's size.
    if (!picked) {
      objects.push_back(SharedObject{spec.allocatedBytes, spec.start, spec.end, {}});
      picked = objects.size() - 1;
    }
    objects[*picked].allocations.push_back(Allocation{s, offset});
    layout.slots[s].sharedObject = static_cast<int>(*picked);
    layout.slots[s].offsetInObject = offset;
  }

  // _resolve_inplace_specs: rounds until no progress; a spec goes to its base's shared object
  // at its base's offset, with no check against the object's other tenants (the §6.6 hazard).
  std::vector<bool> placed(specs.size(), false);
  for (std::size_t s = 0; s < specs.size(); ++s) placed[s] = !specs[s].inplaceBase;
  for (bool progress = true; progress && !deferred.empty();) {
    progress = false;
    std::vector<std::size_t> still;
    for (std::size_t s : deferred) {
      std::size_t base = *specs[s].inplaceBase;
      if (base < specs.size() && placed[base]) {
        layout.slots[s].sharedObject = layout.slots[base].sharedObject;
        layout.slots[s].offsetInObject = layout.slots[base].offsetInObject;
        placed[s] = true;
        progress = true;
      } else {
        still.push_back(s);
      }
    }
    deferred = std::move(still);
  }
  layout.unresolvedInplace = deferred;

  // materialize_buffer: shared objects laid out in creation order from offset 0 (no submodule
  // prefix, no XNNPACK extra padding in this model).
  std::int64_t total = 0;
  for (std::size_t o = 0; o < objects.size(); ++o) {
    layout.objects.push_back(SharedObjectLayout{static_cast<int>(o), total, objects[o].size,
                                                objects[o].firstUsedIndex, objects[o].lastUsedIndex});
    total += objects[o].size;
  }
  layout.arenaBytes = total;
  for (GreedySlot& slot : layout.slots)
    if (slot.sharedObject >= 0)
      slot.memOffset = layout.objects[static_cast<std::size_t>(slot.sharedObject)].offset + slot.offsetInObject;
  return layout;
}

// ---------------------------------------------------------------------------------------------
// Peak live bytes (executorch-semantics §5.4 (a))

namespace {

// The spec whose allocation `s` lives in: its inplace base chain's end (cycles stop anywhere).
std::size_t allocationRoot(const std::vector<LifetimeSpec>& specs, std::size_t s) {
  std::size_t steps = 0;
  while (specs[s].inplaceBase && *specs[s].inplaceBase < specs.size() && steps++ < specs.size())
    s = *specs[s].inplaceBase;
  return s;
}

}  // namespace

std::vector<std::int64_t> liveBytesByIndex(const std::vector<LifetimeSpec>& specs, int maxIndex) {
  std::vector<std::int64_t> live(static_cast<std::size_t>(std::max(maxIndex, 0)) + 1, 0);
  // Group each allocation's members (specs by their allocation root); it counts once per index,
  // at its largest member's size. `counted[i]` is the last group that counted index i, so that
  // members overlapping in time count their allocation once.
  std::vector<std::pair<std::size_t, std::size_t>> byRoot(specs.size());  // (root, spec)
  for (std::size_t s = 0; s < specs.size(); ++s) byRoot[s] = {allocationRoot(specs, s), s};
  std::sort(byRoot.begin(), byRoot.end());
  std::vector<std::size_t> counted(live.size(), specs.size());
  for (std::size_t first = 0; first < byRoot.size();) {
    std::size_t last = first;
    std::int64_t bytes = 0;
    for (; last < byRoot.size() && byRoot[last].first == byRoot[first].first; ++last)
      bytes = std::max(bytes, specs[byRoot[last].second].allocatedBytes);
    for (std::size_t k = first; k < last; ++k) {
      const LifetimeSpec& spec = specs[byRoot[k].second];
      for (int i = std::max(spec.start, 0); i <= std::min(spec.end, maxIndex); ++i) {
        std::size_t& mark = counted[static_cast<std::size_t>(i)];
        if (mark == byRoot[first].first) continue;
        mark = byRoot[first].first;
        live[static_cast<std::size_t>(i)] += bytes;
      }
    }
    first = last;
  }
  return live;
}

// ---------------------------------------------------------------------------------------------
// Specs of a placed program

namespace {

using SpecId = std::size_t;

struct SpecRecord {
  std::string node;
  int element = -1;
  std::string type;
  std::int64_t nbytes = 0;
  bool isConst = false;
  bool mutableBuffer = false;
  bool graphInput = false;
  std::optional<SpecId> inplaceBase;
  int start = -1;  // -1: not referenced yet
  int end = -1;
  std::vector<SpecAlias> aliases;
};

// The specs a node carries (node.meta["spec"]): one for a single result, one per element for a
// multi-output producer, none for a node that produces no tensor.
struct NodeSpecs {
  std::vector<std::optional<SpecId>> elements;
  bool elementsShareBase = false;  // a `Tensor(a)[]` view list: every element is the base's spec
  bool inplace = false;            // _is_inplace_node: skipped in collection (and as arguments)
};

struct NotTensor {};
struct Unsized { std::string reason; };
using Sizing = std::variant<std::int64_t, NotTensor, Unsized>;

// nbytes of a node's type annotation.
Sizing sizeFromType(std::string_view typeText) {
  if (typeText.empty()) return Unsized{"no type annotation"};
  int elementSize = 0;
  std::optional<std::int64_t> numel;
  // Most annotations are static shapes: read without building a TensorType (an allocation or
  // two each). parseStaticShape accepts a subset of what parseTensorType reads as static, with
  // the same dimensions; anything else takes the general path.
  if (std::optional<StaticShape> shape = parseStaticShape(typeText)) {
    const std::string_view trimmed = typeText.substr(typeText.find_first_not_of(" \t"));
    elementSize = dtypeElementSize(trimmed.substr(0, trimmed.find('[')));
    numel = shape->numel();
  } else {
    std::optional<TensorType> type = parseTensorType(typeText);
    if (!type) return NotTensor{};  // "Sym(s0)", "int", ...
    if (!type->isStatic()) return Unsized{fmt::format("symbolic shape {}", typeText)};
    elementSize = type->elementSize();
    numel = type->numel();
  }
  if (elementSize == 0) return Unsized{fmt::format("unknown dtype in {}", typeText)};
  if (!numel || *numel > std::numeric_limits<std::int64_t>::max() / elementSize)
    return Unsized{fmt::format("size of {} overflows", typeText)};
  return *numel * elementSize;
}

std::int64_t aligned(std::int64_t nbytes, int alignment) {
  std::int64_t a = std::max(alignment, 1);
  return (nbytes + a - 1) / a * a;
}

// "aten::slice_copy.Tensor" -> "slice_copy" (namespace aten only; "" otherwise).
std::string_view atenBaseName(std::string_view target) {
  if (!target.starts_with("aten::")) return {};
  target.remove_prefix(6);
  return target.substr(0, target.find('.'));
}

bool isViewCopyOp(std::string_view target, PlanOptions::ViewCopies mode) {
  std::string_view base = atenBaseName(target);
  switch (mode) {
    case PlanOptions::ViewCopies::None: return false;
    case PlanOptions::ViewCopies::ViewCopyOnly: return base == "view_copy";
    case PlanOptions::ViewCopies::AllCopyViews: {
      static constexpr std::array<std::string_view, 15> kCopyViews = {
          "view_copy",      "slice_copy",      "select_copy",  "permute_copy",  "expand_copy",
          "transpose_copy", "t_copy",          "unsqueeze_copy", "squeeze_copy", "alias_copy",
          "as_strided_copy", "diagonal_copy",  "split_copy",   "split_with_sizes_copy", "unbind_copy"};
      return std::find(kCopyViews.begin(), kCopyViews.end(), base) != kCopyViews.end();
    }
  }
  return false;
}

// The node an argument of a call passes for schema argument `index`: positional, else by name
// in kwargs (as `_resolve_mutated_input` does).
const Arg* argumentFor(const Node& node, const Schema& schema, std::size_t index) {
  if (index < node.args.size()) return &node.args[index];
  if (index >= schema.arguments.size()) return nullptr;
  for (const auto& [name, value] : node.kwargs)
    if (name == schema.arguments[index].name) return &value;
  return nullptr;
}

// output_to_aliased_input_map for one return: the argument with the same alias set.
std::optional<std::size_t> aliasedArgument(const Schema& schema, const SchemaArgument& result) {
  if (!result.type.alias || result.type.alias->beforeSets.empty()) return std::nullopt;
  for (std::size_t i = 0; i < schema.arguments.size(); ++i) {
    const auto& alias = schema.arguments[i].type.alias;
    if (alias && alias->beforeSets == result.type.alias->beforeSets) return i;
  }
  return std::nullopt;
}

class PlanBuilder {
 public:
  PlanBuilder(const Program& program, const SchemaTable& schemas, const PlanOptions& options)
      : program_(program), graph_(program.graph), schemas_(schemas), options_(options) {}

  MemoryPlan build();

 private:
  void indexGraph();
  void assignSpecs();
  void assignPlaceholder(const Node& node, NodeSpecs& out);
  void assignGetItem(const Node& node, NodeSpecs& out);
  void assignCall(const Node& node, NodeSpecs& out);
  void assignMultiOutput(const Node& node, std::size_t count, NodeSpecs& out);
  std::optional<SpecId> freshSpec(const Node& node, int element, std::string_view typeText);
  std::optional<SpecId> singleSpecOf(const Arg* arg) const;
  std::optional<SpecId> shareWith(const Arg* arg, const Node& node, AliasKind kind);
  void unplanned(const Node& node, std::string reason);
  void computeLifetimes();
  void touch(SpecId spec, const Node& iterating, int index);
  std::vector<SpecId> collectPlanned();
  void findWriteBacks(MemoryPlan& plan) const;
  void reportLateInplaceUses();

  const Program& program_;
  const Graph& graph_;
  const SchemaTable& schemas_;
  const PlanOptions& options_;

  std::set<std::string, std::less<>> mutatedBufferFqns_;
  std::vector<NodeId> returnedNodes_;  // referenced by the output node, in order
  std::set<std::string, std::less<>> returnedSet_;  // their names
  // For each node used by operator.getitem: the largest index and each index's type.
  std::map<std::string, std::map<std::int64_t, std::string>, std::less<>> getItemTypes_;

  std::vector<SpecRecord> specs_;
  std::vector<NodeSpecs> nodeSpecs_;  // by node index
  std::vector<UnplannedNode> unplanned_;
  std::vector<std::string> notes_;
  int maxIndex_ = 0;
};

void PlanBuilder::indexGraph() {
  maxIndex_ = graph_.nodes.empty() ? 0 : static_cast<int>(graph_.nodes.size()) - 1;
  // buffers_to_mutate.values(): the FQNs of BUFFER_MUTATION outputs (they keep their kind and
  // target after the write-back pass renames them to the copies).
  for (const OutputSpec& spec : program_.signature.outputs)
    if (spec.kind == OutputKind::BufferMutation) mutatedBufferFqns_.insert(spec.target);
  if (const Node* output = graph_.outputNode()) {
    auto add = [&](NodeId id) {
      if (returnedSet_.insert(graph_.nodes[id].name).second) returnedNodes_.push_back(id);
    };
    for (const Arg& a : output->args) forEachRef(a, add);
    for (const auto& kv : output->kwargs) forEachRef(kv.second, add);
  }
  for (const Node& node : graph_.nodes) {
    if (node.target != "operator.getitem" || node.args.size() < 2 || !node.args[0].isRef() ||
        node.args[1].kind != Arg::Kind::Int)
      continue;
    getItemTypes_[graph_.nodes[node.args[0].node].name].emplace(node.args[1].integer, node.typeText);
  }
}

void PlanBuilder::unplanned(const Node& node, std::string reason) {
  unplanned_.push_back(UnplannedNode{node.name, std::move(reason)});
}

std::optional<SpecId> PlanBuilder::freshSpec(const Node& node, int element, std::string_view typeText) {
  Sizing sizing = sizeFromType(typeText);
  if (std::holds_alternative<NotTensor>(sizing)) return std::nullopt;
  if (const auto* u = std::get_if<Unsized>(&sizing)) {
    unplanned(node, element < 0 ? u->reason : fmt::format("element {}: {}", element, u->reason));
    return std::nullopt;
  }
  SpecRecord spec;
  spec.node = node.name;
  spec.element = element;
  spec.type = std::string(typeText);
  spec.nbytes = std::get<std::int64_t>(sizing);
  specs_.push_back(std::move(spec));
  return specs_.size() - 1;
}

// The spec of an argument that is one node with one TensorSpec (not a multi-output tuple).
std::optional<SpecId> PlanBuilder::singleSpecOf(const Arg* arg) const {
  if (!arg || !arg->isRef()) return std::nullopt;
  if (arg->node >= nodeSpecs_.size()) return std::nullopt;
  const NodeSpecs& ns = nodeSpecs_[arg->node];
  if (ns.elements.empty() || (ns.elements.size() > 1 && !ns.elementsShareBase)) return std::nullopt;
  return ns.elements[0];
}

std::optional<SpecId> PlanBuilder::shareWith(const Arg* arg, const Node& node, AliasKind kind) {
  std::optional<SpecId> base = singleSpecOf(arg);
  if (base) specs_[*base].aliases.push_back(SpecAlias{node.name, kind});
  return base;
}

void PlanBuilder::assignPlaceholder(const Node& node, NodeSpecs& out) {
  const InputSpec* input = program_.signature.inputForPlaceholder(node.name);
  InputKind kind = input ? input->kind : InputKind::UserInput;
  if (kind == InputKind::CustomObj || kind == InputKind::Token) return;
  std::optional<SpecId> spec = freshSpec(node, -1, node.typeText);
  out.elements.push_back(spec);
  if (!spec) return;
  bool mutableBuffer = kind == InputKind::Buffer && mutatedBufferFqns_.contains(input->target);
  specs_[*spec].mutableBuffer = mutableBuffer;
  // SpecPropPass + update_placeholder_tensor_specs: parameters, unmutated buffers and lifted
  // constants are const (executorch-semantics §3 step 6) and never planned.
  specs_[*spec].isConst = kind == InputKind::Parameter || kind == InputKind::ConstantTensor ||
                          (kind == InputKind::Buffer && !mutableBuffer);
  specs_[*spec].graphInput = !mutableBuffer && !specs_[*spec].isConst;
}

void PlanBuilder::assignGetItem(const Node& node, NodeSpecs& out) {
  // SpecPropPass: a getitem's spec is the element spec of its producer.
  if (node.args.size() < 2 || !node.args[0].isRef() || node.args[1].kind != Arg::Kind::Int) {
    out.elements.push_back(freshSpec(node, -1, node.typeText));
    return;
  }
  if (node.args[0].node >= nodeSpecs_.size()) {
    out.elements.push_back(std::nullopt);
    return;
  }
  const NodeSpecs& producer = nodeSpecs_[node.args[0].node];
  std::int64_t index = node.args[1].integer;
  std::optional<SpecId> spec;
  if (producer.elementsShareBase && !producer.elements.empty()) {
    spec = producer.elements[0];
  } else if (index >= 0 && static_cast<std::size_t>(index) < producer.elements.size()) {
    spec = producer.elements[static_cast<std::size_t>(index)];
  }
  if (spec) specs_[*spec].aliases.push_back(SpecAlias{node.name, AliasKind::GetItem});
  out.elements.push_back(spec);
}

// One fresh spec per element, sized from the getitem that reads it (SpecPropPass sizes them
// from meta["val"], which the printout shows on the getitems).
void PlanBuilder::assignMultiOutput(const Node& node, std::size_t count, NodeSpecs& out) {
  const auto it = getItemTypes_.find(node.name);
  for (std::size_t e = 0; e < count; ++e) {
    std::string typeText;
    if (it != getItemTypes_.end())
      if (auto t = it->second.find(static_cast<std::int64_t>(e)); t != it->second.end()) typeText = t->second;
    out.elements.push_back(freshSpec(node, static_cast<int>(e), typeText));
  }
}

void PlanBuilder::assignCall(const Node& node, NodeSpecs& out) {
  const Schema* schema = node.op == NodeOp::CallFunction ? schemas_.find(node.target, node.args.size()) : nullptr;
  const auto getItems = getItemTypes_.find(node.name);
  std::size_t getItemCount =
      getItems == getItemTypes_.end() || getItems->second.empty()
          ? 0
          : static_cast<std::size_t>(std::max<std::int64_t>(getItems->second.rbegin()->first + 1, 0));

  if (!schema) {
    // Delegates, higher-order ops, custom ops without a schema: fresh results (§3: a delegate
    // keeps its lowering-time spec, one per output).
    if (getItemCount > 0) assignMultiOutput(node, getItemCount, out);
    else out.elements.push_back(freshSpec(node, -1, node.typeText));
    return;
  }
  out.inplace = schema->isInplaceKind();
  const std::vector<SchemaArgument>& returns = schema->returns;
  if (returns.empty()) return;

  if (returns.size() == 1 && returns[0].type.isTensorList()) {
    std::optional<std::size_t> base = aliasedArgument(*schema, returns[0]);
    bool viewList = base || (isViewCopyOp(node.target, options_.viewCopies) &&
                             options_.viewCopies == PlanOptions::ViewCopies::AllCopyViews);
    if (viewList) {
      // `Tensor(a)[]` (split, chunk, unbind): every element is a view of the base.
      out.elements.push_back(shareWith(argumentFor(node, *schema, base.value_or(0)), node, AliasKind::View));
      out.elementsShareBase = true;
      return;
    }
    assignMultiOutput(node, getItemCount, out);
    return;
  }
  if (returns.size() == 1) {
    const SchemaArgument& result = returns[0];
    if (!result.type.isSingleTensor()) return;  // SymInt, int, ...: no tensor
    if (std::optional<std::size_t> arg = aliasedArgument(*schema, result)) {
      // An in-place result (or an out variant's, or a schema view's) is its argument's spec:
      // `alias_inplace_result_specs` (§6.3), matched by alias set.
      // When the argument has no planned spec (no static size, reported there) neither has this.
      AliasKind kind = result.type.alias->isWrite ? AliasKind::InPlace : AliasKind::View;
      out.elements.push_back(shareWith(argumentFor(node, *schema, *arg), node, kind));
      return;
    }
    if (isViewCopyOp(node.target, options_.viewCopies) && !returnedSet_.contains(node.name) &&
        !node.args.empty()) {
      // ReplaceViewCopyWithViewPass: memory.view with a _ViewSpec that delegates lifetime and
      // placement to the base (unless a user is the output node).
      out.elements.push_back(shareWith(&node.args[0], node, AliasKind::View));
      return;
    }
    std::optional<SpecId> spec = freshSpec(node, -1, node.typeText);
    out.elements.push_back(spec);
    // _set_alloc_node_spec: a single-out node annotated by reinplace is placed at argument k.
    if (std::optional<int> k = node.shareAllocArgIndex(); spec && k) {
      auto index = static_cast<std::size_t>(*k);
      std::optional<SpecId> base = index < node.args.size() ? singleSpecOf(&node.args[index]) : std::nullopt;
      if (base) specs_[*spec].inplaceBase = base;
      else notes_.push_back(fmt::format("%{}: _share_alloc_with_arg_idx={} names no planned tensor argument; ignored",
                                        node.name, *k));
    }
    return;
  }
  // Several returns (`_native_batch_norm_legit`, ...): one spec per tensor return.
  const auto types = getItemTypes_.find(node.name);
  for (std::size_t e = 0; e < returns.size(); ++e) {
    if (!returns[e].type.isSingleTensor()) {
      out.elements.push_back(std::nullopt);
      continue;
    }
    if (std::optional<std::size_t> arg = aliasedArgument(*schema, returns[e])) {
      AliasKind kind = returns[e].type.alias->isWrite ? AliasKind::InPlace : AliasKind::View;
      out.elements.push_back(shareWith(argumentFor(node, *schema, *arg), node, kind));
      continue;
    }
    std::string typeText;
    if (types != getItemTypes_.end())
      if (auto t = types->second.find(static_cast<std::int64_t>(e)); t != types->second.end()) typeText = t->second;
    out.elements.push_back(freshSpec(node, static_cast<int>(e), typeText));
  }
}

void PlanBuilder::assignSpecs() {
  nodeSpecs_.reserve(graph_.nodes.size());
  for (const Node& node : graph_.nodes) {
    NodeSpecs ns;
    switch (node.op) {
      case NodeOp::Placeholder: assignPlaceholder(node, ns); break;
      case NodeOp::GetAttr: break;  // submodules and lowered modules: not planned here
      case NodeOp::Output: break;   // its spec is the tuple of its arguments' specs
      case NodeOp::CallFunction:
      case NodeOp::CallModule:
        if (node.target == "operator.getitem") assignGetItem(node, ns);
        else assignCall(node, ns);
        break;
    }
    nodeSpecs_.push_back(std::move(ns));
  }
}

// update_tensor_lifetime, with the placeholder and mutable-buffer rules of §6.3.
void PlanBuilder::touch(SpecId id, const Node& iterating, int index) {
  SpecRecord& spec = specs_[id];
  int start = iterating.isPlaceholder() ? 0 : index;
  spec.start = spec.start < 0 ? start : std::min(spec.start, start);
  bool mutableBufferPlaceholder = iterating.isPlaceholder() && spec.mutableBuffer && spec.node == iterating.name;
  int end = mutableBufferPlaceholder ? maxIndex_ : index;
  spec.end = std::max(spec.end, end);
}

void PlanBuilder::computeLifetimes() {
  for (std::size_t i = 0; i < graph_.nodes.size(); ++i) {
    const Node& node = graph_.nodes[i];
    int index = static_cast<int>(i);
    auto touchAll = [&](const NodeSpecs& ns) {
      for (const std::optional<SpecId>& s : ns.elements)
        if (s) touch(*s, node, index);
    };
    // The node's own specs; the output node's own spec is the tuple of the returned values'
    // specs (in-place results included: their spec is the mutated input's).
    if (node.isOutput()) {
      for (NodeId id : returnedNodes_) touchAll(nodeSpecs_[id]);
    } else if (!nodeSpecs_[i].inplace) {
      touchAll(nodeSpecs_[i]);
    }
    // Every node among the arguments (flattened), by collect_specs_from_nodes' rules.
    auto touchArg = [&](NodeId id) {
      const NodeSpecs& ns = nodeSpecs_[id];
      if (ns.inplace && !options_.inplaceArgumentsExtendLifetime) return;
      touchAll(ns);
    };
    for (const Arg& a : node.args) forEachRef(a, touchArg);
    for (const auto& kv : node.kwargs) forEachRef(kv.second, touchArg);
  }
}

// A use of an in-place result after its spec's lifetime: ExecuTorch may give those bytes to
// another tensor in between. Reported, since the model reproduces it rather than hides it.
void PlanBuilder::reportLateInplaceUses() {
  if (options_.inplaceArgumentsExtendLifetime) return;
  for (std::size_t i = 0; i < graph_.nodes.size(); ++i) {
    const Node& node = graph_.nodes[i];
    if (node.isOutput()) continue;
    auto check = [&](NodeId id) {
      if (!nodeSpecs_[id].inplace) return;
      const std::string& name = graph_.nodes[id].name;
      for (const std::optional<SpecId>& s : nodeSpecs_[id].elements) {
        if (!s || specs_[*s].end >= static_cast<int>(i)) continue;
        notes_.push_back(fmt::format(
            "%{} (index {}) reads in-place result %{} after the lifetime of its spec (%{}, ends at {}): "
            "collect_specs_from_nodes skips in-place arguments, so those bytes may be reused",
            node.name, i, name, specs_[*s].node, specs_[*s].end));
      }
    };
    for (const Arg& a : node.args) forEachRef(a, check);
    for (const auto& kv : node.kwargs) forEachRef(kv.second, check);
  }
}

// collect_specs_from_nodes in apply_algo (§6.4): own specs in node order, in-place nodes
// skipped, const specs dropped, deduplicated by identity in first-seen order.
std::vector<SpecId> PlanBuilder::collectPlanned() {
  std::vector<SpecId> planned;
  std::vector<bool> seen(specs_.size(), false);
  auto add = [&](const NodeSpecs& ns) {
    for (const std::optional<SpecId>& s : ns.elements) {
      if (!s || seen[*s] || specs_[*s].isConst || specs_[*s].start < 0) continue;
      seen[*s] = true;
      planned.push_back(*s);
    }
  };
  for (std::size_t i = 0; i < graph_.nodes.size(); ++i) {
    const Node& node = graph_.nodes[i];
    if (node.op == NodeOp::GetAttr) continue;
    if (node.isOutput()) {
      for (NodeId id : returnedNodes_) add(nodeSpecs_[id]);
      continue;
    }
    if (nodeSpecs_[i].inplace) continue;
    add(nodeSpecs_[i]);
  }
  return planned;
}

void PlanBuilder::findWriteBacks(MemoryPlan& plan) const {
  std::set<std::string, std::less<>> mutationOutputs;
  for (const OutputSpec& spec : program_.signature.outputs)
    if (isMutation(spec.kind)) mutationOutputs.insert(spec.name);
  for (std::size_t i = 0; i < graph_.nodes.size(); ++i) {
    const Node& node = graph_.nodes[i];
    bool isCopy = node.target == "aten::copy_" || node.target == "aten::copy_.default";
    if (!isCopy || !mutationOutputs.contains(node.name) || node.args.size() < 2) continue;
    WriteBackCopy copy;
    copy.copyNode = node.name;
    copy.index = static_cast<int>(i);
    copy.buffer = node.args[0].isRef() ? graph_.nodes[node.args[0].node].name : "";
    copy.value = node.args[1].isRef() ? graph_.nodes[node.args[1].node].name : "";
    plan.writeBacks.push_back(std::move(copy));
  }
}

MemoryPlan PlanBuilder::build() {
  indexGraph();
  assignSpecs();
  computeLifetimes();
  reportLateInplaceUses();
  std::vector<SpecId> planned = collectPlanned();

  MemoryPlan plan;
  plan.maxIndex = maxIndex_;
  for (const Node& node : graph_.nodes) plan.nodeNames.push_back(node.name);
  plan.unplanned = unplanned_;
  for (const SpecRecord& spec : specs_) plan.constantSpecs += spec.isConst ? 1 : 0;
  findWriteBacks(plan);

  std::vector<std::optional<std::size_t>> plannedIndex(specs_.size());
  for (std::size_t p = 0; p < planned.size(); ++p) plannedIndex[planned[p]] = p;

  std::vector<LifetimeSpec> lifetimes;
  for (SpecId id : planned) {
    const SpecRecord& spec = specs_[id];
    PlannedTensor t;
    t.node = spec.node;
    t.element = spec.element;
    t.type = spec.type;
    t.nbytes = spec.nbytes;
    t.allocatedBytes = aligned(spec.nbytes, options_.alignment);
    t.start = spec.start;
    t.end = spec.end;
    t.mutableBuffer = spec.mutableBuffer;
    t.graphInput = spec.graphInput;
    t.aliases = spec.aliases;
    if (spec.inplaceBase) {
      if (plannedIndex[*spec.inplaceBase]) t.inplaceBase = plannedIndex[*spec.inplaceBase];
      else plan.notes.push_back(fmt::format("%{}: inplace base %{} is not planned; placed on its own",
                                            spec.node, specs_[*spec.inplaceBase].node));
    }
    lifetimes.push_back(LifetimeSpec{t.allocatedBytes, t.start, t.end, t.inplaceBase});
    plan.tensors.push_back(std::move(t));
  }
  // Flags that need the node -> spec map.
  auto specsOfNode = [&](NodeId id) -> std::vector<std::size_t> {
    std::vector<std::size_t> out;
    for (const std::optional<SpecId>& s : nodeSpecs_[id].elements)
      if (s && plannedIndex[*s]) out.push_back(*plannedIndex[*s]);
    return out;
  };
  for (NodeId id : returnedNodes_)
    for (std::size_t t : specsOfNode(id)) plan.tensors[t].graphOutput = true;
  for (const WriteBackCopy& copy : plan.writeBacks) {
    const Arg& value = graph_.nodes[static_cast<std::size_t>(copy.index)].args[1];
    if (value.isRef())
      for (std::size_t t : specsOfNode(value.node)) plan.tensors[t].writeBackValue = true;
  }

  plan.liveBytes = liveBytesByIndex(lifetimes, maxIndex_);
  for (std::size_t i = 0; i < plan.liveBytes.size(); ++i) {
    if (plan.liveBytes[i] > plan.peakLiveBytes) {
      plan.peakLiveBytes = plan.liveBytes[i];
      plan.peakIndex = static_cast<int>(i);
    }
  }

  GreedyLayout layout = greedyLayout(lifetimes);
  plan.sharedObjects = layout.objects;
  plan.arenaBytes = layout.arenaBytes;
  for (std::size_t t = 0; t < plan.tensors.size(); ++t) {
    plan.tensors[t].sharedObject = layout.slots[t].sharedObject;
    plan.tensors[t].offsetInObject = layout.slots[t].offsetInObject;
    plan.tensors[t].memOffset = layout.slots[t].memOffset;
  }
  for (std::size_t t : layout.unresolvedInplace)
    plan.notes.push_back(fmt::format("%{}: inplace base chain never placed (ExecuTorch raises InternalError)",
                                     plan.tensors[t].node));

  // The _resolve_inplace_specs hazard: an inplace spec against every other tenant of its bytes
  // that is live with it, except its own base chain (ExecuTorch's Verifier exempts those).
  auto inChain = [&](std::size_t from, std::size_t target) {
    for (std::size_t steps = 0; plan.tensors[from].inplaceBase && steps <= plan.tensors.size(); ++steps) {
      from = *plan.tensors[from].inplaceBase;
      if (from == target) return true;
    }
    return false;
  };
  for (std::size_t y = 0; y < plan.tensors.size(); ++y) {
    const PlannedTensor& a = plan.tensors[y];
    if (!a.inplaceBase || a.sharedObject < 0) continue;
    for (std::size_t c = 0; c < plan.tensors.size(); ++c) {
      const PlannedTensor& b = plan.tensors[c];
      if (c == y || b.sharedObject < 0 || inChain(y, c) || inChain(c, y)) continue;
      if (b.inplaceBase && c < y) continue;  // a pair of inplace specs is reported once
      std::int64_t lo = std::max(a.memOffset, b.memOffset);
      std::int64_t hi = std::min(a.memOffset + a.allocatedBytes, b.memOffset + b.allocatedBytes);
      if (lo >= hi || !lifetimesOverlap(a.start, a.end, b.start, b.end)) continue;
      plan.overlaps.push_back(StorageOverlap{
          y, c,
          fmt::format("%{} [{}, {}] (placed at its base %{}) and %{} [{}, {}] share bytes {}..{} while both are live",
                      a.node, a.start, a.end, plan.tensors[*a.inplaceBase].node, b.node, b.start, b.end, lo,
                      hi - 1)});
    }
  }
  plan.notes.insert(plan.notes.begin(), notes_.begin(), notes_.end());
  return plan;
}

}  // namespace

MemoryPlan planMemory(const Program& placed, const SchemaTable& schemas, const PlanOptions& options) {
  return PlanBuilder(placed, schemas, options).build();
}

PlanComparison comparePlans(const MemoryPlan& end, const MemoryPlan& early) {
  PlanComparison c;
  c.peakSavedBytes = end.peakLiveBytes - early.peakLiveBytes;
  c.arenaSavedBytes = end.arenaBytes - early.arenaBytes;
  if (end.peakLiveBytes > 0) c.peakSavedPercent = 100.0 * static_cast<double>(c.peakSavedBytes) / static_cast<double>(end.peakLiveBytes);
  if (end.arenaBytes > 0) c.arenaSavedPercent = 100.0 * static_cast<double>(c.arenaSavedBytes) / static_cast<double>(end.arenaBytes);
  return c;
}

std::int64_t insertedCloneBytes(const Program& original, const Program& placed, const PlanOptions& options) {
  std::unordered_set<std::string_view> existing;
  for (const Node& n : original.graph.nodes) existing.insert(n.name);
  const std::int64_t align = std::max(1, options.alignment);
  std::int64_t bytes = 0;
  for (const Node& n : placed.graph.nodes) {
    if (n.target != "aten::clone" || existing.count(n.name)) continue;
    std::optional<TensorType> type = n.tensorType();
    std::optional<std::int64_t> numel = type ? type->numel() : std::nullopt;
    if (numel && type->elementSize() > 0) bytes += (*numel * type->elementSize() + align - 1) / align * align;
  }
  return bytes;
}

}  // namespace wb
