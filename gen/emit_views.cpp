// gen/emit_views.cpp: the view families: *_copy views and aten views (planned per kind by
// planView), and split/unbind with the getitems FX makes. A view's value keeps its base's
// storage; its writability and contiguity follow from the kind.
#include <algorithm>
#include <array>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "gen/session.h"

namespace wb::gen::detail {

std::optional<Session::ViewPlan> Session::planView(std::string_view kind, const Dims& in, bool contiguous) {
  ViewPlan p;
  p.kind = kind;
  p.out = in;
  const auto rank = static_cast<std::int64_t>(in.size());
  auto pickDim = [&] { return static_cast<std::size_t>(ch_.pick(0, rank - 1)); };
  if (kind == "view") {
    if (!contiguous) return std::nullopt;
    const std::int64_t n = numelOf(in);
    std::vector<Dims> shapes = {{n}, {1, n}};
    for (std::int64_t a = 2; a < n; ++a)
      if (n % a == 0) shapes.push_back({a, n / a});
    p.out = ch_.element(shapes);
    p.args = {intList(p.out)};
  } else if (kind == "slice" || kind == "narrow") {
    if (rank == 0) return std::nullopt;
    const std::size_t d = pickDim();
    const std::int64_t start = ch_.pick(0, in[d] - 1);
    const std::int64_t end = ch_.pick(start + 1, in[d]);
    p.out[d] = end - start;
    p.keepsContiguity = d == 0;
    const auto di = static_cast<std::int64_t>(d);
    p.args = kind == "slice" ? std::vector<Arg>{Arg::ofInt(di), Arg::ofInt(start), Arg::ofInt(end)}
                             : std::vector<Arg>{Arg::ofInt(di), Arg::ofInt(start), Arg::ofInt(end - start)};
  } else if (kind == "select") {
    if (rank == 0) return std::nullopt;
    const std::size_t d = pickDim();
    p.args = {Arg::ofInt(static_cast<std::int64_t>(d)), Arg::ofInt(ch_.pick(0, in[d] - 1))};
    p.out.erase(p.out.begin() + static_cast<std::ptrdiff_t>(d));
    p.keepsContiguity = d == 0;
  } else if (kind == "permute") {
    if (rank < 2) return std::nullopt;
    std::vector<std::int64_t> perm(in.size());
    for (std::size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<std::int64_t>(i);
    for (std::size_t i = perm.size() - 1; i > 0; --i)
      std::swap(perm[i], perm[static_cast<std::size_t>(ch_.pick(0, static_cast<std::int64_t>(i)))]);
    for (std::size_t i = 0; i < perm.size(); ++i) p.out[i] = in[static_cast<std::size_t>(perm[i])];
    p.args = {intList(perm)};
    p.keepsContiguity = false;
  } else if (kind == "transpose") {
    if (rank < 2) return std::nullopt;
    const std::int64_t d0 = ch_.pick(0, rank - 1);
    std::int64_t d1 = ch_.pick(0, rank - 2);
    if (d1 >= d0) ++d1;
    std::swap(p.out[static_cast<std::size_t>(d0)], p.out[static_cast<std::size_t>(d1)]);
    p.args = {Arg::ofInt(d0), Arg::ofInt(d1)};
    p.keepsContiguity = false;
  } else if (kind == "t") {
    if (rank != 2) return std::nullopt;
    std::swap(p.out[0], p.out[1]);
    p.keepsContiguity = false;
  } else if (kind == "unsqueeze") {
    if (rank >= 4) return std::nullopt;
    const std::int64_t d = ch_.pick(0, rank);
    p.out.insert(p.out.begin() + d, 1);
    p.args = {Arg::ofInt(d)};
  } else if (kind == "squeeze") {
    std::vector<std::int64_t> ones;
    for (std::int64_t i = 0; i < rank; ++i)
      if (in[static_cast<std::size_t>(i)] == 1) ones.push_back(i);
    if (ones.empty()) return std::nullopt;
    const std::int64_t d = ch_.element(ones);
    p.out.erase(p.out.begin() + d);
    p.args = {Arg::ofInt(d)};
  } else if (kind == "expand") {
    Dims out = in;
    if (ch_.flip(0.5) && rank < 4) out.insert(out.begin(), ch_.pick(2, 3));
    for (auto& d : out)
      if (d == 1 && ch_.flip(0.6)) d = ch_.pick(2, 4);
    if (out == in || numelOf(out) > cap()) return std::nullopt;
    p.out = out;
    p.args = {intList(out)};
    p.expands = true;
    p.keepsContiguity = false;
  } else if (kind != "alias") {
    return std::nullopt;
  }
  return p;
}

std::string Session::viewTarget(std::string_view kind, bool copy) {
  if (kind == "view") return copy ? "aten::view_copy" : "aten::view";
  if (kind == "slice") return copy ? "aten::slice_copy.Tensor" : "aten::slice.Tensor";
  if (kind == "narrow") return "aten::narrow";
  if (kind == "select") return copy ? "aten::select_copy.int" : "aten::select.int";
  if (kind == "permute") return copy ? "aten::permute_copy" : "aten::permute";
  if (kind == "transpose") return copy ? "aten::transpose_copy.int" : "aten::transpose.int";
  if (kind == "t") return copy ? "aten::t_copy" : "aten::t";
  if (kind == "unsqueeze") return copy ? "aten::unsqueeze_copy" : "aten::unsqueeze";
  if (kind == "squeeze") return copy ? "aten::squeeze_copy.dim" : "aten::squeeze.dim";
  if (kind == "expand") return copy ? "aten::expand_copy" : "aten::expand";
  return copy ? "aten::alias_copy" : "aten::alias";
}

// A base for a view: prefers buffers (views of buffers are the interesting hazards).
std::optional<std::size_t> Session::viewBase() {
  auto ok = [&](const Val& v) { return pol_.viewsOfViews || !v.isView; };
  if (!buffers_.empty() && ch_.flip(0.5)) {
    if (auto b = choose([&](const Val& v) { return ok(v) && isBufferPlaceholder(v.base); })) return b;
  }
  return choose(ok);
}

// Registers the value a view op produced from `baseIndex`.
std::size_t Session::addViewVal(const std::string& name, std::size_t baseIndex, const TensorType& type,
                                bool expands, bool keepsContiguity, bool copy) {
  Val& b = vals_[baseIndex];
  b.hasAliases = true;
  Val v;
  v.name = name;
  v.type = type;
  v.isView = true;
  v.base = b.base;
  v.writable = b.writable && !expands;
  v.contiguous = b.contiguous && keepsContiguity;
  feature(copy ? "copy_view" : "real_view");
  if (b.isView) feature("view_of_view");
  if (isBufferPlaceholder(b.base)) feature("view_of_buffer");
  return addVal(std::move(v));
}

bool Session::emitView(bool copy) {
  auto base = viewBase();
  if (!base) return false;
  static constexpr std::array<std::string_view, 11> kKinds = {"view",      "slice",   "select", "permute",
                                                              "transpose", "t",       "unsqueeze", "squeeze",
                                                              "expand",    "alias",   "narrow"};
  // `narrow` has no *_copy form.
  const std::size_t kinds = copy ? kKinds.size() - 1 : kKinds.size();
  auto plan = planView(kKinds[ch_.index(kinds)], vals_[*base].dims, vals_[*base].contiguous);
  if (!plan) return false;
  const TensorType type = tensorType(vals_[*base].type.dtype, plan->out);
  std::vector<Arg> args = {ref(*base)};
  args.insert(args.end(), plan->args.begin(), plan->args.end());
  const std::string n = pb_.call(viewTarget(plan->kind, copy), std::move(args), {}, type);
  addViewVal(n, *base, type, plan->expands, plan->keepsContiguity, copy);
  return true;
}

bool Session::emitSplit() {
  auto base = viewBase();
  if (!base || vals_[*base].dims.empty()) return false;
  const bool copy = pol_.copyViews && (!pol_.realViews || ch_.flip(0.5));
  const Dims in = vals_[*base].dims;
  const std::string dtype = vals_[*base].type.dtype;
  const auto d = static_cast<std::size_t>(ch_.pick(0, static_cast<std::int64_t>(in.size()) - 1));
  const auto di = static_cast<std::int64_t>(d);
  std::vector<Dims> pieces;
  std::string n;
  if (ch_.flip(0.5)) {  // unbind
    Dims out = in;
    out.erase(out.begin() + di);
    pieces.assign(static_cast<std::size_t>(in[d]), out);
    n = pb_.call(copy ? "aten::unbind_copy.int" : "aten::unbind.int", {ref(*base), Arg::ofInt(di)});
  } else {
    const std::int64_t size = ch_.pick(1, in[d]);
    for (std::int64_t start = 0; start < in[d]; start += size) {
      Dims out = in;
      out[d] = std::min(size, in[d] - start);
      pieces.push_back(out);
    }
    n = pb_.call(copy ? "aten::split_copy.Tensor" : "aten::split.Tensor",
                 {ref(*base), Arg::ofInt(size), Arg::ofInt(di)});
  }
  // FX creates getitems only for the pieces that are used: take one or two of them.
  const std::int64_t uses = std::min<std::int64_t>(static_cast<std::int64_t>(pieces.size()), ch_.pick(1, 2));
  std::set<std::int64_t> taken;
  for (std::int64_t u = 0; u < uses; ++u) taken.insert(ch_.pick(0, static_cast<std::int64_t>(pieces.size()) - 1));
  for (std::int64_t i : taken) {
    const TensorType t = tensorType(dtype, pieces[static_cast<std::size_t>(i)]);
    const std::string g = pb_.getitem(n, i, t);
    addViewVal(g, *base, t, false, d == 0, copy);
  }
  feature("multi_output_getitem");
  return true;
}

}  // namespace wb::gen::detail
