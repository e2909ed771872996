// gen/generator.cpp: the choice-driven random program generator (DESIGN §9).
//
// A Session builds one program: it draws a mode and a Policy, creates buffers and inputs from
// a small pool of types (so that values of a buffer's type are common), emits a body of ops
// chosen among the families the policy enables, and finally chooses mutation values and user
// outputs. Every op is emitted only when its operands exist with fitting types, and the
// generator's own model of each value (type, storage base, in-place lineage, writability)
// keeps what it emits valid; nothing is filtered afterwards.
#include "gen/generator.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <set>

#include "core/placement.h"
#include "core/reinplace_domain.h"
#include "gen/program_builder.h"

namespace wb::gen {

std::string_view toString(GenMode mode) {
  return mode == GenMode::Realistic ? "realistic" : "adversarial";
}

std::optional<GenMode> genModeFromString(std::string_view text) {
  if (text == "realistic") return GenMode::Realistic;
  if (text == "adversarial") return GenMode::Adversarial;
  return std::nullopt;
}

std::vector<std::string> featureNames() {
  return {"copy_view",          "real_view",           "view_of_view",       "view_of_buffer",
          "multi_output_getitem", "inplace_on_buffer", "inplace_on_value",   "inplace_on_ancestor",
          "inplace_on_user_input", "list_op",          "out_variant",        "share_alloc",
          "schema_less",        "mutable_custom_op",   "delegate",           "kv_cache_op",
          "several_buffers",    "user_input_mutation", "placeholder_value",  "buffer_value_other",
          "dependent_copy",     "cyclic_copy",         "lineage_same_target", "lineage_other_target",
          "no_placeholders",    "output_aliases_buffer", "fqn_collision",    "shuffled_outputs",
          "parameter",          "two_written_arguments"};
}

namespace {

using Dims = std::vector<std::int64_t>;

std::int64_t numelOf(const Dims& dims) {
  std::int64_t n = 1;
  for (std::int64_t d : dims) n *= d;
  return n;
}

// NumPy broadcasting of two shapes, or nullopt.
std::optional<Dims> broadcastDims(const Dims& a, const Dims& b) {
  const std::size_t rank = std::max(a.size(), b.size());
  Dims out(rank, 1);
  for (std::size_t i = 0; i < rank; ++i) {
    const std::int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const std::int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) return std::nullopt;
    out[i] = std::max(da, db);
  }
  return out;
}

bool broadcastsTo(const Dims& from, const Dims& to) {
  auto b = broadcastDims(from, to);
  return b && *b == to;
}

// What the generator knows about each tensor value it may use.
struct Val {
  std::string name;
  TensorType type;
  Dims dims;
  bool writable = true;     // may be written (not an expand view, not a parameter)
  bool contiguous = true;   // a `view` of it is valid
  bool retired = false;     // realistic: reinplace required "no later use" of it
  bool isView = false;
  bool isPlaceholder = false;
  bool hasAliases = false;  // a view or in-place result of it exists
  InputKind kind = InputKind::UserInput;
  std::string base;         // storage base: a placeholder or a fresh node
  std::string lineage;      // placeholder reached through in-place self chains, "" if none
};

struct Target {  // a buffer or user input that may get a mutation spec
  std::string placeholder;
  std::string fqn;  // buffer FQN; empty for user inputs
  TensorType type;
  std::string forcedValue;  // realistic: the value export/reinplace would have made its update
};

enum Family : int {
  kBinary, kUnary, kScalar, kReduce, kMatmul, kCat, kIndexSelect, kCopyView, kRealView, kSplit,
  kInplaceValue, kInplaceTarget, kKvCache, kListOp, kOutVariant, kShareAlloc, kSchemaLess,
  kMutableCustom, kDelegate, kFamilyCount
};

class Session {
 public:
  Session(Choices& choices, const GenOptions& options, const SchemaTable& schemas)
      : ch_(choices), opt_(options), pb_(schemas) {}

  Generated run() {
    drawModeAndPolicy();
    createInputs();
    const std::int64_t nodes = ch_.pick(0, std::max(0, opt_.maxNodes));
    while (static_cast<std::int64_t>(pb_.body().size()) < nodes) emitOne();
    chooseOutputs();
    Generated g;
    g.mode = mode_;
    g.policy = pol_;
    g.program = pb_.finish();
    keepAnnotationsInReinplacesDomain(g.program);
    g.features.assign(features_.begin(), features_.end());
    return g;
  }

  // Annotations only where reinplace makes them (DESIGN §7): the argument is retired when the
  // node is made (no later node uses it), but whether an output mutates a placeholder, and
  // whether the node gets a user, is known only now. An annotation outside the domain is
  // dropped (the node stays, a plain functional op).
  void keepAnnotationsInReinplacesDomain(Program& program) {
    for (const AnnotationOutsideDomain& outside : annotationsOutsideReinplaceDomain(program))
      program.graph.nodes[outside.node].meta.clear();
    bool any = false;
    for (const Node& n : program.graph.nodes) any = any || n.shareAllocArgIndex().has_value();
    if (!any) features_.erase("share_alloc");
  }

 private:
  bool realistic() const { return mode_ == GenMode::Realistic; }
  void feature(const char* name) { features_.insert(name); }

  // --- mode, policy, types ---------------------------------------------------------------

  void drawModeAndPolicy() {
    mode_ = opt_.mode ? *opt_.mode : (ch_.flip(0.5) ? GenMode::Adversarial : GenMode::Realistic);
    if (opt_.policy) {
      pol_ = *opt_.policy;
    } else {
      Policy& p = pol_;
      p.copyViews = ch_.flip(0.6);
      p.viewsOfViews = ch_.flip(0.4);
      p.inplaceOnBuffers = ch_.flip(0.5);
      p.inplaceOnValues = ch_.flip(0.5);
      p.listOps = ch_.flip(0.35);
      p.shareAlloc = ch_.flip(0.35);
      p.mutableCustomOps = ch_.flip(0.4);
      p.delegates = ch_.flip(0.3);
      p.kvCacheOps = ch_.flip(0.5);
      p.severalBuffers = ch_.flip(0.6);
      p.userInputMutation = ch_.flip(0.4);
      p.placeholderValues = ch_.flip(0.4);
      p.dependentCopies = ch_.flip(0.4);
      p.cyclicCopies = ch_.flip(0.3);
      p.lineageSameTarget = ch_.flip(0.4);
      p.lineageOtherTarget = ch_.flip(0.3);
      p.noPlaceholders = ch_.flip(0.06);
      p.outputsAliasBuffers = ch_.flip(0.3);
      p.fqnCollision = ch_.flip(0.15);
      if (!realistic()) {
        p.realViews = ch_.flip(0.5);
        p.outVariants = ch_.flip(0.35);
        p.schemaLess = ch_.flip(0.35);
        p.shuffledOutputs = ch_.flip(0.4);
      }
    }
    if (realistic()) {  // export + to_edge + reinplace never produce these
      pol_.realViews = pol_.outVariants = pol_.schemaLess = pol_.shuffledOutputs = false;
    }
  }

  Dims drawDims() {
    const int maxRank = std::clamp(opt_.maxRank, 0, 4);
    const std::int64_t cap = std::max<std::int64_t>(1, opt_.maxShapeElements);
    std::vector<int> rankWeights = {2, 4, 4, 2, 1};
    rankWeights.resize(static_cast<std::size_t>(maxRank) + 1);
    const std::size_t rank = ch_.weighted(rankWeights);
    Dims dims;
    std::int64_t n = 1;
    for (std::size_t i = 0; i < rank; ++i) {
      std::int64_t d = ch_.pick(1, 4);
      if (n * d > cap) d = 1;
      n *= d;
      dims.push_back(d);
    }
    return dims;
  }

  // The shape is drawn before the dtype, in its own statement: as two arguments of one call their
  // order was unspecified, and g++ (shape first) and clang (dtype first) made different programs
  // of the same choices (the libFuzzer build's `--print` of a crash input differed from the g++
  // build's). g++'s order is kept: it made the published results.
  TensorType drawType() {
    std::vector<std::int64_t> dims = drawDims();
    return tensorType(ch_.flip(0.25) ? "i64" : "f32", dims);
  }
  const TensorType& poolType() { return ch_.element(pool_); }
  std::int64_t cap() const { return std::max<std::int64_t>(1, opt_.maxShapeElements); }

  // --- values ------------------------------------------------------------------------------

  std::size_t addVal(Val v) {
    v.dims = dimsOf(v.type);
    if (v.base.empty()) v.base = v.name;
    byName_[v.name] = vals_.size();
    vals_.push_back(std::move(v));
    return vals_.size() - 1;
  }

  std::size_t fresh(const std::string& name, const TensorType type, bool writable = true) {
    Val v;
    v.name = name;
    v.type = type;
    v.writable = writable;
    return addVal(std::move(v));
  }

  // The predicates are lambdas: a template, not std::function, so that no call allocates a
  // closure (the fuzz targets generate a program per input, under ASan).
  template <typename Pred>
  std::vector<std::size_t> candidates(const Pred& pred) const {
    std::vector<std::size_t> out;
    for (std::size_t i = 0; i < vals_.size(); ++i)
      if (!vals_[i].retired && pred(vals_[i])) out.push_back(i);
    return out;
  }

  template <typename Pred>
  std::optional<std::size_t> choose(const Pred& pred) {
    auto c = candidates(pred);
    if (c.empty()) return std::nullopt;
    return ch_.element(c);
  }

  // A value of exactly this type: usually an existing one, else a new input (or a `full`).
  std::size_t valueOfType(const TensorType type) {  // by value: vals_ may grow
    auto c = candidates([&](const Val& v) { return v.type == type; });
    if (!c.empty() && !ch_.flip(0.2)) return ch_.element(c);
    return freshSource(type);
  }

  std::size_t freshSource(const TensorType type, std::string_view inputName = {}) {
    if (!pol_.noPlaceholders && userInputs_ < std::max(1, opt_.maxUserInputs)) return newUserInput(type, inputName);
    std::vector<Arg> args = {intList(dimsOf(type)),
                             type.dtype == "i64" ? Arg::ofInt(ch_.pick(0, 3)) : Arg::ofFloat(1.0)};
    return fresh(pb_.call("aten::full", std::move(args), {{"dtype", dtypeToken(type.dtype)}}, type), type);
  }

  std::size_t newUserInput(const TensorType type, std::string_view name = {}) {
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

  std::size_t indexTensor(std::int64_t length) {
    return valueOfIndexType(tensorType("i64", {length}));
  }
  std::size_t valueOfIndexType(const TensorType type) {
    auto c = candidates([&](const Val& v) { return v.type == type; });
    if (!c.empty() && ch_.flip(0.5)) return ch_.element(c);
    return freshSource(type, "idx");
  }

  std::size_t anyValue() {
    auto c = candidates([](const Val&) { return true; });
    if (c.empty()) return freshSource(poolType());
    return ch_.element(c);
  }

  Val& val(std::size_t i) { return vals_[i]; }
  Arg ref(std::size_t i) const { return pb_.ref(vals_[i].name); }

  Target* targetOf(const std::string& placeholder) {
    for (auto& t : buffers_)
      if (t.placeholder == placeholder) return &t;
    for (auto& t : userTargets_)
      if (t.placeholder == placeholder) return &t;
    return nullptr;
  }
  bool isBufferPlaceholder(const std::string& name) const {
    for (const auto& t : buffers_)
      if (t.placeholder == name) return true;
    return false;
  }

  // --- inputs --------------------------------------------------------------------------------

  void createInputs() {
    const std::size_t poolSize = static_cast<std::size_t>(ch_.pick(1, 3));
    for (std::size_t i = 0; i < poolSize; ++i) pool_.push_back(drawType());
    if (pol_.noPlaceholders) return;

    if (realistic() && ch_.flip(0.3)) {
      Val v;
      v.type = poolType();
      v.name = pb_.parameter("weight", v.type);
      v.isPlaceholder = true;
      v.kind = InputKind::Parameter;
      v.writable = false;
      addVal(std::move(v));
      feature("parameter");
    }
    const int maxBuffers = std::max(0, opt_.maxBuffers);
    std::int64_t count = (pol_.severalBuffers && maxBuffers >= 2) ? ch_.pick(2, maxBuffers)
                                                                  : ch_.pick(0, std::min(1, maxBuffers));
    static constexpr std::string_view kFqns[] = {"state", "cache", "count", "acc", "mem", "hist"};
    for (std::int64_t i = 0; i < count; ++i) {
      std::string fqn = std::string(kFqns[i % 6]);
      if (i >= 6) fqn += std::to_string(i / 6);
      if (i == 0 && pol_.fqnCollision) fqn = "x";
      TensorType type = (i > 0 && ch_.flip(0.5)) ? buffers_.back().type : poolType();
      Val v;
      v.type = type;
      v.name = pb_.buffer(fqn, type, !ch_.flip(0.1));
      v.isPlaceholder = true;
      v.kind = InputKind::Buffer;
      std::size_t idx = addVal(std::move(v));
      buffers_.push_back(Target{vals_[idx].name, fqn, type, {}});
    }
    if (count >= 2) feature("several_buffers");
    if (pol_.fqnCollision && count > 0) {
      newUserInput(buffers_.front().type, "x");
      feature("fqn_collision");
    }
    const std::int64_t inputs = ch_.pick(0, std::min(2, std::max(0, opt_.maxUserInputs)));
    for (std::int64_t i = 0; i < inputs; ++i) newUserInput(poolType());
  }

  // --- the body ------------------------------------------------------------------------------

  void emitOne() {
    std::vector<int> w(kFamilyCount, 0);
    w[kBinary] = 6;
    w[kUnary] = 3;
    w[kScalar] = 2;
    w[kReduce] = 2;
    w[kMatmul] = 1;
    w[kCat] = 1;
    w[kIndexSelect] = 1;
    if (pol_.copyViews) w[kCopyView] = 5, w[kSplit] = 1;
    if (pol_.realViews) w[kRealView] = 4, w[kSplit] = 1;
    if (pol_.inplaceOnValues) w[kInplaceValue] = 4;
    if (pol_.inplaceOnBuffers || (pol_.userInputMutation && realistic())) w[kInplaceTarget] = 3;
    if (pol_.kvCacheOps) w[kKvCache] = 3;
    if (pol_.listOps) w[kListOp] = 2;
    if (pol_.outVariants) w[kOutVariant] = 2;
    if (pol_.shareAlloc) w[kShareAlloc] = 2;
    if (pol_.schemaLess) w[kSchemaLess] = 2;
    if (pol_.mutableCustomOps) w[kMutableCustom] = 2;
    if (pol_.delegates) w[kDelegate] = 2;
    const auto family = static_cast<Family>(ch_.weighted(w));
    bool done = false;
    switch (family) {
      case kBinary: done = emitBinary(); break;
      case kUnary: done = emitUnary(); break;
      case kScalar: done = emitScalar(); break;
      case kReduce: done = emitReduce(); break;
      case kMatmul: done = emitMatmul(); break;
      case kCat: done = emitCat(); break;
      case kIndexSelect: done = emitIndexSelect(); break;
      case kCopyView: done = emitView(/*copy=*/true); break;
      case kRealView: done = emitView(/*copy=*/false); break;
      case kSplit: done = emitSplit(); break;
      case kInplaceValue: done = emitInplaceOnValue(); break;
      case kInplaceTarget: done = emitInplaceOnTarget(); break;
      case kKvCache: done = emitKvCache(); break;
      case kListOp: done = emitListOp(); break;
      case kOutVariant: done = emitOutVariant(); break;
      case kShareAlloc: done = emitShareAlloc(); break;
      case kSchemaLess: done = emitSchemaLess(); break;
      case kMutableCustom: done = emitMutableCustom(); break;
      case kDelegate: done = emitDelegate(); break;
      case kFamilyCount: break;
    }
    if (!done) emitBinary();  // always applicable: progress is guaranteed
  }

  // A partner for `a` in a broadcasting binary op: same dtype, broadcast within the cap.
  std::size_t broadcastPartner(std::size_t a) {
    const Dims da = vals_[a].dims;
    const std::string dtype = vals_[a].type.dtype;
    auto c = candidates([&](const Val& v) {
      if (v.type.dtype != dtype) return false;
      auto b = broadcastDims(da, v.dims);
      return b && numelOf(*b) <= cap();
    });
    if (c.empty() || ch_.flip(0.15)) return valueOfType(vals_[a].type);
    return ch_.element(c);
  }

  // A partner that broadcasts *to* `a`'s shape (in-place and out= ops keep the self shape).
  std::size_t partnerInto(const TensorType type) {
    const Dims d = dimsOf(type);
    auto c = candidates([&](const Val& v) { return v.type.dtype == type.dtype && broadcastsTo(v.dims, d); });
    if (c.empty() || ch_.flip(0.2)) return valueOfType(type);
    return ch_.element(c);
  }

  bool emitBinary() {
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

  bool emitUnary() {
    std::size_t a = anyValue();
    const TensorType t = vals_[a].type;
    std::vector<std::string> targets = {"aten::relu", "aten::clone"};
    if (t.dtype == "f32") targets.insert(targets.end(), {"aten::sigmoid", "aten::gelu", "aten::silu"});
    if (realistic()) targets.push_back("dim_order_ops::_clone_dim_order");
    fresh(pb_.call(ch_.element(targets), {ref(a)}, {}, t), t);
    return true;
  }

  bool emitScalar() {
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

  bool emitReduce() {
    auto a = choose([](const Val& v) { return !v.dims.empty(); });
    if (!a) return false;
    const TensorType t = vals_[*a].type;
    Dims dims = vals_[*a].dims;
    const std::int64_t d = ch_.pick(0, static_cast<std::int64_t>(dims.size()) - 1);
    std::vector<int> w = {3, 2, t.dtype == "f32" ? 2 : 0};
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

  bool emitMatmul() {
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

  bool emitCat() {
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

  bool emitIndexSelect() {
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

  // --- views -------------------------------------------------------------------------------

  struct ViewPlan {
    std::string kind;
    std::vector<Arg> args;  // after self
    Dims out;
    bool expands = false;
    bool keepsContiguity = true;
  };

  std::optional<ViewPlan> planView(std::string kind, const Dims& in, bool contiguous) {
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

  static std::string viewTarget(const std::string& kind, bool copy) {
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
  std::optional<std::size_t> viewBase() {
    auto ok = [&](const Val& v) { return pol_.viewsOfViews || !v.isView; };
    if (!buffers_.empty() && ch_.flip(0.5)) {
      if (auto b = choose([&](const Val& v) { return ok(v) && isBufferPlaceholder(v.base); })) return b;
    }
    return choose(ok);
  }

  // Registers the value a view op produced from `baseIndex`.
  std::size_t addViewVal(const std::string& name, std::size_t baseIndex, const TensorType& type,
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

  bool emitView(bool copy) {
    auto base = viewBase();
    if (!base) return false;
    std::vector<std::string> kinds = {"view", "slice", "select", "permute", "transpose", "t",
                                      "unsqueeze", "squeeze", "expand", "alias"};
    if (!copy) kinds.push_back("narrow");
    auto plan = planView(ch_.element(kinds), vals_[*base].dims, vals_[*base].contiguous);
    if (!plan) return false;
    const TensorType type = tensorType(vals_[*base].type.dtype, plan->out);
    std::vector<Arg> args = {ref(*base)};
    args.insert(args.end(), plan->args.begin(), plan->args.end());
    const std::string n = pb_.call(viewTarget(plan->kind, copy), std::move(args), {}, type);
    addViewVal(n, *base, type, plan->expands, plan->keepsContiguity, copy);
    return true;
  }

  bool emitSplit() {
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

  // --- in-place ------------------------------------------------------------------------------

  // Emits an in-place op writing `self` (a writable value) and registers its aliasing result.
  std::string emitInplace(std::size_t self, bool indexStyleOnly) {
    const TensorType t = vals_[self].type;
    const Dims dims = vals_[self].dims;
    const std::string selfName = vals_[self].name;
    std::vector<int> w = {indexStyleOnly ? 0 : 4, indexStyleOnly ? 0 : 2, indexStyleOnly ? 0 : 2,
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
    const std::size_t s = byName_.at(selfName);
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

  bool emitInplaceOnValue() {
    auto self = choose([](const Val& v) { return v.writable && !v.isPlaceholder; });
    if (!self) return false;
    emitInplace(*self, /*indexStyleOnly=*/false);
    feature("inplace_on_value");
    return true;
  }

  // In-place on a buffer (or, with user-input mutation, a user input), or on the latest
  // value of its in-place chain. Realistic: what reinplace makes of index_put / index_copy,
  // and the update then is the target's mutation value.
  bool emitInplaceOnTarget() {
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
  bool emitKvCache() {
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
      vals_[byName_.at(selfName)].retired = true;
    }
    return true;
  }

  // A mutable op wrote the placeholder `name` directly (custom op after
  // unsafe_remove_auto_functionalized_pass): realistic export returns the placeholder itself
  // as the mutation value.
  void noteDirectWrite(const std::string& name) {
    if (!realistic()) return;
    if (Target* t = targetOf(name); t && t->forcedValue.empty()) t->forcedValue = name;
  }

  bool emitListOp() {
    const std::int64_t count = ch_.pick(1, 3);
    std::vector<std::size_t> items;
    for (std::int64_t i = 0; i < count; ++i) {
      auto v = choose([&](const Val& x) {
        return x.writable && std::find(items.begin(), items.end(), byName_.at(x.name)) == items.end();
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
      for (const auto& name : names) others.push_back(vals_[partnerInto(vals_[byName_.at(name)].type)].name);
      pb_.call("aten::_foreach_add_.List", {pb_.refList(names), pb_.refList(others)});
    }
    for (const auto& n : names) noteDirectWrite(n);
    feature("list_op");
    return true;
  }

  bool emitOutVariant() {
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
    const std::size_t o = byName_.at(outName);
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
  bool emitShareAlloc() {
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
    const std::size_t s = byName_.at(aName);
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

  // An op without a schema: an undeclared custom op (half the time), a call_module, or a
  // higher-order op as torch.export prints them (cond with its branch submodules,
  // wrap_with_set_grad_enabled with its body), whose results are getitems.
  bool emitSchemaLess() {
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

  bool emitHigherOrder(std::vector<Arg> operands, const TensorType& t, bool writable) {
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

  bool emitMutableCustom() {
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

  std::string storageOf(const Val& v) const { return v.base.empty() ? v.name : v.base; }

  // An op that writes two arguments (`(a!)` and `(b!)`): batch norm in training mode updating
  // its running mean and variance, when the two states fit it, else the generator's
  // wbgen::update_pair. The second state lives in other storage than the first: an analysis
  // that takes only an op's first written argument must see a write it misses.
  bool emitTwoWrites(std::size_t first) {
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

  bool emitDelegate() {
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

  // --- outputs -------------------------------------------------------------------------------

  // A new node whose value has `target`'s type and depends on the target: the plain update
  // `target = f(target, ...)`.
  std::string emitUpdate(const Target target) {
    const std::size_t self = byName_.at(target.placeholder);
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
  std::string mutationValue(const Target target, const std::vector<std::string>& mutated) {
    const TensorType& type = target.type;
    enum { kFresh, kPlaceholder, kSameLineage, kOtherLineage, kDependent };
    std::vector<int> w = {6, pol_.placeholderValues ? 3 : 0, pol_.lineageSameTarget ? 3 : 0,
                          pol_.lineageOtherTarget ? 2 : 0, pol_.dependentCopies ? 3 : 0};
    auto anyTyped = [&](const auto& pred) -> std::optional<std::string> {
      std::vector<std::string> names;
      for (const Val& v : vals_)
        if (v.type == type && pred(v)) names.push_back(v.name);
      if (names.empty()) return std::nullopt;
      return ch_.element(names);
    };
    switch (ch_.weighted(w)) {
      case kPlaceholder:
        if (auto v = anyTyped([](const Val& v) { return v.isPlaceholder; })) return *v;
        break;
      case kSameLineage:
        if (auto v = anyTyped([&](const Val& v) { return v.lineage == target.placeholder; })) return *v;
        if (!vals_[byName_.at(target.placeholder)].retired) return emitInplace(byName_.at(target.placeholder), realistic());
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
        const std::size_t o = byName_.at(other);
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

  void chooseOutputs() {
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
    std::set<std::string> used;
    for (const Node& n : pb_.body()) {
      auto use = [&](NodeId r) { used.insert(pb_.nameOf(r)); };
      for (const Arg& a : n.args) forEachRef(a, use);
      for (const auto& kv : n.kwargs) forEachRef(kv.second, use);
    }
    std::vector<std::string> userOutputs;
    if (realistic()) {
      for (const Val& v : vals_)
        if (!v.isPlaceholder && !used.contains(v.name) && userOutputs.size() < 6) {
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

  void recordMutationFeatures(const std::map<std::string, std::string>& value) {
    for (const auto& [target, v] : value) {
      const Val& mv = vals_[byName_.at(v)];
      if (mv.isPlaceholder) feature("placeholder_value");
      if (mv.isPlaceholder && mv.name != target && isBufferPlaceholder(mv.name)) feature("buffer_value_other");
      if (mv.lineage == target) feature("lineage_same_target");
      if (!mv.lineage.empty() && mv.lineage != target) feature("lineage_other_target");
      if (mv.base != target && value.contains(mv.base)) {
        feature("dependent_copy");
        const std::string& back = value.at(mv.base);
        if (vals_[byName_.at(back)].base == target) feature("cyclic_copy");
      }
    }
  }

  Choices& ch_;
  const GenOptions& opt_;
  ProgramBuilder pb_;
  GenMode mode_ = GenMode::Realistic;
  Policy pol_;
  std::vector<TensorType> pool_;
  std::vector<Val> vals_;
  std::map<std::string, std::size_t> byName_;
  std::vector<Target> buffers_;
  std::vector<Target> userTargets_;
  int userInputs_ = 0;
  int delegates_ = 0;
  int submodules_ = 0;  // call_module targets and higher-order ops' submodules
  std::set<std::string> features_;
};

}  // namespace

Generator::Generator(GenOptions options) : Generator(std::move(options), builtinSchemas()) {}
Generator::Generator(GenOptions options, SchemaTable schemas)
    : options_(std::move(options)), schemas_(std::move(schemas)) {}

Generated Generator::generate(Choices& choices) const {
  return Session(choices, options_, schemas_).run();
}

Program generateProgram(Choices& choices, const GenOptions& options) {
  return Generator(options).generate(choices).program;
}

Program generateFromSeed(std::uint64_t seed, const GenOptions& options) {
  RandomChoices choices(seed);
  return generateProgram(choices, options);
}

Program generateFromBytes(std::span<const std::uint8_t> bytes, const GenOptions& options) {
  ByteChoices choices(bytes);
  return generateProgram(choices, options);
}

}  // namespace wb::gen
