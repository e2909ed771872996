// oracle/element/views.cpp: the compilation of views: each view kind's layout over its
// base's storage, and where a view is a copy instead (a `*_copy` variant in the copy-views
// mode, every view under F), a copy into fresh storage.
#include "core/shape_rules.h"
#include "oracle/element/compiler.h"

namespace wb::oracle::detail {

Layout ElementCompiler::viewLayout(const Call& call, bool& needsCopy) {
  const OpKind kind = call.info.kind;
  const Layout& self = tensorArg(call.arg("self"), "self");
  Layout l = self;
  std::size_t rank = self.sizes.size();
  switch (kind) {
    case OpKind::Select: {
      std::size_t d = static_cast<std::size_t>(normDim(asInt(call.arg("dim"), "dim"), rank));
      if (rank == 0) fail("select on a 0-d tensor");
      std::int64_t i = asInt(call.arg("index"), "index");
      if (i < 0) i += self.sizes[d];
      if (i < 0 || i >= self.sizes[d]) fail("select index out of range");
      l.offset += i * self.strides[d];
      l.sizes.erase(l.sizes.begin() + static_cast<std::ptrdiff_t>(d));
      l.strides.erase(l.strides.begin() + static_cast<std::ptrdiff_t>(d));
      return l;
    }
    case OpKind::Slice:
    case OpKind::Narrow: {
      std::size_t d = static_cast<std::size_t>(normDim(asInt(call.arg("dim"), "dim"), rank));
      if (rank == 0) fail("slice of a 0-d tensor");
      std::int64_t size = self.sizes[d], start, end, step = 1;
      if (kind == OpKind::Narrow) {
        start = asInt(call.arg("start"), "start");
        if (start < 0) start += size;
        end = start + asInt(call.arg("length"), "length");
        if (start < 0 || end > size || end < start) fail("narrow out of range");
      } else {
        step = asInt(call.arg("step"), "step");
        if (step <= 0) fail("slice step must be positive");
        const SliceBounds bounds = sliceBounds(size, asOptInt(call.arg("start"), "start"), asOptInt(call.arg("end"), "end"), step);
        start = bounds.start;
        end = start + bounds.length * step;
      }
      l.offset += start * self.strides[d];
      l.sizes[d] = (end - start + step - 1) / step;
      l.strides[d] *= step;
      return l;
    }
    case OpKind::Expand: return expandTo(self, asIntList(call.arg("size"), "size"));
    case OpKind::ExpandAs: return expandTo(self, tensorArg(call.arg("other"), "other").sizes);
    case OpKind::Transpose:
    case OpKind::T: {
      if (kind == OpKind::T && rank < 2) return l;
      std::size_t a = kind == OpKind::T ? 0 : static_cast<std::size_t>(normDim(asInt(call.arg("dim0"), "dim0"), rank));
      std::size_t b = kind == OpKind::T ? 1 : static_cast<std::size_t>(normDim(asInt(call.arg("dim1"), "dim1"), rank));
      if (rank == 0) return l;
      std::swap(l.sizes[a], l.sizes[b]);
      std::swap(l.strides[a], l.strides[b]);
      return l;
    }
    case OpKind::Permute: {
      Shape dims = asIntList(call.arg("dims"), "dims");
      if (dims.size() != rank) fail("permute: wrong number of dims");
      std::vector<bool> seen(rank, false);
      for (std::size_t i = 0; i < rank; ++i) {
        std::size_t d = static_cast<std::size_t>(normDim(dims[i], rank));
        if (seen[d]) fail("permute: repeated dim");
        seen[d] = true;
        l.sizes[i] = self.sizes[d];
        l.strides[i] = self.strides[d];
      }
      return l;
    }
    case OpKind::Unsqueeze: {
      std::int64_t d = asInt(call.arg("dim"), "dim");
      std::int64_t r = static_cast<std::int64_t>(rank);
      if (d < -r - 1 || d > r) fail("unsqueeze: dim out of range");
      if (d < 0) d += r + 1;
      std::size_t u = static_cast<std::size_t>(d);
      std::int64_t stride = u < rank ? self.sizes[u] * self.strides[u] : 1;
      l.sizes.insert(l.sizes.begin() + d, 1);
      l.strides.insert(l.strides.begin() + d, stride);
      return l;
    }
    case OpKind::Squeeze: {
      std::vector<bool> drop(rank, false);
      if (call.has("dim")) {
        for (std::int64_t d : asIntList(call.arg("dim"), "dim")) {
          if (rank == 0) break;
          std::size_t u = static_cast<std::size_t>(normDim(d, rank));
          drop[u] = self.sizes[u] == 1;
        }
      } else {
        for (std::size_t u = 0; u < rank; ++u) drop[u] = self.sizes[u] == 1;
      }
      l.sizes.clear();
      l.strides.clear();
      for (std::size_t u = 0; u < rank; ++u)
        if (!drop[u]) l.sizes.push_back(self.sizes[u]), l.strides.push_back(self.strides[u]);
      return l;
    }
    case OpKind::View:
    case OpKind::ViewAs: {
      Shape target = kind == OpKind::ViewAs ? tensorArg(call.arg("other"), "other").sizes
                                            : asIntList(call.has("size") ? call.arg("size") : call.arg("shape"), "size");
      if (const char* why = inferViewSizes(std::span<std::int64_t>(target.begin(), target.size()), numelOf(self.sizes)))
        fail(std::string("view: ") + why);
      if (!isContiguous(self)) {
        if (call.info.schema->name == "view" && !call.info.copyVariant) fail("view of a non-contiguous tensor");
        needsCopy = true;  // reshape semantics
      }
      l.sizes = target;
      l.strides = contiguousStrides(target);
      return l;
    }
    case OpKind::Diagonal: {
      std::int64_t off = asInt(call.arg("offset"), "offset");
      std::size_t d1 = static_cast<std::size_t>(normDim(asInt(call.arg("dim1"), "dim1"), rank));
      std::size_t d2 = static_cast<std::size_t>(normDim(asInt(call.arg("dim2"), "dim2"), rank));
      if (rank < 2 || d1 == d2) fail("diagonal: bad dims");
      std::int64_t len = off >= 0 ? std::min(self.sizes[d1], self.sizes[d2] - off)
                                  : std::min(self.sizes[d1] + off, self.sizes[d2]);
      len = std::max<std::int64_t>(len, 0);
      if (len > 0) l.offset += off >= 0 ? off * self.strides[d2] : -off * self.strides[d1];
      l.sizes.clear();
      l.strides.clear();
      for (std::size_t u = 0; u < rank; ++u)
        if (u != d1 && u != d2) l.sizes.push_back(self.sizes[u]), l.strides.push_back(self.strides[u]);
      l.sizes.push_back(len);
      l.strides.push_back(self.strides[d1] + self.strides[d2]);
      return l;
    }
    case OpKind::AsStrided: {
      l.sizes = asIntList(call.arg("size"), "size");
      l.strides = asIntList(call.arg("stride"), "stride");
      if (l.sizes.size() != l.strides.size()) fail("as_strided: size and stride differ in rank");
      l.offset = asOptInt(call.arg("storage_offset"), "storage_offset").value_or(self.offset);
      return l;
    }
    case OpKind::Alias: return l;
    case OpKind::Contiguous:
      needsCopy = !isContiguous(self);
      return l;
    default: fail("not a view");
  }
}

std::vector<Layout> ElementCompiler::listViewLayouts(const Call& call) {
  const Layout& self = tensorArg(call.arg("self"), "self");
  std::size_t rank = self.sizes.size();
  std::size_t d = static_cast<std::size_t>(normDim(asInt(call.arg("dim"), "dim"), rank));
  if (rank == 0) fail("split of a 0-d tensor");
  std::int64_t size = self.sizes[d];
  std::vector<Layout> parts;
  if (call.info.kind == OpKind::Unbind) {
    for (std::int64_t i = 0; i < size; ++i) {
      Layout l = self;
      l.offset += i * self.strides[d];
      l.sizes.erase(l.sizes.begin() + static_cast<std::ptrdiff_t>(d));
      l.strides.erase(l.strides.begin() + static_cast<std::ptrdiff_t>(d));
      parts.push_back(l);
    }
    return parts;
  }
  std::vector<std::int64_t> sizes;  // may be longer than a rank
  if (call.info.kind == OpKind::SplitWithSizes) {
    const CValue& list = call.arg("split_sizes");
    if (list.kind == CValue::Kind::List)
      for (const CValue& item : itemsOf(list)) sizes.push_back(asInt(item, "split_sizes"));
    else sizes.push_back(asInt(list, "split_sizes"));
    std::int64_t total = 0;
    for (std::int64_t s : sizes) total += s;
    if (total != size) fail("split_with_sizes: sizes do not add up");
  } else {
    std::int64_t chunk = 0;
    if (call.info.kind == OpKind::Chunk) {
      std::int64_t chunks = asInt(call.arg("chunks"), "chunks");
      if (chunks <= 0) fail("chunk: chunks must be positive");
      chunk = (size + chunks - 1) / chunks;
    } else {
      chunk = asInt(call.arg("split_size"), "split_size");
    }
    if (chunk <= 0 && size > 0) fail("split: size must be positive");
    for (std::int64_t at = 0; at < size; at += chunk) sizes.push_back(std::min(chunk, size - at));
    if (size == 0) sizes.push_back(0);
  }
  std::int64_t at = 0;
  for (std::int64_t s : sizes) {
    Layout l = self;
    l.offset += at * self.strides[d];
    l.sizes[d] = s;
    parts.push_back(l);
    at += s;
  }
  return parts;
}

CValue ElementCompiler::materialize(const Layout& from) {
  CValue v;
  v.kind = CValue::Kind::Tensor;
  fresh(from.sizes, v.t);
  emitCopy(from, v.t);
  return v;
}

bool ElementCompiler::viewIsCopy(const Call& call) const {
  if (valueModel_) return true;
  if (!call.info.copyVariant) return false;
  viewModeSeen_ = true;
  if (options_.viewMode == ViewMode::CopyViews) return true;
  // AliasViews: every copy variant becomes a view, except a view_copy the program returns.
  return call.info.schema->name == "view_copy" && analysis_->nodes[current_].keptViewCopy;
}

CValue ElementCompiler::compileView(const Call& call) {
  const bool copy = viewIsCopy(call);
  if (isListViewKind(call.info.kind)) {
    std::vector<CValue> items;
    for (const Layout& part : listViewLayouts(call)) {
      if (copy) items.push_back(materialize(part));
      else {
        CValue v;
        v.kind = CValue::Kind::Tensor;
        v.t = part;
        items.push_back(v);
      }
    }
    return makeList(items);
  }
  bool needsCopy = false;
  Layout l = viewLayout(call, needsCopy);
  if (needsCopy) {  // reshape of a non-contiguous tensor: a copy in the self's order, then a view
    CValue c = materialize(tensorArg(call.arg("self"), "self"));
    l.storage = c.t.storage;
    l.offset = 0;
    l.strides = contiguousStrides(l.sizes);
    if (call.info.kind == OpKind::Contiguous) return c;
  }
  if (copy) return materialize(l);
  CValue v;
  v.kind = CValue::Kind::Tensor;
  v.t = l;
  return v;
}

CValue ElementCompiler::compileListViewOut(const Call& call) {
  std::vector<Layout> parts = listViewLayouts(call);
  const CValue& out = call.arg("out");
  if (out.kind != CValue::Kind::List || out.itemsCount != parts.size()) fail(call.node.target + ": out list arity");
  for (std::size_t j = 0; j < parts.size(); ++j) {
    const Layout& dst = tensorArg(itemsOf(out)[j], "out");  // the loop makes no list
    if (dst.sizes != parts[j].sizes) fail(call.node.target + ": out shape mismatch");
    if (valueModel_) {  // F: the out list's elements are rebound to copies of the parts
      rebind(call, *call.info.schema->argumentIndex("out"), j, true, materialize(parts[j]));
      continue;
    }
    // A kernel, not a Copy step: the parts may overlap `out`, so read all, then write.
    scratch_->ins.clear();
    Operand in{};
    in.span = spanOf(parts[j]);
    in.count = in.span.count;
    scratch_->ins.push_back(in);
    Step k{};
    k.compute = Compute::Copy;
    Span to = spanOf(dst);
    emitKernel(k, to, to.count);
  }
  return {};
}

}  // namespace wb::oracle::detail
