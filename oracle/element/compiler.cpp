// oracle/element/compiler.cpp: the element compiler's walk over a program (compiler.h): one
// node after another (placeholders, constants, calls, getitems), each node's value made from
// its arguments' values, and at the end the observations and the end-of-run writes.
#include "oracle/element/compiler.h"

namespace wb::oracle::detail {

Span ElementCompiler::listedSpanOf(const Layout& l, std::int64_t n) {
  const std::int64_t base = baseOf(l.storage), size = sizeOf(l.storage);
  Span span{};
  span.count = static_cast<std::uint32_t>(n);
  span.listed = true;
  span.at = newTable(static_cast<std::size_t>(n));  // a resize: the pool grows geometrically
  std::uint32_t* to = out_.offsets.data() + span.at;
  if (std::any_of(l.sizes.begin(), l.sizes.end(), [](std::int64_t s) { return s < 0; })) {
    // Negative sizes (a view's [-2, -3]: n > 0 all the same) have no rows: element by
    // element, an odometer over every dimension.
    Shape idx(l.sizes.size(), 0);
    std::int64_t pos = l.offset;
    for (std::int64_t e = 0; e < n; ++e) {
      if (pos < 0 || pos >= size) outsideStorage();
      *to++ = static_cast<std::uint32_t>(base + pos);
      advanceStrided(idx, l.sizes, l.strides, pos);
    }
    return span;
  }
  // Listed row by row (rows of the last dimension; a non-contiguous layout has rank >= 1, and
  // n > 0 with no negative size makes every size positive). A row's positions are evenly
  // spaced, so it stays inside the storage iff its two ends do.
  const std::size_t rank = l.sizes.size();
  const std::int64_t rowSize = l.sizes[rank - 1], step = l.strides[rank - 1];
  Shape idx(rank - 1, 0);  // the row's index in the leading dimensions
  std::int64_t pos = l.offset;  // the row's first position
  for (std::int64_t row = n / rowSize; row-- > 0;) {
    const std::int64_t last = pos + (rowSize - 1) * step;
    if (pos < 0 || pos >= size || last < 0 || last >= size) outsideStorage();
    for (std::int64_t j = 0, at = base + pos; j < rowSize; ++j, at += step) *to++ = static_cast<std::uint32_t>(at);
    advanceStrided(idx, l.sizes, l.strides, pos);  // idx spans the leading rank - 1 dimensions
  }
  return span;
}

void ElementCompiler::begin() {
  const Graph& g = program_->graph;
  const std::size_t n = g.nodes.size();
  values_.resize(n);
  declaredAt_.resize(n);
  out_.nodeStepEnd.resize(n);
  marks_ = newMarks(n);
  reservePools();
  std::size_t placeholders = 0;
  for (const Node& node : g.nodes) placeholders += node.isPlaceholder();
  out_.placeholders.reserve(placeholders);
  declaredValues_.reserve(placeholders);
  if (options_.traceNodes) out_.nodeResults.resize(g.nodes.size());
  out_.valueModel = valueModel_;
}

void ElementCompiler::reservePools() {
  const std::size_t n = program_->graph.nodes.size();
  auto atLeast = [](auto& pool, std::size_t size) { pool.reserve(std::max(size, pool.size() + pool.size() / 2)); };
  atLeast(out_.steps, 2 * n);
  atLeast(out_.spans, n);
  atLeast(out_.operands, 2 * n);
  atLeast(out_.offsets, 8 * n);
  atLeast(storages_, n);
}

void ElementCompiler::walk(std::size_t first) {
  const Graph& g = program_->graph;
  const std::size_t count = g.nodes.size();  // read once: the loop's stores may alias it
  for (std::size_t i = first; i < count; ++i) {
    const Node& n = g.nodes[i];
    current_ = i;
    if (valueForkWanted_ && !valueFork_ && dependsOnModel(i)) takeValueFork(i);
    if (placed_ && !placedFork_ && i == placedFrom_) takePlacedFork();
    if (forkWanted_ && !fork_ && !valueModel_ && analysis_->nodes[i].info.copyVariant) {
      fork_ = forkAt(i, g.nodes.size());
      fork_->options_.viewMode = ViewMode::AliasViews;
      if (placed_ && !placedFork_) {  // its placed-program fork makes the placed alias views
        fork_->placed_ = placed_;
        fork_->placedFrom_ = placedFrom_;
      }
    }
    if (recordsMarks_) marks_[i] = marks();
    const std::size_t j = replaysParent_ ? parentNodeOf(i) : kNoParentNode;
    if (j != kNoParentNode && replay(i, j)) {
      parentNode_[i] = static_cast<std::uint32_t>(j);
      ++out_.replayedNodes;
    } else {
      if (j != kNoParentNode) mirrorNode(j);
      switch (n.op) {
        case NodeOp::Placeholder: compilePlaceholder(n); break;
        case NodeOp::GetAttr: compileGetAttr(n); break;
        case NodeOp::CallFunction:
        case NodeOp::CallModule: compileCall(n); break;
        case NodeOp::Output: break;
      }
      if (mirrors_) {  // the parent's storages this node did not take: holes
        for (; mirrorNext_ < mirrorEnd_; ++mirrorNext_) storages_.push_back(parent_->storages_[mirrorNext_]);
        mirrorNext_ = mirrorEnd_ = 0;
      }
      // Whether its value is the parent's (for the replays of the nodes that read it).
      if (j != kNoParentNode && (n.op == NodeOp::CallFunction || n.op == NodeOp::CallModule))
        parentNode_[i] = sameValue(values_[i], parent_->values_[j], *parent_) ? static_cast<std::uint32_t>(j) : kNotParents;
    }
    out_.nodeStepEnd[i] = static_cast<std::uint32_t>(out_.steps.size());
    if (options_.traceNodes) out_.nodeResults[i] = sourceOf(values_[i]);
  }
  if (valueForkWanted_ && !valueFork_) takeValueFork(g.nodes.size());  // no node depends on the model
  if (placed_ && !placedFork_ && placedFrom_ == g.nodes.size()) takePlacedFork();
}

void ElementCompiler::compilePlaceholder(const Node& n) {
  std::optional<Shape> shape = annotatedShape(current_);
  if (!shape) fail("placeholder %" + n.name + " has no static tensor type");
  CValue& v = values_[current_];  // made in place (a value is a large record)
  reset(v);
  v.kind = CValue::Kind::Tensor;
  fresh(*shape, v.t);
  fillFromSeed(v.t, hashText(n.name));
  declaredValues_.push_back(v);
  declaredAt_[current_] = static_cast<std::uint32_t>(declaredValues_.size());
  out_.placeholders.emplace_back(n.name, Source{});
}

void ElementCompiler::compileGetAttr(const Node& n) {
  CValue v;
  if (std::optional<Shape> shape = annotatedShape(current_)) {
    v.kind = CValue::Kind::Tensor;
    fresh(*shape, v.t);
    fillFromSeed(v.t, hashText("get_attr:" + n.target));
  } else {
    v.kind = CValue::Kind::Opaque;
    v.slot = newOpaque();
    Step s{};
    s.kind = StepKind::SetOpaque;
    s.slot = v.slot;
    s.a = hashText("get_attr:" + n.target);
    emit(s);
  }
  values_[current_] = v;
}

void ElementCompiler::compileCall(const Node& n) {
  const NodeFacts& facts = analysis_->nodes[current_];
  const OpInfo& info = facts.info;
  if (info.getitem) return compileGetitem(n);
  if (!info.schema) return compileSchemaless(n, info);
  if (!facts.bound) fail("%" + n.name + ": " + facts.bindError);
  Call call{n, info, std::move(scratch_->argPointers), analysis_->args(facts)};
  call.args.clear();
  // Sized before any pointer into it is taken; room for most schemas at once, rather than
  // grown (and its values moved) as longer ones come.
  if (scratch_->literals.size() < call.bound.size()) scratch_->literals.resize(std::max<std::size_t>(call.bound.size(), 16));
  for (std::size_t k = 0; k < call.bound.size(); ++k)
    call.args.push_back(&resolveRef(call.bound[k], scratch_->literals[k]));
  // Assigned once, as made (a CValue copies its layout's bytes: no cheaper move).
  values_[current_] = [&]() -> CValue {
    if (isViewKind(info.kind) && !info.outVariant) return compileView(call);
    if (info.kind == OpKind::SymSize) {
      const Layout& self = tensorArg(call.arg("self"), "self");
      CValue size;
      size.kind = CValue::Kind::Int;
      if (self.sizes.empty()) fail("sym_size of a 0-d tensor");
      size.i = self.sizes[static_cast<std::size_t>(normDim(asInt(call.arg("dim"), "dim"), self.sizes.size()))];
      return size;
    }
    if (isViewKind(info.kind)) return compileListViewOut(call);
    if (info.kind == OpKind::Hash) return compileHashOp(call);
    return compileKernel(call);
  }();
  scratch_->argPointers = std::move(call.args);  // its capacity, for the next call
  // F's rebinds take effect after the call: every argument above was read before any of
  // them (the arguments point at node values, which a rebind replaces).
  for (auto& [node, next] : scratch_->rebinds) {
    values_[node] = std::move(next);
    if (node < parentNode_.size()) parentNode_[node] = kNotParents;
  }
  scratch_->rebinds.clear();
}

void ElementCompiler::compileGetitem(const Node& n) {
  if (n.args.size() < 2 || !n.args[0].isRef()) fail("getitem needs a container and an index");
  std::span<const ArgRef> raw = analysis_->raw(analysis_->nodes[current_]);
  const CValue& container = valueOf(raw[0]);
  CValue scratch;
  std::int64_t i = asInt(resolveRef(raw[1], scratch), "getitem index");
  if (container.kind == CValue::Kind::List) {
    std::int64_t size = static_cast<std::int64_t>(container.itemsCount);
    if (i < 0) i += size;
    if (i < 0 || i >= size) fail("getitem index out of range");
    values_[current_] = itemsOf(container)[static_cast<std::size_t>(i)];
    return;
  }
  if (container.kind != CValue::Kind::Opaque) fail("getitem of a value that is not a list");
  // An element of an opaque (schema-less) result: fresh, derived from the container's digest.
  std::uint32_t from = container.slot;
  std::uint64_t salt = combine(hashText("getitem"), static_cast<std::uint64_t>(i));
  values_[current_] = derivedElement(annotatedShape(current_), from, salt);
}

CValue ElementCompiler::derivedElement(const std::optional<Shape>& shape, std::uint32_t from, std::uint64_t salt) {
  CValue v;
  if (shape) {
    v.kind = CValue::Kind::Tensor;
    fresh(*shape, v.t);
    emitHashFill(v.t, from, salt);
  } else {
    v.kind = CValue::Kind::Opaque;
    v.slot = newOpaque();
    emitOpaqueCombine(v.slot, from, salt);
  }
  return v;
}

void ElementCompiler::rebind(const Call& call, std::size_t k, std::size_t item, bool isItem, const CValue& next) {
  const ArgRef& r = call.bound[k];
  const Arg& a = *r.arg;
  if (!isItem && a.isRef()) scratch_->rebinds.emplace_back(nodeOfRef(r), next);
  else if (isItem && a.isSequence() && item < a.items.size() && a.items[item].isRef())
    scratch_->rebinds.emplace_back(nodeOfRef(analysis_->items(r)[item]), next);
}

std::size_t ElementCompiler::nodeOfRef(const ArgRef& r) {
  if (r.node == ArgRef::kNoNode) throw std::out_of_range("a reference to no node");
  return r.node;
}

void ElementCompiler::compileEnd() {
  const Signature& sig = program_->signature;
  // Here, not in begin(): a fork's copies of these (empty) lists have no room.
  out_.outputs.reserve(analysis_->visibleOutputs.size());
  out_.endWrites.reserve(sig.outputs.size());
  // Placeholders: their whole storage. declaredValues_ holds them in graph order, as
  // out_.placeholders (compilePlaceholder appends to both).
  for (std::size_t p = 0; p < out_.placeholders.size(); ++p) {
    // sourceOf() of its whole storage, a contiguous range, made directly.
    const std::uint32_t storage = declaredValues_[p].t.storage;
    const std::int64_t n = sizeOf(storage);
    charge(static_cast<std::size_t>(n));
    Span whole{};
    if (n != 0) {
      whole.at = static_cast<std::uint32_t>(baseOf(storage));
      whole.count = static_cast<std::uint32_t>(n);
    }
    Source source{};
    source.kind = Source::Kind::Offsets;
    source.spansAt = static_cast<std::uint32_t>(out_.spans.size());
    source.spansCount = 1;
    out_.spans.push_back(whole);
    out_.placeholders[p].second = source;
  }
  std::span<const ArgRef> returned = analysis_->returned();
  CValue scratch;
  for (std::size_t pos : analysis_->visibleOutputs) {
    const CValue& v = resolveRef(returned[pos], scratch);
    ElementProgram::Output& o = out_.outputs.emplace_back();  // made in place (no move of the name)
    if (returned[pos].arg->isRef()) o.node = program_->graph.nodes[returned[pos].arg->node].name;
    o.reference = sourceOf(v);
    if (pos < sig.outputs.size() && sig.outputs[pos].kind == OutputKind::UserInputMutation)
      if (std::optional<std::size_t> target = analysis_->mutatedPlaceholder[pos])
        o.placed = std::exchange(o.reference, sourceOf(declared(*target)));
  }
  for (std::size_t pos = 0; pos < sig.outputs.size() && pos < returned.size(); ++pos) {
    const OutputSpec& spec = sig.outputs[pos];
    if (!isMutation(spec.kind) || options_.placedProgram) continue;
    std::optional<std::size_t> target = analysis_->mutatedPlaceholder[pos];
    if (!target) fail("mutation output " + spec.name + " has no target placeholder");
    const CValue& v = resolveRef(returned[pos], scratch);
    const Layout& t = declared(*target).t;
    if (!v.isTensor()) fail("mutation value of " + spec.target + " is not a tensor");
    EndWrite w{};
    w.target = spanOf(t);
    w.value = spanOf(expandTo(v.t, t.sizes));
    out_.endWrites.push_back(std::move(w));
  }
}

Result<std::shared_ptr<const ElementProgram>> compileElement(const Analysis& analysis, const ExecOptions& options) {
  return ElementCompiler(analysis, options).compile();
}

}  // namespace wb::oracle::detail
