// gen/emit_writes.cpp: the families that write a tensor or put a result in another's storage:
// in-place ops (on values and on targets), KV-cache updates, list ops, out= variants,
// share-alloc annotations, mutable custom ops and ops writing two arguments. In realistic mode
// they also record what export would have made a target's mutation value.
#include <algorithm>
#include <array>
#include <string>
#include <utility>
#include <vector>

#include "gen/session.h"

namespace wb::gen::detail {

// Emits an in-place op writing `self` (a writable value) and registers its aliasing result.
std::string Session::emitInplace(std::size_t self, bool indexStyleOnly) {
  const TensorType t = vals_[self].type;
  const Dims dims = vals_[self].dims;
  const std::string selfName = vals_[self].name;
  std::array<int, 6> w = {indexStyleOnly ? 0 : 4, indexStyleOnly ? 0 : 2, indexStyleOnly ? 0 : 2,
                        indexStyleOnly ? 0 : 1, dims.empty() ? 0 : 3, dims.empty() ? 0 : 2};
  if (indexStyleOnly && dims.empty()) w[0] = 1;  // a scalar buffer: add_ is the only choice
  std::string n;
  switch (ch_.weighted(w)) {
    case 0: {
      const std::size_t other = partnerInto(t);
      static const std::vector<std::string> kInplaceBinary = {"aten::add_.Tensor", "aten::sub_.Tensor",
                                                              "aten::mul_.Tensor"};
      n = pb_.call(ch_.element(kInplaceBinary), {pb_.ref(selfName), ref(other)}, {}, t);
      break;
    }
    case 1:
      n = pb_.call("aten::mul_.Scalar", {pb_.ref(selfName), Arg::ofInt(ch_.pick(2, 3))}, {}, t);
      break;
    case 2: n = pb_.call("aten::relu_", {pb_.ref(selfName)}, {}, t); break;
    case 3:
      n = ch_.flip(0.5) ? pb_.call("aten::zero_", {pb_.ref(selfName)}, {}, t)
                        : pb_.call("aten::fill_.Scalar", {pb_.ref(selfName), Arg::ofInt(ch_.pick(0, 2))}, {}, t);
      break;
    case 4: {  // index_put_(self, [idx], values): values [k, *dims[1:]]
      const std::int64_t k = ch_.pick(1, std::min<std::int64_t>(dims[0], 2));
      Dims vd = dims;
      vd[0] = k;
      const std::size_t idx = indexTensor(k);
      const std::size_t values = valueOfType(tensorType(t.dtype, vd));
      n = pb_.call("aten::index_put_", {pb_.ref(selfName), Arg::list({ref(idx)}), ref(values)}, {}, t);
      feature("kv_cache_op");
      break;
    }
    default: {  // index_copy_(self, d, idx, source)
      const auto d = static_cast<std::size_t>(ch_.pick(0, static_cast<std::int64_t>(dims.size()) - 1));
      const std::int64_t k = ch_.pick(1, std::min<std::int64_t>(dims[d], 2));
      Dims sd = dims;
      sd[d] = k;
      const std::size_t idx = indexTensor(k);
      const std::size_t source = valueOfType(tensorType(t.dtype, sd));
      n = pb_.call("aten::index_copy_", {pb_.ref(selfName), Arg::ofInt(static_cast<std::int64_t>(d)), ref(idx), ref(source)}, {}, t);
      feature("kv_cache_op");
      break;
    }
  }
  // Values may have been appended: look `self` up again.
  const std::size_t s = indexOf(selfName);
  if (vals_[s].hasAliases) feature("inplace_on_ancestor");
  vals_[s].hasAliases = true;
  Val r;
  r.name = n;
  r.type = t;
  r.isView = vals_[s].isView;
  r.base = vals_[s].base;
  r.writable = vals_[s].writable;
  r.contiguous = vals_[s].contiguous;
  r.lineage = vals_[s].isPlaceholder ? vals_[s].name : vals_[s].lineage;
  addVal(std::move(r));
  if (realistic()) vals_[s].retired = true;  // reinplace: self has no later use
  return n;
}

bool Session::emitInplaceOnValue() {
  auto self = choose([](const Val& v) { return v.writable && !v.isPlaceholder; });
  if (!self) return false;
  emitInplace(*self, /*indexStyleOnly=*/false);
  feature("inplace_on_value");
  return true;
}

// In-place on a buffer (or, with user-input mutation, a user input), or on the latest
// value of its in-place chain. Realistic: what reinplace makes of index_put / index_copy,
// and the update then is the target's mutation value.
bool Session::emitInplaceOnTarget() {
  std::vector<std::string> targets;
  if (pol_.inplaceOnBuffers)
    for (const auto& b : buffers_) targets.push_back(b.placeholder);
  if (pol_.userInputMutation)
    for (const auto& u : userTargets_) targets.push_back(u.placeholder);
  if (targets.empty()) return false;
  const std::string target = ch_.element(targets);
  auto self = choose([&](const Val& v) { return v.writable && (v.name == target || v.lineage == target); });
  if (!self) return false;
  const std::string n = emitInplace(*self, /*indexStyleOnly=*/realistic());
  feature(isBufferPlaceholder(target) ? "inplace_on_buffer" : "inplace_on_user_input");
  if (realistic()) targetOf(target)->forcedValue = n;
  return true;
}

// KV-cache style updates: functional index_put / index_copy / slice_scatter, and the
// mutable llama::update_cache.
bool Session::emitKvCache() {
  auto self = (!buffers_.empty() && ch_.flip(0.7))
                  ? choose([&](const Val& v) { return isBufferPlaceholder(v.name) || isBufferPlaceholder(v.lineage); })
                  : std::nullopt;
  if (!self) self = choose([](const Val& v) { return !v.dims.empty(); });
  if (!self || vals_[*self].dims.empty()) return false;
  const TensorType t = vals_[*self].type;
  const Dims dims = vals_[*self].dims;
  const std::string selfName = vals_[*self].name;
  const auto rank = static_cast<std::int64_t>(dims.size());
  std::string n;
  switch (ch_.pick(0, 3)) {
    case 0: {
      const std::int64_t k = ch_.pick(1, std::min<std::int64_t>(dims[0], 2));
      Dims vd = dims;
      vd[0] = k;
      const std::size_t idx = indexTensor(k);
      const std::size_t values = valueOfType(tensorType(t.dtype, vd));
      n = pb_.call("aten::index_put", {pb_.ref(selfName), Arg::list({ref(idx)}), ref(values)}, {}, t);
      break;
    }
    case 1: {
      const auto d = static_cast<std::size_t>(ch_.pick(0, rank - 1));
      const std::int64_t k = ch_.pick(1, std::min<std::int64_t>(dims[d], 2));
      Dims sd = dims;
      sd[d] = k;
      const std::size_t idx = indexTensor(k);
      const std::size_t source = valueOfType(tensorType(t.dtype, sd));
      n = pb_.call("aten::index_copy", {pb_.ref(selfName), Arg::ofInt(static_cast<std::int64_t>(d)), ref(idx), ref(source)}, {}, t);
      break;
    }
    case 2: {
      const auto d = static_cast<std::size_t>(ch_.pick(0, rank - 1));
      const std::int64_t start = ch_.pick(0, dims[d] - 1);
      const std::int64_t end = ch_.pick(start + 1, dims[d]);
      Dims sd = dims;
      sd[d] = end - start;
      const std::size_t src = valueOfType(tensorType(t.dtype, sd));
      n = pb_.call("aten::slice_scatter",
                   {pb_.ref(selfName), ref(src), Arg::ofInt(static_cast<std::int64_t>(d)), Arg::ofInt(start), Arg::ofInt(end)}, {}, t);
      break;
    }
    default: {
      if (rank < 2 || !vals_[*self].writable) return false;
      const std::int64_t s = ch_.pick(1, dims[1]);
      Dims vd = dims;
      vd[1] = s;
      const std::int64_t startPos = ch_.pick(0, dims[1] - s);
      const std::size_t value = valueOfType(tensorType(t.dtype, vd));
      const TensorType r = tensorType(t.dtype, {1});
      n = pb_.call("llama::update_cache", {ref(value), pb_.ref(selfName), Arg::ofInt(startPos)}, {}, r);
      fresh(n, r);
      feature("kv_cache_op");
      feature("mutable_custom_op");
      noteDirectWrite(selfName);
      return true;
    }
  }
  fresh(n, t);
  feature("kv_cache_op");
  // Realistic: `self.cache.index_put_(...)` functionalised: the result is the buffer's new
  // value, and later reads use it instead of the placeholder.
  if (realistic() && isBufferPlaceholder(selfName) && targetOf(selfName)->forcedValue.empty() && ch_.flip(0.6)) {
    targetOf(selfName)->forcedValue = n;
    vals_[indexOf(selfName)].retired = true;
  }
  return true;
}

// A mutable op wrote the placeholder `name` directly (custom op after
// unsafe_remove_auto_functionalized_pass): realistic export returns the placeholder itself
// as the mutation value.
void Session::noteDirectWrite(const std::string& name) {
  if (!realistic()) return;
  if (Target* t = targetOf(name); t && t->forcedValue.empty()) t->forcedValue = name;
}

bool Session::emitListOp() {
  const std::int64_t count = ch_.pick(1, 3);
  std::vector<std::size_t> items;
  for (std::int64_t i = 0; i < count; ++i) {
    auto v = choose([&](const Val& x) {
      return x.writable && std::find(items.begin(), items.end(), indexOf(x.name)) == items.end();
    });
    if (!v) break;
    items.push_back(*v);
  }
  if (items.empty()) return false;
  std::vector<std::string> names;
  for (std::size_t i : items) names.push_back(vals_[i].name);
  const std::int64_t which = realistic() ? 0 : ch_.pick(0, 3);
  if (which == 0) {
    pb_.call("wbgen::scale_all_", {pb_.refList(names), Arg::ofInt(2)});
  } else if (which == 1) {
    pb_.call("aten::_foreach_add_.Scalar", {pb_.refList(names), Arg::ofInt(1)});
  } else if (which == 2) {
    pb_.call("aten::_foreach_mul_.Scalar", {pb_.refList(names), Arg::ofInt(2)});
  } else {
    std::vector<std::string> others;
    for (const auto& name : names) others.push_back(vals_[partnerInto(vals_[indexOf(name)].type)].name);
    pb_.call("aten::_foreach_add_.List", {pb_.refList(names), pb_.refList(others)});
  }
  for (const auto& n : names) noteDirectWrite(n);
  feature("list_op");
  return true;
}

bool Session::emitOutVariant() {
  auto out = choose([](const Val& v) { return v.writable; });
  if (!out) return false;
  const TensorType t = vals_[*out].type;
  const Dims dims = vals_[*out].dims;
  const std::string outName = vals_[*out].name;
  std::string n;
  const std::int64_t which = ch_.pick(0, 2);
  if (which == 1 && t.dtype == "f32" && dims.size() == 2) {
    const std::int64_t k = ch_.pick(1, 4);
    if (dims[0] * k > cap() || k * dims[1] > cap()) return false;
    const std::size_t a = valueOfType(tensorType("f32", {dims[0], k}));
    const std::size_t b = valueOfType(tensorType("f32", {k, dims[1]}));
    n = pb_.call("aten::mm.out", {ref(a), ref(b)}, {{"out", pb_.ref(outName)}}, t);
  } else if (which == 2 && !dims.empty() && dims[0] >= 2) {
    Dims half = dims;
    half[0] = dims[0] / 2;
    Dims rest = dims;
    rest[0] = dims[0] - half[0];
    const std::size_t a = valueOfType(tensorType(t.dtype, half));
    const std::size_t b = valueOfType(tensorType(t.dtype, rest));
    n = pb_.call("aten::cat.out", {pb_.refList({vals_[a].name, vals_[b].name}), Arg::ofInt(0)}, {{"out", pb_.ref(outName)}}, t);
  } else {
    const std::size_t a = valueOfType(t);  // the result has out's shape: no resize
    const std::size_t b = partnerInto(t);
    n = pb_.call("aten::add.out", {ref(a), ref(b)}, {{"out", pb_.ref(outName)}}, t);
  }
  const std::size_t o = indexOf(outName);
  vals_[o].hasAliases = true;
  Val r;
  r.name = n;
  r.type = t;
  r.isView = vals_[o].isView;
  r.base = vals_[o].base;
  r.writable = vals_[o].writable;
  r.contiguous = vals_[o].contiguous;
  addVal(std::move(r));
  feature("out_variant");
  return true;
}

// A functional op whose result the planner allocates in argument k's storage.
bool Session::emitShareAlloc() {
  // Realistic: reinplace only annotates intermediates (a placeholder would need a mutation).
  // Either way the argument is retired (reinplace: no later use of it); an annotation that
  // ends up outside reinplace's domain is dropped at the end.
  auto a = choose([&](const Val& v) { return v.writable && !(realistic() && v.isPlaceholder); });
  if (!a) return false;
  const TensorType t = vals_[*a].type;
  const std::string aName = vals_[*a].name;
  std::string n;
  NodeMeta meta;
  if (realistic()) {  // annotation-only reinplace of an extra op without an in-place form
    meta["_share_alloc_with_arg_idx"] = "0";
    n = pb_.call("wbgen::scaled", {pb_.ref(aName), Arg::ofInt(2)}, {}, t, meta);
  } else if (ch_.flip(0.5)) {
    meta["_share_alloc_with_arg_idx"] = "0";
    n = pb_.call(t.dtype == "f32" && ch_.flip(0.5) ? "aten::sigmoid" : "aten::relu", {pb_.ref(aName)}, {}, t, meta);
  } else {
    const std::size_t other = partnerInto(t);
    const bool first = ch_.flip(0.5);
    meta["_share_alloc_with_arg_idx"] = first ? "0" : "1";
    std::vector<Arg> args = first ? std::vector<Arg>{pb_.ref(aName), ref(other)}
                                  : std::vector<Arg>{ref(other), pb_.ref(aName)};
    n = pb_.call("aten::add.Tensor", std::move(args), {}, t, meta);
  }
  const std::size_t s = indexOf(aName);
  vals_[s].hasAliases = true;
  vals_[s].retired = true;
  Val r;
  r.name = n;
  r.type = t;
  r.base = vals_[s].base;
  r.writable = vals_[s].writable;
  r.contiguous = vals_[s].contiguous;
  addVal(std::move(r));
  feature("share_alloc");
  return true;
}

bool Session::emitMutableCustom() {
  auto state = (!buffers_.empty() && ch_.flip(0.6))
                   ? choose([&](const Val& v) { return v.writable && isBufferPlaceholder(v.name); })
                   : std::nullopt;
  if (!state) state = choose([](const Val& v) { return v.writable; });
  if (!state) return false;
  const std::string stateName = vals_[*state].name;
  if (ch_.flip(0.3) && emitTwoWrites(*state)) return true;
  const std::size_t x = anyValue();
  if (ch_.flip(0.5)) pb_.call("wbgen::update_state", {pb_.ref(stateName), ref(x)});
  else pb_.call("wbgen::accumulate_into", {ref(x), pb_.ref(stateName)});
  noteDirectWrite(stateName);
  feature("mutable_custom_op");
  return true;
}

// An op that writes two arguments (`(a!)` and `(b!)`): batch norm in training mode updating
// its running mean and variance, when the two states fit it, else the generator's
// wbgen::update_pair. The second state lives in other storage than the first: an analysis
// that takes only an op's first written argument must see a write it misses.
bool Session::emitTwoWrites(std::size_t first) {
  const Val& a = vals_[first];
  const std::string firstStorage = storageOf(a);
  auto second = choose([&](const Val& v) { return v.writable && storageOf(v) != firstStorage; });
  if (!second) return false;
  const std::string firstName = vals_[first].name, secondName = vals_[*second].name;
  const TensorType ta = vals_[first].type;
  const Dims da = vals_[first].dims;
  const bool fitsBatchNorm = ta.dtype == "f32" && da.size() == 1 && vals_[*second].type == ta;
  if (fitsBatchNorm && ch_.flip(0.6)) {
    const std::int64_t channels = da[0];
    const std::int64_t batch = ch_.pick(1, std::max<std::int64_t>(1, std::min<std::int64_t>(3, cap() / channels)));
    const TensorType inputType = tensorType("f32", {batch, channels});
    const std::size_t input = valueOfType(inputType);
    const std::string call = pb_.call("aten::_native_batch_norm_legit",
                                      {ref(input), Arg::none(), Arg::none(), pb_.ref(firstName), pb_.ref(secondName),
                                       Arg::ofBool(true), Arg::ofFloat(0.1), Arg::ofFloat(1e-5)});
    fresh(pb_.getitem(call, 0, inputType), inputType);
    feature("multi_output_getitem");
  } else {
    pb_.call("wbgen::update_pair", {pb_.ref(firstName), pb_.ref(secondName), ref(anyValue())});
  }
  noteDirectWrite(firstName);
  noteDirectWrite(secondName);
  feature("mutable_custom_op");
  feature("two_written_arguments");
  return true;
}

}  // namespace wb::gen::detail
