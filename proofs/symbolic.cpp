// proofs/symbolic.cpp: the vocabulary two programs share, and the executors' entry point.
#include "proofs/symbolic.h"

#include "proofs/symbolic_internal.h"

namespace wb::proofs {

Vocabulary::Vocabulary(z3::context& ctx)
    : ctx_(&ctx),
      element_(ctx.bv_sort(64)),
      array_(ctx.array_sort(ctx.bv_sort(64), ctx.bv_sort(64))),
      zeros_(z3::const_array(ctx.bv_sort(64), ctx.bv_val(0, 64))) {}

z3::expr Vocabulary::bv(std::uint64_t value) const { return ctx_->bv_val(value, 64); }

z3::func_decl Vocabulary::function(const std::string& name, const std::vector<z3::sort>& domain, const z3::sort& range) {
  // The sorts are part of the key: a name met with other sorts (not expected) gets its own
  // symbol rather than an error from Z3.
  std::string key = name;
  for (const z3::sort& s : domain) key += s.is_array() ? "/A" : "/E";
  key += range.is_array() ? "->A" : range.is_bool() ? "->B" : "->E";
  if (auto it = functions_.find(key); it != functions_.end()) return it->second;
  z3::sort_vector sorts(*ctx_);
  for (const z3::sort& s : domain) sorts.push_back(s);
  z3::func_decl f = ctx_->function(key.c_str(), sorts, range);
  functions_.emplace(key, f);
  return f;
}

z3::expr Vocabulary::constant(const std::string& name) {
  if (auto it = constants_.find(name); it != constants_.end()) return it->second;
  z3::expr c = ctx_->constant(name.c_str(), element_);
  constants_.emplace(name, c);
  return c;
}

std::uint64_t Vocabulary::textId(const std::string& text) {
  auto [it, inserted] = textIds_.emplace(text, textIds_.size() + 1);
  return it->second;
}

const Vocabulary::Input& Vocabulary::input(const std::string& key, const std::string& oracleName, bool isArray,
                                           std::int64_t size) {
  if (auto it = inputIndex_.find(key); it != inputIndex_.end()) return inputs_[it->second];
  const std::string name = "input|" + key;
  Input in{key, oracleName, isArray, size, isArray ? ctx_->constant(name.c_str(), array_) : ctx_->constant(name.c_str(), element_)};
  inputIndex_.emplace(key, inputs_.size());
  inputs_.push_back(std::move(in));
  return inputs_.back();
}

z3::expr Vocabulary::resultChoice(const std::string& nodeKey) {
  const std::string id = "result|" + nodeKey;
  if (auto it = choiceIndex_.find(id); it != choiceIndex_.end()) return choices_[it->second].term;
  z3::expr c = ctx_->bv_const(("behaviour|" + id).c_str(), 8);
  choiceIndex_.emplace(id, choices_.size());
  choices_.push_back({nodeKey, "result", c});
  oracleBehaviour_.push_back(c == ctx_->bv_val(0, 8));
  return c;
}

z3::expr Vocabulary::writeChoice(const std::string& nodeKey, std::size_t k) {
  const std::string id = "writes " + std::to_string(k) + "|" + nodeKey;
  if (auto it = choiceIndex_.find(id); it != choiceIndex_.end()) return choices_[it->second].term;
  z3::expr c = ctx_->bool_const(("behaviour|" + id).c_str());
  choiceIndex_.emplace(id, choices_.size());
  choices_.push_back({nodeKey, "writes argument " + std::to_string(k), c});
  oracleBehaviour_.push_back(!c);
  return c;
}

namespace detail {

std::optional<std::vector<std::int64_t>> staticShape(std::string_view typeText) {
  if (typeText.empty()) return std::nullopt;
  const std::optional<TensorType> type = parseTensorType(typeText);
  if (!type || !type->isStatic()) return std::nullopt;
  std::vector<std::int64_t> sizes;
  for (const Dim& d : type->shape) sizes.push_back(d.size);
  return sizes;
}

}  // namespace detail

Result<SymbolicRun> execute(const Program& program, const SchemaTable& schemas, const NodeKeys& keys,
                            Vocabulary& vocabulary, const SymbolicOptions& options) {
  if (options.tier == oracle::Tier::Element) return detail::executeElement(program, schemas, keys, vocabulary, options);
  return detail::executeStorage(program, schemas, keys, vocabulary, options);
}

}  // namespace wb::proofs
