// gen/emit_schemaless.cpp: the ops without a schema (schemaLessKinds()): undeclared custom
// ops, call_module, higher-order ops with their submodules, and executorch_call_delegate with
// its getitems. What they read and write is unknown to an analysis, so their results are new
// values of the generator's choosing.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gen/session.h"

namespace wb::gen::detail {

// An op without a schema: an undeclared custom op (half the time), a call_module, or a
// higher-order op as torch.export prints them (cond with its branch submodules,
// wrap_with_set_grad_enabled with its body), whose results are getitems.
bool Session::emitSchemaLess() {
  const std::int64_t kind = ch_.pick(0, 3);
  std::size_t a = anyValue();
  std::vector<Arg> args = {ref(a)};
  bool writable = vals_[a].writable;
  if (ch_.flip(0.5)) {
    std::size_t b = anyValue();
    args.push_back(ref(b));
    writable = writable && vals_[b].writable;
  }
  const TensorType t = vals_[a].type;
  const bool contiguous = vals_[a].contiguous;
  if (kind == 3) return emitHigherOrder(std::move(args), t, writable);
  const std::string n = kind == 2 ? pb_.callModule("submodule_" + std::to_string(submodules_++), std::move(args), t)
                                  : pb_.call("my_ops::mystery", std::move(args), {}, t);
  std::size_t r = fresh(n, t, writable);
  vals_[r].contiguous = contiguous;
  feature("schema_less");
  return true;
}

bool Session::emitHigherOrder(std::vector<Arg> operands, const TensorType& t, bool writable) {
  const std::string k = std::to_string(submodules_++);
  std::string call;
  if (ch_.flip(0.5)) {
    const std::string pred = vals_[anyValue()].name;
    const std::string onTrue = pb_.getAttr("true_graph_" + k), onFalse = pb_.getAttr("false_graph_" + k);
    call = pb_.call("higher_order::cond", {pb_.ref(pred), pb_.ref(onTrue), pb_.ref(onFalse), Arg::tuple(std::move(operands))});
  } else {
    std::vector<Arg> args = {Arg::ofBool(false), pb_.ref(pb_.getAttr("wrap_body_" + k))};
    for (Arg& a : operands) args.push_back(std::move(a));
    call = pb_.call("higher_order::wrap_with_set_grad_enabled", std::move(args));
  }
  fresh(pb_.getitem(call, 0, t), t, writable);
  feature("schema_less");
  feature("multi_output_getitem");
  return true;
}

bool Session::emitDelegate() {
  const std::string module = pb_.getAttr("lowered_module_" + std::to_string(delegates_++));
  std::vector<Arg> args = {pb_.ref(module)};
  std::vector<TensorType> inputTypes;
  bool writable = true;
  const std::int64_t inputs = ch_.pick(1, 3);
  for (std::int64_t i = 0; i < inputs; ++i) {
    std::optional<std::size_t> v;
    if (i == 0 && !buffers_.empty() && ch_.flip(0.5))
      v = choose([&](const Val& x) { return isBufferPlaceholder(x.base); });
    if (!v) v = anyValue();
    args.push_back(ref(*v));
    inputTypes.push_back(vals_[*v].type);
    writable = writable && vals_[*v].writable;
  }
  const std::string call = pb_.call("executorch_call_delegate", std::move(args));
  const std::int64_t outputs = ch_.pick(1, 2);
  for (std::int64_t i = 0; i < outputs; ++i) {
    const TensorType t = ch_.flip(0.7) ? ch_.element(inputTypes) : poolType();
    fresh(pb_.getitem(call, i, t), t, writable);
  }
  feature("delegate");
  feature("multi_output_getitem");
  return true;
}

}  // namespace wb::gen::detail
