// gen/emit_compute.cpp: the op families that compute a fresh value and write nothing: binary
// (broadcasting, or with a scalar as export prints it), unary, scalar, reduce, matmul,
// cat/stack and index_select. An emitter returns false when no operand fits.
#include <array>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gen/session.h"

namespace wb::gen::detail {

bool Session::emitBinary() {
  std::size_t a = anyValue();
  const TensorType ta = vals_[a].type;
  static const std::vector<std::string> kInt = {"aten::add.Tensor", "aten::sub.Tensor", "aten::mul.Tensor"};
  static const std::vector<std::string> kFloat = {"aten::add.Tensor", "aten::sub.Tensor", "aten::mul.Tensor",
                                                  "aten::div.Tensor"};
  const std::string& target = ch_.element(ta.dtype == "f32" ? kFloat : kInt);
  if (realistic() && ch_.flip(0.2)) {  // export prints `add.Tensor(x, 1)` for tensor-scalar ops
    std::string n = pb_.call(target, {ref(a), Arg::ofInt(ch_.pick(1, 3))}, {}, ta);
    fresh(n, ta);
    return true;
  }
  std::size_t b = broadcastPartner(a);
  if (ch_.flip(0.5)) std::swap(a, b);
  const TensorType type = tensorType(ta.dtype, *broadcastDims(vals_[a].dims, vals_[b].dims));
  fresh(pb_.call(target, {ref(a), ref(b)}, {}, type), type);
  return true;
}

bool Session::emitUnary() {
  std::size_t a = anyValue();
  const TensorType t = vals_[a].type;
  std::array<std::string_view, 6> targets = {"aten::relu", "aten::clone"};
  std::size_t count = 2;
  if (t.dtype == "f32")
    for (std::string_view f : {"aten::sigmoid", "aten::gelu", "aten::silu"}) targets[count++] = f;
  if (realistic()) targets[count++] = "dim_order_ops::_clone_dim_order";
  fresh(pb_.call(std::string(targets[ch_.index(count)]), {ref(a)}, {}, t), t);
  return true;
}

bool Session::emitScalar() {
  std::size_t a = anyValue();
  const TensorType t = vals_[a].type;
  const bool isFloat = t.dtype == "f32";
  switch (ch_.pick(0, isFloat ? 2 : 1)) {
    case 0: fresh(pb_.call("aten::mul.Scalar", {ref(a), Arg::ofInt(ch_.pick(2, 3))}, {}, t), t); break;
    case 1: fresh(pb_.call("aten::sub.Scalar", {ref(a), Arg::ofInt(1)}, {}, t), t); break;
    default: fresh(pb_.call("aten::div.Scalar", {ref(a), Arg::ofFloat(2.0)}, {}, t), t); break;
  }
  return true;
}

bool Session::emitReduce() {
  auto a = choose([](const Val& v) { return !v.dims.empty(); });
  if (!a) return false;
  const TensorType t = vals_[*a].type;
  Dims dims = vals_[*a].dims;
  const std::int64_t d = ch_.pick(0, static_cast<std::int64_t>(dims.size()) - 1);
  const std::array<int, 3> w = {3, 2, t.dtype == "f32" ? 2 : 0};
  switch (ch_.weighted(w)) {
    case 0: {
      const bool keepdim = ch_.flip(0.5);
      if (keepdim) dims[static_cast<std::size_t>(d)] = 1;
      else dims.erase(dims.begin() + d);
      const TensorType r = tensorType(t.dtype, dims);
      fresh(pb_.call("aten::sum.dim_IntList", {ref(*a), intList({d}), Arg::ofBool(keepdim)}, {}, r), r);
      break;
    }
    case 1: fresh(pb_.call("aten::cumsum", {ref(*a), Arg::ofInt(d)}, {}, t), t); break;
    default:
      fresh(pb_.call("aten::_softmax", {ref(*a), Arg::ofInt(d), Arg::ofBool(false)}, {}, t), t);
      break;
  }
  return true;
}

bool Session::emitMatmul() {
  auto a = choose([](const Val& v) { return v.type.dtype == "f32" && (v.dims.size() == 2 || v.dims.size() == 3); });
  if (!a) return false;
  const Dims da = vals_[*a].dims;
  const std::int64_t n = ch_.pick(1, 4);
  Dims db = da, dr = da;
  db[db.size() - 2] = da.back();
  db.back() = n;
  dr.back() = n;
  if (numelOf(db) > cap() || numelOf(dr) > cap()) return false;
  std::size_t b = valueOfType(tensorType("f32", db));
  const TensorType r = tensorType("f32", dr);
  fresh(pb_.call(da.size() == 2 ? "aten::mm" : "aten::bmm", {ref(*a), ref(b)}, {}, r), r);
  return true;
}

bool Session::emitCat() {
  auto a = choose([](const Val& v) { return !v.dims.empty(); });
  if (!a) return false;
  const Val first = vals_[*a];
  if (ch_.flip(0.3)) {  // stack: same shapes, one new dimension
    if (static_cast<int>(first.dims.size()) >= 4 || 2 * numelOf(first.dims) > cap()) return false;
    std::size_t b = valueOfType(first.type);
    const std::int64_t d = ch_.pick(0, static_cast<std::int64_t>(first.dims.size()));
    Dims dr = first.dims;
    dr.insert(dr.begin() + d, 2);
    const TensorType r = tensorType(first.type.dtype, dr);
    fresh(pb_.call("aten::stack", {pb_.refList({first.name, vals_[b].name}), Arg::ofInt(d)}, {}, r), r);
    return true;
  }
  const auto d = static_cast<std::size_t>(ch_.pick(0, static_cast<std::int64_t>(first.dims.size()) - 1));
  auto fits = [&](const Val& v) {
    if (v.type.dtype != first.type.dtype || v.dims.size() != first.dims.size()) return false;
    for (std::size_t i = 0; i < v.dims.size(); ++i)
      if (i != d && v.dims[i] != first.dims[i]) return false;
    return true;
  };
  std::vector<std::string> parts = {first.name};
  Dims dr = first.dims;
  const std::int64_t extra = ch_.pick(1, 2);
  for (std::int64_t i = 0; i < extra; ++i) {
    auto b = choose(fits);
    if (!b) b = valueOfType(first.type);
    Dims grown = dr;
    grown[d] += vals_[*b].dims[d];
    if (numelOf(grown) > cap()) break;
    dr = grown;
    parts.push_back(vals_[*b].name);
  }
  if (parts.size() < 2) return false;
  const TensorType r = tensorType(first.type.dtype, dr);
  fresh(pb_.call("aten::cat", {pb_.refList(parts), Arg::ofInt(static_cast<std::int64_t>(d))}, {}, r), r);
  return true;
}

bool Session::emitIndexSelect() {
  auto a = choose([](const Val& v) { return !v.dims.empty(); });
  if (!a) return false;
  Dims dims = vals_[*a].dims;
  const std::string dtype = vals_[*a].type.dtype;
  const auto d = static_cast<std::size_t>(ch_.pick(0, static_cast<std::int64_t>(dims.size()) - 1));
  const std::int64_t k = ch_.pick(1, 3);
  dims[d] = k;
  if (numelOf(dims) > cap()) return false;
  const std::string self = vals_[*a].name;
  std::size_t idx = indexTensor(k);
  const TensorType r = tensorType(dtype, dims);
  fresh(pb_.call("aten::index_select", {pb_.ref(self), Arg::ofInt(static_cast<std::int64_t>(d)), ref(idx)}, {}, r), r);
  return true;
}

}  // namespace wb::gen::detail
