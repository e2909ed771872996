// gen/session_values.cpp: the Session's model of the values it may use (gen/session.h).
//
// Registering values, finding or making a value of a type (an existing one, a new user input or
// a `full`), broadcasting partners, and the buffers and user inputs that may get a mutation spec.
#include <algorithm>
#include <string>
#include <utility>

#include "gen/session.h"

namespace wb::gen::detail {

std::size_t Session::addVal(Val v) {
  v.dims = dimsOf(v.type);
  if (v.base.empty()) v.base = v.name;
  vals_.push_back(std::move(v));
  byName_.insert(static_cast<std::uint32_t>(vals_.size() - 1));
  return vals_.size() - 1;
}

std::size_t Session::fresh(const std::string& name, TensorType type, bool writable) {
  Val v;
  v.name = name;
  v.type = std::move(type);
  v.writable = writable;
  return addVal(std::move(v));
}

// A value of exactly this type: usually an existing one, else a new input (or a `full`).
std::size_t Session::valueOfType(const TensorType type) {  // by value: vals_ may grow
  auto c = candidates([&](const Val& v) { return v.type == type; });
  if (!c.empty() && !ch_.flip(0.2)) return pick(c);
  return freshSource(type);
}

std::size_t Session::freshSource(const TensorType type, std::string_view inputName) {
  if (!pol_.noPlaceholders && userInputs_ < std::max(1, opt_.maxUserInputs)) return newUserInput(type, inputName);
  std::vector<Arg> args = {intList(dimsOf(type)),
                           type.dtype == "i64" ? Arg::ofInt(ch_.pick(0, 3)) : Arg::ofFloat(1.0)};
  return fresh(pb_.call("aten::full", std::move(args), {{"dtype", dtypeToken(type.dtype)}}, type), type);
}

std::size_t Session::newUserInput(const TensorType type, std::string_view name) {
  static constexpr std::string_view kNames[] = {"x", "y", "z", "w", "u", "v"};
  std::string_view chosen = name.empty() ? kNames[userInputs_ % 6] : name;
  ++userInputs_;
  Val v;
  v.name = pb_.userInput(chosen, type);
  v.type = type;
  v.isPlaceholder = true;
  v.kind = InputKind::UserInput;
  std::size_t i = addVal(std::move(v));
  userTargets_.push_back(Target{vals_[i].name, {}, type, {}});
  return i;
}

std::size_t Session::indexTensor(std::int64_t length) {
  return valueOfIndexType(tensorType("i64", {length}));
}

std::size_t Session::valueOfIndexType(const TensorType type) {
  auto c = candidates([&](const Val& v) { return v.type == type; });
  if (!c.empty() && ch_.flip(0.5)) return pick(c);
  return freshSource(type, "idx");
}

std::size_t Session::anyValue() {
  auto c = candidates([](const Val&) { return true; });
  if (c.empty()) return freshSource(poolType());
  return pick(c);
}

Target* Session::targetOf(const std::string& placeholder) {
  for (auto& t : buffers_)
    if (t.placeholder == placeholder) return &t;
  for (auto& t : userTargets_)
    if (t.placeholder == placeholder) return &t;
  return nullptr;
}

bool Session::isBufferPlaceholder(const std::string& name) const {
  for (const auto& t : buffers_)
    if (t.placeholder == name) return true;
  return false;
}

// A partner for `a` in a broadcasting binary op: same dtype, broadcast within the cap.
std::size_t Session::broadcastPartner(std::size_t a) {
  const Val& va = vals_[a];
  auto c = candidates([&](const Val& v) {
    if (v.type.dtype != va.type.dtype) return false;
    const std::optional<std::int64_t> n = broadcastNumel(va.dims, v.dims);
    return n && *n <= cap();
  });
  if (c.empty() || ch_.flip(0.15)) return valueOfType(vals_[a].type);
  return pick(c);
}

// A partner that broadcasts *to* `a`'s shape (in-place and out= ops keep the self shape).
std::size_t Session::partnerInto(const TensorType type) {
  const Dims d = dimsOf(type);
  auto c = candidates([&](const Val& v) { return v.type.dtype == type.dtype && broadcastsTo(v.dims, d); });
  if (c.empty() || ch_.flip(0.2)) return valueOfType(type);
  return pick(c);
}

}  // namespace wb::gen::detail
