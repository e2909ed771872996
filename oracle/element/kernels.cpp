// oracle/element/kernels.cpp: the compilation of the interpreted ops: each a Kernel step
// (operands, a computation, a destination) with its static index tables.
#include "oracle/element/compiler.h"

namespace wb::oracle::detail {

Operand ElementCompiler::operandOf(const CValue& v, const Shape& target) {
  Operand op{};
  op.count = static_cast<std::uint32_t>(numelOf(target));
  // Most operands already have the target's shape; expandTo would return their layout as it
  // is.
  if (v.isTensor()) op.span = v.t.sizes == target ? spanOf(v.t) : spanOf(expandTo(v.t, target));
  else {
    op.isConstant = true;
    op.constant = asScalar(v);
  }
  return op;
}

Operand ElementCompiler::operandOwnShape(const CValue& v, const char* what) {
  const Layout& l = tensorArg(v, what);
  Operand op{};
  op.span = spanOf(l);
  op.count = op.span.count;
  return op;
}

CValue ElementCompiler::destinationFor(const Call& call, const Shape& shape, Span& dest) {
  CValue v;
  if (!valueModel_ && call.info.resultWrites >= 0) {
    const CValue& written = *call.args[static_cast<std::size_t>(call.info.resultWrites)];
    const Layout& l = tensorArg(written, "written argument");
    if (l.sizes != shape) fail("%" + call.node.name + ": result shape differs from the written argument's");
    dest = spanOf(l);
    return written;
  }
  v.kind = CValue::Kind::Tensor;
  fresh(shape, v.t);
  dest = spanOf(v.t);
  return v;
}

CValue ElementCompiler::compileKernel(const Call& call) {
  const OpKind kind = call.info.kind;
  // Foreach ops: several results.
  if (kind == OpKind::ForeachAdd || kind == OpKind::ForeachSub || kind == OpKind::ForeachMul) return compileForeach(call);

  const bool inplace = call.info.inplace;
  scratch_->ins.clear();
  Shape shape;
  Step k{};
  auto selfShape = [&]() -> const Shape& { return tensorArg(call.arg("self"), "self").sizes; };

  switch (kind) {
    case OpKind::Add:
    case OpKind::Sub:
    case OpKind::Rsub:
    case OpKind::Mul: {
      const CValue& self = call.arg("self");
      const CValue& other = call.arg("other");
      shape = inplace ? selfShape() : broadcastShapes(shapeOf(self), shapeOf(other));
      scratch_->ins.push_back(operandOf(self, shape));
      scratch_->ins.push_back(operandOf(other, shape));
      const CValue* alphaArg = call.find("alpha");  // None: 1
      const std::uint64_t alpha = alphaArg && !alphaArg->isNone() ? asScalar(*alphaArg) : 1;
      k.compute = kind == OpKind::Add ? Compute::Add
                  : kind == OpKind::Sub ? Compute::Sub
                  : kind == OpKind::Rsub ? Compute::Rsub
                                         : Compute::Mul;
      k.a = alpha;
      break;
    }
    case OpKind::Neg:
      shape = selfShape();
      scratch_->ins.push_back(operandOf(call.arg("self"), shape));
      k.compute = Compute::Neg;
      break;
    case OpKind::Sum:
    case OpKind::Mean: return compileReduction(call);
    case OpKind::Copy:
    case OpKind::Clone:
    case OpKind::Fill:
    case OpKind::Zero:
    case OpKind::FactoryLike: {
      shape = selfShape();
      if (kind == OpKind::Copy) scratch_->ins.push_back(operandOf(call.arg("src"), shape));
      else if (kind == OpKind::Clone) scratch_->ins.push_back(operandOf(call.arg("self"), shape));
      else if (kind == OpKind::Fill) scratch_->ins.push_back(operandOf(call.arg("value"), shape));
      else if (kind == OpKind::Zero) scratch_->ins.push_back(operandOf(CValue{}, shape));
      else scratch_->ins.push_back(factoryFill(call, shape));
      k.compute = Compute::Copy;
      break;
    }
    case OpKind::Factory: {
      shape = asIntList(call.arg("size"), "size");
      scratch_->ins.push_back(factoryFill(call, shape));
      k.compute = Compute::Copy;
      break;
    }
    case OpKind::Arange: {
      const CValue* startArg = call.find("start");
      std::int64_t start = startArg ? asInt(*startArg, "start") : 0;
      std::int64_t end = asInt(call.arg("end"), "end");
      const CValue* stepArg = call.find("step");
      std::int64_t step = stepArg ? asInt(*stepArg, "step") : 1;
      if (step == 0) fail("arange: step 0");
      std::int64_t n = step > 0 ? (end - start + step - 1) / step : (start - end - step - 1) / -step;
      shape = {std::max<std::int64_t>(n, 0)};
      k.compute = Compute::Arange;
      k.a = static_cast<std::uint64_t>(start);
      k.b = static_cast<std::uint64_t>(step);
      break;
    }
    case OpKind::Where: {
      const CValue &c = call.arg("condition"), &a = call.arg("self"), &b = call.arg("other");
      shape = broadcastShapes(broadcastShapes(shapeOf(c), shapeOf(a)), shapeOf(b));
      scratch_->ins.push_back(operandOf(c, shape));
      scratch_->ins.push_back(operandOf(a, shape));
      scratch_->ins.push_back(operandOf(b, shape));
      k.compute = Compute::Where;
      break;
    }
    case OpKind::MaskedFill: {
      const CValue &self = call.arg("self"), &mask = call.arg("mask");
      shape = inplace ? selfShape() : broadcastShapes(shapeOf(self), shapeOf(mask));
      scratch_->ins.push_back(operandOf(self, shape));
      scratch_->ins.push_back(operandOf(mask, shape));
      scratch_->ins.push_back(operandOf(call.arg("value"), shape));
      k.compute = Compute::MaskedFill;
      break;
    }
    case OpKind::IndexPut:
    case OpKind::IndexTensor: return compileAdvancedIndex(call);
    case OpKind::IndexCopy:
    case OpKind::IndexAdd:
    case OpKind::IndexSelect: return compileIndexDim(call);
    case OpKind::Scatter:
    case OpKind::ScatterAdd: return compileScatter(call);
    case OpKind::SliceScatter:
    case OpKind::SelectScatter:
    case OpKind::Cat:
    case OpKind::Stack: return compileAssemble(call);
    default: fail("internal: kernel not handled");
  }
  return finishSingle(call, k, shape);
}

Operand ElementCompiler::factoryFill(const Call& call, const Shape& shape) {
  std::string_view name = call.info.schema->name;
  CValue value;
  value.kind = CValue::Kind::Int;
  if (name.starts_with("ones")) value.i = 1;
  else if (name.starts_with("full")) value = call.arg("fill_value");
  return operandOf(value, shape);
}

CValue ElementCompiler::finishSingle(const Call& call, const Step& k, const Shape& shape) {
  Span dest{};
  CValue result = destinationFor(call, shape, dest);
  std::size_t n = static_cast<std::size_t>(numelOf(shape));
  emitKernel(k, dest, n);
  // F: an `out=` argument is rebound to the result (an in-place-kind op's self is not).
  const Schema& s = *call.info.schema;
  if (valueModel_ && !s.returns.empty())
    for (std::size_t a = 0; a < s.arguments.size(); ++a)
      if (s.arguments[a].type.isWrite() && sameAliasSet(s.returns[0].type, s.arguments[a].type) &&
          rebindsWrittenArgument(s, a))
        rebind(call, a, 0, false, result);
  shareAlloc(call, result);
  return result;
}

CValue ElementCompiler::compileReduction(const Call& call) {
  const Layout& self = tensorArg(call.arg("self"), "self");
  const std::size_t rank = self.sizes.size();
  std::vector<bool> reduce(rank, true);
  bool keepdim = false;
  if (call.has("dim")) {
    const CValue& dims = call.arg("dim");
    if (!dims.isNone() && !(dims.kind == CValue::Kind::List && dims.itemsCount == 0)) {
      reduce.assign(rank, false);
      // A 0-d tensor takes dim 0 or -1 and reduces nothing (as core's shape rule says).
      for (std::int64_t d : asIntList(dims, "dim")) {
        const std::size_t u = static_cast<std::size_t>(normDim(d, rank));
        if (rank > 0) reduce[u] = true;
      }
    }
    if (const CValue* keep = call.find("keepdim")) keepdim = asInt(*keep, "keepdim") != 0;
  }
  Shape shape;
  for (std::size_t d = 0; d < rank; ++d) {
    if (!reduce[d]) shape.push_back(self.sizes[d]);
    else if (keepdim) shape.push_back(1);
  }
  // Static map: input element (row-major) -> output element.
  Shape outStrides(rank, 0);
  {
    std::int64_t stride = 1;
    for (std::size_t d = rank; d-- > 0;)
      if (!reduce[d]) outStrides[d] = stride, stride *= self.sizes[d];
  }
  std::int64_t n = numelOf(self.sizes);
  charge(static_cast<std::size_t>(n));
  const std::uint32_t mapAt = newTable(static_cast<std::size_t>(n));
  Shape idx(rank, 0);
  for (std::int64_t e = 0; e < n; ++e) {
    std::int64_t o = 0;
    for (std::size_t d = 0; d < rank; ++d) o += idx[d] * outStrides[d];
    out_.offsets[mapAt + static_cast<std::size_t>(e)] = static_cast<std::uint32_t>(o);
    advanceRowMajor(idx, self.sizes);
  }
  std::int64_t outN = numelOf(shape);
  std::int64_t count = outN == 0 ? 0 : n / std::max<std::int64_t>(outN, 1);
  scratch_->ins.clear();
  scratch_->ins.push_back(operandOwnShape(call.arg("self"), "self"));
  Step k{};
  k.compute = Compute::Reduce;
  k.mapA = mapAt;
  k.mapCount = static_cast<std::uint32_t>(n);
  k.flag = call.info.kind == OpKind::Mean;
  k.a = static_cast<std::uint64_t>(count);
  return finishSingle(call, k, shape);
}

CValue ElementCompiler::compileAdvancedIndex(const Call& call) {
  const Layout& self = tensorArg(call.arg("self"), "self");
  const Shape& S = self.sizes;
  const CValue& indices = call.arg("indices");
  if (indices.kind != CValue::Kind::List) fail("index: indices must be a list");
  // Read before finishSingle, the first step here that may make a list (shareAlloc).
  const std::span<const CValue> indexItems = itemsOf(indices);
  if (indexItems.size() > S.size()) fail("index: too many indices");
  // Per-dimension lists are held inline (at most a rank's worth: S and R are Shapes).
  std::array<std::size_t, Shape::kMaxRank> indexedDims{};  // the dims with an index tensor
  std::size_t indexedCount = 0;
  Shape I;
  for (std::size_t j = 0; j < indexItems.size(); ++j) {
    if (indexItems[j].isNone()) continue;
    const Layout& ix = tensorArg(indexItems[j], "index");
    indexedDims[indexedCount++] = j;
    I = indexedCount == 1 ? ix.sizes : broadcastShapes(I, ix.sizes);
  }
  if (indexedCount == 0) fail("index: no index tensors");
  const std::span<const std::size_t> indexed(indexedDims.data(), indexedCount);
  const bool adjacent = indexed.back() - indexed.front() + 1 == indexed.size();
  // Result shape R and, for each position of R, the static part of the self offset and the
  // position in I.
  Shape R;
  std::array<int, Shape::kMaxRank> dimRole{};  // per R dim: -1 I dims (placed once), else the self dim
  std::array<bool, Shape::kMaxRank> isIndexed{};
  for (std::size_t j : indexed) isIndexed[j] = true;
  auto pushI = [&] {
    for (std::int64_t s : I) R.push_back(s), dimRole[R.size() - 1] = -1;  // R throws past kMaxRank
  };
  if (!adjacent) pushI();
  for (std::size_t d = 0; d < S.size(); ++d) {
    if (isIndexed[d]) {
      if (adjacent && d == indexed.front()) pushI();
      continue;
    }
    R.push_back(S[d]);
    dimRole[R.size() - 1] = static_cast<int>(d);
  }
  Shape cs = contiguousStrides(S);
  std::int64_t nR = numelOf(R);
  // PyTorch raises on an index into an empty dimension; there is no element to take.
  for (std::size_t j : indexed)
    if (S[j] == 0 && nR > 0) fail("index: indexing a dimension of size 0");
  charge(static_cast<std::size_t>(2 * nR));
  const std::uint32_t baseAt = newTable(static_cast<std::size_t>(nR));
  const std::uint32_t iAt = newTable(static_cast<std::size_t>(nR));
  Shape Istrides = contiguousStrides(I);
  Shape idx(R.size(), 0);
  for (std::int64_t e = 0; e < nR; ++e) {
    std::int64_t base = 0, ip = 0;
    std::size_t iDim = 0;
    for (std::size_t r = 0; r < R.size(); ++r) {
      if (dimRole[r] < 0) ip += idx[r] * Istrides[iDim++];
      else base += idx[r] * cs[static_cast<std::size_t>(dimRole[r])];
    }
    out_.offsets[baseAt + static_cast<std::size_t>(e)] = static_cast<std::uint32_t>(base);
    out_.offsets[iAt + static_cast<std::size_t>(e)] = static_cast<std::uint32_t>(ip);
    advanceRowMajor(idx, R);
  }
  scratch_->ins.clear();
  scratch_->ins.push_back(operandOwnShape(call.arg("self"), "self"));
  Step k{};
  k.mapA = baseAt;
  k.mapB = iAt;
  k.mapCount = static_cast<std::uint32_t>(nR);
  k.listAt = static_cast<std::uint32_t>(out_.ints.size());  // (size, contiguous stride) per index
  k.listCount = static_cast<std::uint32_t>(indexed.size());
  for (std::size_t j : indexed) {
    scratch_->ins.push_back(operandOf(indexItems[j], I));
    out_.ints.push_back(S[j]);
    out_.ints.push_back(cs[j]);
  }
  if (call.info.kind == OpKind::IndexTensor) {
    k.compute = Compute::IndexTensor;
    return finishSingle(call, k, R);
  }
  scratch_->ins.push_back(operandOf(call.arg("values"), R));
  k.compute = Compute::IndexPut;
  k.flag = asInt(call.arg("accumulate"), "accumulate") != 0;
  k.valuesAt = static_cast<std::uint32_t>(scratch_->ins.size() - 1);
  return finishSingle(call, k, S);
}

CValue ElementCompiler::compileIndexDim(const Call& call) {
  const OpKind kind = call.info.kind;
  const Layout& self = tensorArg(call.arg("self"), "self");
  const Shape& S = self.sizes;
  const std::size_t d = static_cast<std::size_t>(normDim(asInt(call.arg("dim"), "dim"), S.size()));
  const Layout& index = tensorArg(call.arg("index"), "index");
  if (index.sizes.size() > 1) fail("index along a dim: index must be 0-d or 1-d");
  const std::int64_t L = numelOf(index.sizes);
  const std::int64_t dimSize = S.empty() ? 1 : S[d];
  Shape iterShape = S;  // the source (copy/add) or result (select) shape
  if (!S.empty()) iterShape[d] = L;
  Shape cs = contiguousStrides(S);
  const std::int64_t dimStride = S.empty() ? 1 : cs[d];
  std::int64_t n = numelOf(iterShape);
  if (dimSize == 0 && n > 0) fail("index along a dim: the dimension has size 0");
  charge(static_cast<std::size_t>(2 * n));
  const std::uint32_t baseAt = newTable(static_cast<std::size_t>(n));
  const std::uint32_t coordAt = newTable(static_cast<std::size_t>(n));
  Shape idx(iterShape.size(), 0);
  for (std::int64_t e = 0; e < n; ++e) {
    std::int64_t base = 0;
    for (std::size_t j = 0; j < iterShape.size(); ++j)
      if (j != d) base += idx[j] * cs[j];
    out_.offsets[baseAt + static_cast<std::size_t>(e)] = static_cast<std::uint32_t>(base);
    out_.offsets[coordAt + static_cast<std::size_t>(e)] = static_cast<std::uint32_t>(iterShape.empty() ? 0 : idx[d]);
    advanceRowMajor(idx, iterShape);
  }
  scratch_->ins.clear();
  scratch_->ins.push_back(operandOwnShape(call.arg("self"), "self"));
  scratch_->ins.push_back(operandOwnShape(call.arg("index"), "index"));
  Step k{};
  k.mapA = baseAt;
  k.mapB = coordAt;
  k.mapCount = static_cast<std::uint32_t>(n);
  k.dimSize = dimSize;
  k.dimStride = dimStride;
  if (kind == OpKind::IndexSelect) {
    k.compute = Compute::IndexSelect;
    return finishSingle(call, k, iterShape);
  }
  const CValue& source = call.arg("source");
  if (shapeOf(source) != iterShape) fail("index_copy/index_add: source shape mismatch");
  scratch_->ins.push_back(operandOf(source, iterShape));
  k.compute = Compute::IndexCopyAdd;
  k.flag = kind == OpKind::IndexAdd;
  k.a = k.flag && call.has("alpha") ? asScalar(call.arg("alpha")) : 1;
  return finishSingle(call, k, S);
}

CValue ElementCompiler::compileScatter(const Call& call) {
  const Layout& self = tensorArg(call.arg("self"), "self");
  const Shape& S = self.sizes;
  const std::size_t d = static_cast<std::size_t>(normDim(asInt(call.arg("dim"), "dim"), S.size()));
  const Layout& index = tensorArg(call.arg("index"), "index");
  const Shape& X = index.sizes;
  if (X.size() != S.size() && !(X.empty() && S.empty())) fail("scatter: index rank differs from self's");
  const CValue& src = call.has("src") ? call.arg("src") : call.arg("value");
  const Shape srcShape = shapeOf(src);
  for (std::size_t j = 0; j < X.size(); ++j) {
    if (j != d && X[j] > S[j]) fail("scatter: index larger than self");
    if (src.isTensor() && (srcShape.size() != X.size() || X[j] > srcShape[j])) fail("scatter: index larger than src");
  }
  Shape cs = contiguousStrides(S);
  Shape srcStrides = contiguousStrides(srcShape);
  const std::int64_t dimSize = S.empty() ? 1 : S[d], dimStride = S.empty() ? 1 : cs[d];
  std::int64_t n = numelOf(X);
  if (dimSize == 0 && n > 0) fail("scatter: the dimension has size 0");
  charge(static_cast<std::size_t>(2 * n));
  const std::uint32_t baseAt = newTable(static_cast<std::size_t>(n));
  const std::uint32_t srcAt = newTable(static_cast<std::size_t>(n));
  Shape idx(X.size(), 0);
  for (std::int64_t e = 0; e < n; ++e) {
    std::int64_t base = 0, sp = 0;
    for (std::size_t j = 0; j < X.size(); ++j) {
      if (j != d) base += idx[j] * cs[j];
      if (src.isTensor()) sp += idx[j] * srcStrides[j];
    }
    out_.offsets[baseAt + static_cast<std::size_t>(e)] = static_cast<std::uint32_t>(base);
    out_.offsets[srcAt + static_cast<std::size_t>(e)] = static_cast<std::uint32_t>(sp);
    advanceRowMajor(idx, X);
  }
  scratch_->ins.clear();
  scratch_->ins.push_back(operandOwnShape(call.arg("self"), "self"));
  scratch_->ins.push_back(operandOwnShape(call.arg("index"), "index"));
  const bool isConst = !src.isTensor();
  if (isConst) {
    Operand c{};
    c.isConstant = true;
    c.constant = asScalar(src);
    c.count = 1;
    scratch_->ins.push_back(c);
  } else {
    scratch_->ins.push_back(operandOwnShape(src, "src"));
  }
  Step k{};
  k.compute = Compute::Scatter;
  k.mapA = baseAt;
  k.mapB = srcAt;
  k.mapCount = static_cast<std::uint32_t>(n);
  k.dimSize = dimSize;
  k.dimStride = dimStride;
  k.flag = call.info.kind == OpKind::ScatterAdd;
  k.flag2 = isConst;
  return finishSingle(call, k, S);
}

CValue ElementCompiler::compileAssemble(const Call& call) {
  const OpKind kind = call.info.kind;
  Shape shape;
  std::vector<const CValue*> pieces;
  std::vector<Layout> placements;  // where each piece goes, as a layout over a contiguous output
  bool startFromSelf = false;
  if (kind == OpKind::SliceScatter || kind == OpKind::SelectScatter) {
    const Layout& self = tensorArg(call.arg("self"), "self");
    shape = self.sizes;
    startFromSelf = true;
    Layout out;
    out.sizes = shape;
    out.strides = contiguousStrides(shape);
    // Reuse the view rules on a contiguous layout of the output.
    Call viewCall = call;
    viewCall.info.kind = kind == OpKind::SliceScatter ? OpKind::Slice : OpKind::Select;
    CValue outValue;
    outValue.kind = CValue::Kind::Tensor;
    outValue.t = out;
    std::size_t selfAt = *call.info.schema->argumentIndex("self");
    viewCall.args[selfAt] = &outValue;
    bool needsCopy = false;
    Layout place = viewLayout(viewCall, needsCopy);
    const CValue& src = call.arg("src");
    if (shapeOf(src) != place.sizes) fail(call.node.target + ": src shape differs from the slice");
    pieces.push_back(&src);
    placements.push_back(place);
  } else {
    const CValue& tensors = call.arg("tensors");
    if (tensors.kind != CValue::Kind::List || tensors.itemsCount == 0) fail("cat/stack: empty tensor list");
    std::vector<const CValue*> list;  // into lists_: read before finishSingle (see compileAdvancedIndex)
    for (const CValue& t : itemsOf(tensors)) {
      tensorArg(t, "tensors");
      // cat skips legacy empty 1-d tensors.
      if (kind == OpKind::Cat && t.t.sizes.size() == 1 && t.t.sizes[0] == 0 && tensors.itemsCount > 1) continue;
      list.push_back(&t);
    }
    if (list.empty()) list.push_back(&itemsOf(tensors)[0]);
    const Shape& first = list[0]->t.sizes;
    if (kind == OpKind::Stack) {
      std::size_t d = static_cast<std::size_t>(normDim(asInt(call.arg("dim"), "dim"), first.size() + 1));
      shape = first;
      shape.insert(shape.begin() + static_cast<std::ptrdiff_t>(d), static_cast<std::int64_t>(list.size()));
      Shape strides = contiguousStrides(shape);
      for (std::size_t i = 0; i < list.size(); ++i) {
        if (list[i]->t.sizes != first) fail("stack: shapes differ");
        Layout place;
        place.offset = static_cast<std::int64_t>(i) * strides[d];
        place.sizes = first;
        place.strides = strides;
        place.strides.erase(place.strides.begin() + static_cast<std::ptrdiff_t>(d));
        pieces.push_back(list[i]);
        placements.push_back(place);
      }
    } else {
      std::size_t d = static_cast<std::size_t>(normDim(asInt(call.arg("dim"), "dim"), first.size()));
      if (first.empty()) fail("cat of 0-d tensors");
      shape = first;
      shape[d] = 0;
      for (const CValue* t : list) {
        if (t->t.sizes.size() != first.size()) fail("cat: ranks differ");
        for (std::size_t j = 0; j < first.size(); ++j)
          if (j != d && t->t.sizes[j] != first[j]) fail("cat: shapes differ");
        shape[d] += t->t.sizes[d];
      }
      Shape strides = contiguousStrides(shape);
      std::int64_t at = 0;
      for (const CValue* t : list) {
        Layout place;
        place.offset = at * strides[d];
        place.sizes = t->t.sizes;
        place.strides = strides;
        pieces.push_back(t);
        placements.push_back(place);
        at += t->t.sizes[d];
      }
    }
  }
  // Piece positions relative to the output, as position lists in the offset pool.
  Step k{};
  k.compute = Compute::Assemble;
  k.flag = startFromSelf;
  std::vector<Span> maps;
  maps.reserve(placements.size());
  for (const Layout& place : placements) maps.push_back(relativeOffsets(place, numelOf(shape)));
  k.listAt = static_cast<std::uint32_t>(out_.spans.size());
  k.listCount = static_cast<std::uint32_t>(maps.size());
  out_.spans.insert(out_.spans.end(), maps.begin(), maps.end());
  scratch_->ins.clear();
  if (startFromSelf) scratch_->ins.push_back(operandOwnShape(call.arg("self"), "self"));
  for (const CValue* p : pieces) scratch_->ins.push_back(operandOwnShape(*p, "piece"));
  return finishSingle(call, k, shape);
}

Span ElementCompiler::relativeOffsets(const Layout& l, std::int64_t total) {
  std::int64_t n = numelOf(l.sizes);
  charge(static_cast<std::size_t>(n));
  Span span{};
  span.listed = true;
  span.count = static_cast<std::uint32_t>(n);
  span.at = newTable(static_cast<std::size_t>(n));
  Shape idx(l.sizes.size(), 0);
  for (std::int64_t e = 0; e < n; ++e) {
    std::int64_t pos = l.offset;
    for (std::size_t d = 0; d < idx.size(); ++d) pos += idx[d] * l.strides[d];
    if (pos < 0 || pos >= total) fail("internal: piece outside the output");
    out_.offsets[span.at + static_cast<std::size_t>(e)] = static_cast<std::uint32_t>(pos);
    advanceRowMajor(idx, l.sizes);
  }
  return span;
}

CValue ElementCompiler::compileForeach(const Call& call) {
  const OpKind kind = call.info.kind;
  const CValue& self = call.arg("self");
  if (self.kind != CValue::Kind::List) fail("foreach: self must be a list");
  const bool hasList = call.has("other");
  const CValue* other = hasList ? &call.arg("other") : &call.arg("scalar");
  if (hasList && (other->kind != CValue::Kind::List || other->itemsCount != self.itemsCount))
    fail("foreach: list lengths differ");
  const CValue* alphaArg = call.find("alpha");
  const std::uint64_t alpha = alphaArg ? asScalar(*alphaArg) : 1;
  const bool writes = call.info.inplace;
  std::vector<CValue> results;  // made a list at the end: the loop reads lists
  for (std::size_t j = 0; j < self.itemsCount; ++j) {
    const CValue& item = itemsOf(self)[j];
    const CValue& otherItem = hasList ? itemsOf(*other)[j] : *other;
    const Layout& a = tensorArg(item, "self");
    Shape shape = writes ? a.sizes : broadcastShapes(a.sizes, shapeOf(otherItem));
    scratch_->ins.clear();
    scratch_->ins.push_back(operandOf(item, shape));
    scratch_->ins.push_back(operandOf(otherItem, shape));
    Span dest{};
    if (writes && !valueModel_) dest = spanOf(a);
    else {
      CValue v;
      v.kind = CValue::Kind::Tensor;
      fresh(shape, v.t);
      dest = spanOf(v.t);
      // `-> ()` under F: each element's new version replaces the list element's node.
      if (writes) rebind(call, *call.info.schema->argumentIndex("self"), j, true, v);
      else results.push_back(v);
    }
    Step k{};
    k.compute = kind == OpKind::ForeachAdd ? Compute::Add : kind == OpKind::ForeachSub ? Compute::Sub : Compute::Mul;
    k.a = alpha;
    emitKernel(k, dest, dest.count);
  }
  if (writes) return {};
  return makeList(results);
}

}  // namespace wb::oracle::detail
