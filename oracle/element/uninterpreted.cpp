// oracle/element/uninterpreted.cpp: ops the element tier does not interpret: ops with a
// schema get H(op, inputs, channel, position) in every output and written argument;
// schema-less targets read their tensor arguments and then behave as the run's behaviour draw
// says (oracle.h: HavocBehaviour; see compiler.h).
#include "oracle/element/compiler.h"

namespace wb::oracle::detail {

ElementCompiler::HashInputs ElementCompiler::newHashInputs() {
  scratch_->hashSpans.clear();
  scratch_->hashSlots.clear();
  return HashInputs{scratch_->hashSpans, scratch_->hashSlots};
}

void ElementCompiler::collectHashInputs(const CValue& v, HashInputs& h) {
  switch (v.kind) {
    case CValue::Kind::Tensor:
      h.tensors.push_back(spanOf(v.t));
      h.constant = combine(h.constant, numelOf(v.t.sizes));
      break;
    case CValue::Kind::Opaque: h.opaques.push_back(v.slot); break;
    case CValue::Kind::List:
      h.constant = combine(h.constant, 0x4c495354 + v.itemsCount);
      for (const CValue& item : itemsOf(v)) collectHashInputs(item, h);  // makes no list
      break;
    default: h.constant = combine(h.constant, sourceOf(v).constant); break;
  }
}

std::uint32_t ElementCompiler::emitDigest(const HashInputs& h, std::uint64_t opId) {
  Step s{};
  s.kind = StepKind::Digest;
  s.slot = newOpaque();
  s.a = combine(opId, h.constant);
  s.listAt = static_cast<std::uint32_t>(out_.spans.size());
  s.listCount = static_cast<std::uint32_t>(h.tensors.size());
  out_.spans.insert(out_.spans.end(), h.tensors.begin(), h.tensors.end());
  s.slotsAt = static_cast<std::uint32_t>(out_.offsets.size());
  s.slotsCount = static_cast<std::uint32_t>(h.opaques.size());
  out_.offsets.insert(out_.offsets.end(), h.opaques.begin(), h.opaques.end());
  emit(s);
  return s.slot;
}

void ElementCompiler::emitHashFill(const Layout& l, std::uint32_t digestSlot, std::uint64_t channel) {
  Step s{};
  s.kind = StepKind::FillHash;
  s.dest = spanOf(l);
  s.from = digestSlot;
  s.b = channel;
  emit(s);
}

void ElementCompiler::collectTensors(const CValue& v, std::vector<Layout>& out) const {
  if (v.isTensor()) out.push_back(v.t);
  else if (v.kind == CValue::Kind::List)
    for (const CValue& item : itemsOf(v)) collectTensors(item, out);
}

std::optional<Layout> ElementCompiler::viewForResult(const Layout& arg, const Shape& shape) const {
  if (shape == arg.sizes) return arg;
  Layout l;
  l.storage = arg.storage;
  l.sizes = shape;
  setContiguousStrides(l.sizes, l.strides);
  const std::int64_t n = numelOf(shape);
  if (isContiguous(arg) && n <= numelOf(arg.sizes)) {
    l.offset = arg.offset;
    return l;
  }
  if (n > sizeOf(arg.storage)) return std::nullopt;
  l.offset = 0;
  return l;
}

void ElementCompiler::compileSchemaless(const Node& n, const OpInfo& info) {
  HashInputs h = newHashInputs();
  CValue scratch;
  const NodeFacts& facts = analysis_->nodes[current_];
  // F runs draw 0 (oracle.h: ExecOptions::behaviour); so does every draw for a node that reads
  // no tensor.
  const HavocBehaviour behaviour(valueModel_ ? 0 : options_.behaviour, n.name);
  std::vector<Layout> tensors;  // the tensor arguments, numbered as HavocBehaviour numbers them
  for (const ArgRef& a : analysis_->raw(facts)) {
    const CValue& v = resolveRef(a, scratch);
    collectHashInputs(v, h);
    if (!behaviour.readsOnly()) collectTensors(v, tensors);
  }
  std::size_t kw = facts.kwAt;
  for (const auto& [name, a] : n.kwargs) {
    h.constant = combine(h.constant, hashText(name));
    const CValue& v = resolveRef(analysis_->argRefs[kw++], scratch);
    collectHashInputs(v, h);
    if (!behaviour.readsOnly()) collectTensors(v, tensors);
  }
  std::uint32_t digest = emitDigest(h, info.opId);
  // The writes, after every read (the digest above): H(op, inputs, 2000 + k, position) into
  // argument k's view or its whole storage.
  for (std::size_t k = 0; k < tensors.size(); ++k) {
    if (!behaviour.writes(k, tensors.size())) continue;
    if (!behaviour.writesWholeStorage(k)) {
      emitHashFill(tensors[k], digest, 2000 + k);
      continue;
    }
    Layout whole;
    whole.storage = tensors[k].storage;
    whole.offset = 0;
    whole.sizes = Shape{sizeOf(whole.storage)};
    setContiguousStrides(whole.sizes, whole.strides);
    emitHashFill(whole, digest, 2000 + k);
  }
  // A result of the node's annotated shape: a view of the argument the draw names where it
  // fits, else fresh.
  auto result = [&](const Shape& shape, std::size_t element, std::uint64_t channel) {
    CValue v;
    v.kind = CValue::Kind::Tensor;
    if (std::optional<std::size_t> k = behaviour.resultViewOf(element, tensors.size()))
      if (std::optional<Layout> view = viewForResult(tensors[*k], shape)) {
        v.t = *view;
        return v;
      }
    fresh(shape, v.t);
    emitHashFill(v.t, digest, channel);
    return v;
  };
  CValue v;
  if (std::optional<Shape> shape = annotatedShape(current_)) {
    v = result(*shape, 0, 1000);
  } else if (std::optional<CValue> list = viewElements(behaviour, tensors, digest)) {
    v = *list;
  } else {
    v.kind = CValue::Kind::Opaque;
    v.slot = digest;
  }
  values_[current_] = v;
}

std::optional<CValue> ElementCompiler::viewElements(const HavocBehaviour& behaviour, const std::vector<Layout>& tensors,
                                                    std::uint32_t digest) {
  // A tuple result (no annotation), read by getitems: when the draw makes some element a
  // view, the result is a list whose items are what the getitems would otherwise make from
  // the digest (compileGetitem), except the views.
  const std::vector<std::size_t>& users = analysis_->nodes[current_].getitemUsers;
  std::size_t count = 0;
  bool anyView = false;
  for (std::size_t user : users) {
    const Node& u = program_->graph.nodes[user];
    if (u.args.size() < 2 || u.args[1].kind != Arg::Kind::Int || u.args[1].integer < 0) return std::nullopt;
    const std::size_t r = static_cast<std::size_t>(u.args[1].integer);
    count = std::max(count, r + 1);
    if (std::optional<std::size_t> k = behaviour.resultViewOf(r, tensors.size()))
      if (std::optional<Shape> shape = annotatedShape(user)) anyView = anyView || viewForResult(tensors[*k], *shape);
  }
  if (!anyView || count > 64) return std::nullopt;
  const std::uint32_t at = newList(count);  // fresh CValues: made by index below
  for (std::size_t r = 0; r < count; ++r) {
    const std::uint64_t salt = combine(hashText("getitem"), r);
    std::optional<Shape> shape;
    for (std::size_t user : users)
      if (takesElement(user, r) && !shape) shape = annotatedShape(user);
    std::optional<Layout> view;
    if (std::optional<std::size_t> k = behaviour.resultViewOf(r, tensors.size()); k && shape)
      view = viewForResult(tensors[*k], *shape);
    CValue item;
    if (view) {
      item.kind = CValue::Kind::Tensor;
      item.t = *view;
    } else {
      item = derivedElement(shape, digest, salt);
    }
    lists_[at + r] = item;
  }
  CValue list;
  list.kind = CValue::Kind::List;
  list.itemsAt = at;
  list.itemsCount = static_cast<std::uint32_t>(count);
  return list;
}

CValue ElementCompiler::compileHashOp(const Call& call) {
  const Schema& s = *call.info.schema;
  HashInputs h = newHashInputs();
  for (std::size_t k = 0; k < call.args.size(); ++k) {
    if (s.arguments[k].type.isTensor()) collectHashInputs(*call.args[k], h);
    else h.constant = combine(h.constant, sourceOf(*call.args[k]).constant);
  }
  std::uint32_t digest = emitDigest(h, call.info.opId);
  // Written arguments: every element gets H(op, inputs, k, position). Storage model: in
  // place. Value model (F): into a fresh new version that replaces the argument node for
  // later references (see rebindsWrittenArgument; an in-place-kind op's returned self is
  // its result instead, made in hashReturn).
  for (std::size_t k = 0; k < call.args.size(); ++k) {
    if (!s.arguments[k].type.isWrite()) continue;
    if (valueModel_ && !rebindsWrittenArgument(s, k)) continue;
    const CValue& a = *call.args[k];
    auto write = [&](const Layout& l, std::uint64_t channel, std::size_t item, bool isItem) {
      if (!valueModel_) return emitHashFill(l, digest, channel);
      CValue next;
      next.kind = CValue::Kind::Tensor;
      fresh(l.sizes, next.t);
      emitHashFill(next.t, digest, channel);
      rebind(call, k, item, isItem, next);
    };
    if (a.isTensor()) write(a.t, k, 0, false);
    else if (a.kind == CValue::Kind::List)
      for (std::size_t j = 0; j < a.itemsCount; ++j)  // write() makes no list
        if (itemsOf(a)[j].isTensor()) write(itemsOf(a)[j].t, combine(k, j), j, true);
  }
  if (s.returns.empty()) return {};
  CValue result;
  if (s.returns.size() == 1) {
    result = hashReturn(call, 0, digest);
  } else {
    result.kind = CValue::Kind::List;
    result.itemsAt = newList(s.returns.size());
    result.itemsCount = static_cast<std::uint32_t>(s.returns.size());
    for (std::size_t r = 0; r < s.returns.size(); ++r) {
      const CValue item = hashReturn(call, r, digest);
      lists_[result.itemsAt + r] = item;
    }
  }
  shareAlloc(call, result);
  return result;
}

std::optional<Shape> ElementCompiler::returnShape(const Call& call, std::size_t r) const {
  const Schema& s = *call.info.schema;
  if (s.returns.size() == 1) return annotatedShape(current_);
  for (std::size_t user : analysis_->nodes[current_].getitemUsers)
    if (takesElement(user, r))
      if (std::optional<Shape> shape = annotatedShape(user)) return shape;
  return std::nullopt;
}

bool ElementCompiler::takesElement(std::size_t getitem, std::size_t r) const {
  const Node& u = program_->graph.nodes[getitem];
  return u.args.size() >= 2 && u.args[1].kind == Arg::Kind::Int && u.args[1].integer == static_cast<std::int64_t>(r);
}

bool ElementCompiler::elementUsed(std::size_t r) const {
  for (std::size_t user : analysis_->nodes[current_].getitemUsers)
    if (takesElement(user, r)) return true;
  return false;
}

CValue ElementCompiler::hashReturn(const Call& call, std::size_t r, std::uint32_t digest) {
  const Schema& s = *call.info.schema;
  const SchemaType& type = s.returns[r].type;
  CValue v;
  if (!type.isTensor()) {
    v.kind = CValue::Kind::Opaque;
    v.slot = newOpaque();
    emitOpaqueCombine(v.slot, digest, 5000 + r);
    return v;
  }
  if (type.isList) fail(call.node.target + ": uninterpreted op returning a tensor list");
  // A return aliasing an argument.
  for (std::size_t k = 0; k < s.arguments.size(); ++k) {
    if (!sameAliasSet(type, s.arguments[k].type) || !call.args[k]->isTensor()) continue;
    const Layout& arg = call.args[k]->t;
    if (s.arguments[k].type.isWrite()) {
      if (!valueModel_) return *call.args[k];
      v.kind = CValue::Kind::Tensor;  // the new version: the same contents, fresh
      fresh(arg.sizes, v.t);
      emitHashFill(v.t, digest, k);
      return v;
    }
    // An unknown view: only the whole-tensor case is representable.
    std::optional<Shape> shape = returnShape(call, r);
    if (shape && *shape == arg.sizes && !valueModel_) return *call.args[k];
    if (!shape || *shape != arg.sizes) fail(call.node.target + ": unknown view op");
    v.kind = CValue::Kind::Tensor;
    fresh(*shape, v.t);
    emitCopy(arg, v.t);
    return v;
  }
  std::optional<Shape> shape = returnShape(call, r);
  if (!shape) {
    // An element of a tuple no getitem takes (a batch norm's save_mean): never read as a
    // tensor, so it needs no shape or storage.
    if (s.returns.size() > 1 && !elementUsed(r)) {
      v.kind = CValue::Kind::Opaque;
      v.slot = digest;
      return v;
    }
    fail("%" + call.node.name + " (" + call.node.target + "): result shape unknown (no annotation)");
  }
  v.kind = CValue::Kind::Tensor;
  fresh(*shape, v.t);
  emitHashFill(v.t, digest, 1000 + r);
  return v;
}

void ElementCompiler::shareAllocAt(const Call& call, CValue& result, int index) {
  if (index < 0 || static_cast<std::size_t>(index) >= call.node.args.size()) fail("_share_alloc_with_arg_idx out of range");
  CValue scratch;
  const CValue& base = resolveRef(analysis_->raw(analysis_->nodes[current_])[static_cast<std::size_t>(index)], scratch);
  if (!base.isTensor()) fail("_share_alloc_with_arg_idx names a non-tensor argument");
  Layout shared;
  shared.storage = base.t.storage;
  shared.offset = base.t.offset;
  shared.sizes = result.t.sizes;
  shared.strides = contiguousStrides(shared.sizes);
  if (shared.offset + numelOf(shared.sizes) > sizeOf(shared.storage))
    fail("_share_alloc_with_arg_idx: the result does not fit in argument's storage");
  // The result was computed into fresh storage; move it into the shared place.
  emitCopy(result.t, shared);
  result.t = shared;
}

}  // namespace wb::oracle::detail
