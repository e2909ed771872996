// gen/session_outputs.cpp: the end of a case: which targets get a mutation spec and with which
// value (the policy's strategies: a fresh update, a placeholder, an in-place lineage, a
// dependent or cyclic copy), the user outputs, and the features the mutation values show.
#include <array>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "gen/session.h"

namespace wb::gen::detail {

// A new node whose value has `target`'s type and depends on the target: the plain update
// `target = f(target, ...)`.
std::string Session::emitUpdate(const Target target) {
  const std::size_t self = indexOf(target.placeholder);
  if (realistic() && ch_.flip(0.4)) {
    const std::string n = pb_.call("aten::add.Tensor", {ref(self), Arg::ofInt(1)}, {}, target.type);
    fresh(n, target.type);
    return n;
  }
  const std::size_t other = partnerInto(target.type);
  static const std::vector<std::string> kOps = {"aten::add.Tensor", "aten::mul.Tensor", "aten::sub.Tensor"};
  const std::string n = pb_.call(ch_.element(kOps), {ref(self), ref(other)}, {}, target.type);
  fresh(n, target.type);
  return n;
}

// Chooses the mutation value of one target according to the enabled strategies.
std::string Session::mutationValue(const Target target, const std::vector<std::string>& mutated) {
  const TensorType& type = target.type;
  enum { kFresh, kPlaceholder, kSameLineage, kOtherLineage, kDependent };
  const std::array<int, 5> w = {6, pol_.placeholderValues ? 3 : 0, pol_.lineageSameTarget ? 3 : 0,
                        pol_.lineageOtherTarget ? 2 : 0, pol_.dependentCopies ? 3 : 0};
  auto anyTyped = [&](const auto& pred) -> std::optional<std::string> {
    Candidates typed;
    for (std::size_t i = 0; i < vals_.size(); ++i)
      if (vals_[i].type == type && pred(vals_[i])) typed.push_back(i);
    if (typed.empty()) return std::nullopt;
    return vals_[pick(typed)].name;
  };
  switch (ch_.weighted(w)) {
    case kPlaceholder:
      if (auto v = anyTyped([](const Val& v) { return v.isPlaceholder; })) return *v;
      break;
    case kSameLineage:
      if (auto v = anyTyped([&](const Val& v) { return v.lineage == target.placeholder; })) return *v;
      if (!vals_[indexOf(target.placeholder)].retired) return emitInplace(indexOf(target.placeholder), realistic());
      break;
    case kOtherLineage:
      if (auto v = anyTyped([&](const Val& v) { return !v.lineage.empty() && v.lineage != target.placeholder; })) return *v;
      if (auto other = choose([&](const Val& v) {
            return v.isPlaceholder && v.writable && v.type == type && v.name != target.placeholder;
          }))
        return emitInplace(*other, realistic());
      break;
    case kDependent: {
      std::vector<std::string> others;
      for (const auto& m : mutated)
        if (m != target.placeholder) others.push_back(m);
      if (others.empty()) break;
      const std::string other = ch_.element(others);
      if (auto v = anyTyped([&](const Val& v) { return v.base == other; })) return *v;
      const std::size_t o = indexOf(other);
      if (numelOf(vals_[o].dims) == numelOf(dimsOf(type)) && vals_[o].type.dtype == type.dtype && vals_[o].contiguous) {
        const bool same = vals_[o].type == type;
        const std::string n = same ? pb_.call("aten::alias_copy", {ref(o)}, {}, type)
                                   : pb_.call("aten::view_copy", {ref(o), intList(dimsOf(type))}, {}, type);
        addViewVal(n, o, type, false, true, true);
        return n;
      }
      break;
    }
    default: break;
  }
  if (auto v = anyTyped([](const Val& v) { return !v.isPlaceholder && !v.isView; }); v && ch_.flip(0.7)) return *v;
  return emitUpdate(target);
}

void Session::chooseOutputs() {
  // Which targets get a mutation spec: forced ones always (realistic: export made them).
  // Targets are copied: choosing values may add user inputs (and so targets).
  std::vector<Target> targets;
  for (const auto& b : buffers_) targets.push_back(b);
  for (const auto& u : userTargets_)
    if (pol_.userInputMutation || !u.forcedValue.empty()) targets.push_back(u);
  std::vector<std::string> mutated;
  for (const Target& t : targets)
    if (!t.forcedValue.empty() || ch_.flip(t.fqn.empty() ? 0.5 : 0.75)) mutated.push_back(t.placeholder);

  std::map<std::string, std::string> value;  // placeholder -> mutation value
  for (const Target& t : targets)
    if (!t.forcedValue.empty()) value[t.placeholder] = t.forcedValue;
  if (pol_.cyclicCopies) {  // a := old b, b := old a, from two targets of one type
    for (std::size_t i = 0; i < mutated.size(); ++i)
      for (std::size_t j = i + 1; j < mutated.size(); ++j) {
        const std::string& a = mutated[i];
        const std::string& b = mutated[j];
        if (targetOf(a)->type == targetOf(b)->type && !value.contains(a) && !value.contains(b) && ch_.flip(0.7)) {
          value[a] = b;
          value[b] = a;
        }
      }
  }
  for (const auto& m : mutated)
    if (!value.contains(m)) value[m] = mutationValue(*targetOf(m), mutated);

  // Realistic order: buffer mutations, then user-input mutations (export's order).
  for (const Target& t : targets) {
    if (!value.contains(t.placeholder)) continue;
    const bool isBuffer = !t.fqn.empty();
    pb_.output(isBuffer ? OutputKind::BufferMutation : OutputKind::UserInputMutation, value[t.placeholder],
               isBuffer ? t.fqn : t.placeholder);
    if (!isBuffer) feature("user_input_mutation");
  }
  recordMutationFeatures(value);

  // User outputs: the values nothing else uses (export would have removed dead code), or
  // any values in adversarial mode; optionally buffers or views of them.
  std::vector<bool> used;  // by the nodes' references (creation numbers)
  for (const Node& n : pb_.body()) {
    auto use = [&](NodeId r) {
      if (r >= used.size()) used.resize(r + 1, false);
      used[r] = true;
    };
    for (const Arg& a : n.args) forEachRef(a, use);
    for (const auto& kv : n.kwargs) forEachRef(kv.second, use);
  }
  auto isUsed = [&](const Val& v) {
    const NodeId r = pb_.ref(v.name).node;
    return r < used.size() && used[r];
  };
  std::vector<std::string> userOutputs;
  if (realistic()) {
    for (const Val& v : vals_)
      if (!v.isPlaceholder && !isUsed(v) && userOutputs.size() < 6) {
        bool isMutationValue = false;
        for (const auto& [_, mv] : value) isMutationValue = isMutationValue || mv == v.name;
        if (!isMutationValue) userOutputs.push_back(v.name);
      }
  } else {
    const std::int64_t count = ch_.pick(0, 3);
    for (std::int64_t i = 0; i < count && !vals_.empty(); ++i) userOutputs.push_back(ch_.element(vals_).name);
  }
  if (pol_.outputsAliasBuffers && !buffers_.empty()) {
    std::vector<std::string> aliasing;
    for (const Val& v : vals_)
      if (isBufferPlaceholder(v.base)) aliasing.push_back(v.name);
    if (!aliasing.empty()) {
      userOutputs.push_back(ch_.element(aliasing));
      feature("output_aliases_buffer");
    }
  }
  for (const auto& u : userOutputs) pb_.output(OutputKind::UserOutput, u);

  if (pol_.shuffledOutputs && pb_.outputCount() > 1) {
    std::vector<std::size_t> order(pb_.outputCount());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    for (std::size_t i = order.size() - 1; i > 0; --i)
      std::swap(order[i], order[static_cast<std::size_t>(ch_.pick(0, static_cast<std::int64_t>(i)))]);
    pb_.permuteOutputs(order);
    feature("shuffled_outputs");
  }
  if (pb_.placeholderNames().empty()) feature("no_placeholders");
}

void Session::recordMutationFeatures(const std::map<std::string, std::string>& value) {
  for (const auto& [target, v] : value) {
    const Val& mv = vals_[indexOf(v)];
    if (mv.isPlaceholder) feature("placeholder_value");
    if (mv.isPlaceholder && mv.name != target && isBufferPlaceholder(mv.name)) feature("buffer_value_other");
    if (mv.lineage == target) feature("lineage_same_target");
    if (!mv.lineage.empty() && mv.lineage != target) feature("lineage_other_target");
    if (mv.base != target && value.contains(mv.base)) {
      feature("dependent_copy");
      const std::string& back = value.at(mv.base);
      if (vals_[indexOf(back)].base == target) feature("cyclic_copy");
    }
  }
}

}  // namespace wb::gen::detail
