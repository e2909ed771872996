// gen/generator.cpp: the choice-driven random program generator (DESIGN §9).
//
// A Session builds one program: it draws a mode and a Policy, creates buffers and inputs from
// a small pool of types (so that values of a buffer's type are common), emits a body of ops
// chosen among the families the policy enables, and finally chooses mutation values and user
// outputs. Every op is emitted only when its operands exist with fitting types, and the
// generator's own model of each value (type, storage base, in-place lineage, writability)
// keeps what it emits valid; nothing is filtered afterwards.
//
// This file holds the Generator API and a case's course: Session::run, the mode and policy, the
// inputs, and the loop that picks an op family per body node. gen/session.h declares the rest.
#include "gen/generator.h"

#include <algorithm>
#include <array>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/reinplace_domain.h"
#include "gen/program_builder.h"
#include "gen/session.h"

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

namespace detail {

Generated Session::run() {
  drawModeAndPolicy();
  // Room for the usual program: a body of at most maxNodes plus the few nodes an op family or
  // the outputs add beyond it, and the placeholders.
  const std::size_t expected = static_cast<std::size_t>(std::clamp(opt_.maxNodes, 0, 1000)) + 8;
  pb_.reserve(expected);
  vals_.reserve(expected);
  createInputs();
  const std::int64_t nodes = ch_.pick(0, std::max(0, opt_.maxNodes));
  while (static_cast<std::int64_t>(pb_.body().size()) < nodes) emitOne();
  chooseOutputs();
  Generated g;
  g.mode = mode_;
  g.policy = pol_;
  g.program = std::move(pb_).finish();
  keepAnnotationsInReinplacesDomain(g.program);
  // In name order, as a std::set<std::string> of them was.
  std::sort(features_.begin(), features_.end());
  g.features.assign(features_.begin(), features_.end());
  return g;
}

// Annotations only where reinplace makes them (DESIGN §7): the argument is retired when the
// node is made (no later node uses it), but whether an output mutates a placeholder, and
// whether the node gets a user, is known only now. An annotation outside the domain is
// dropped (the node stays, a plain functional op).
void Session::keepAnnotationsInReinplacesDomain(Program& program) {
  for (const AnnotationOutsideDomain& outside : annotationsOutsideReinplaceDomain(program))
    program.graph.nodes[outside.node].meta.clear();
  bool any = false;
  for (const Node& n : program.graph.nodes) any = any || n.shareAllocArgIndex().has_value();
  if (!any) std::erase(features_, std::string_view("share_alloc"));
}

void Session::drawModeAndPolicy() {
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

Dims Session::drawDims() {
  const int maxRank = std::clamp(opt_.maxRank, 0, 4);
  const std::int64_t cap = std::max<std::int64_t>(1, opt_.maxShapeElements);
  constexpr std::array<int, 5> kRankWeights = {2, 4, 4, 2, 1};
  const std::size_t rank = ch_.weighted(std::span<const int>(kRankWeights).first(static_cast<std::size_t>(maxRank) + 1));
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
TensorType Session::drawType() {
  std::vector<std::int64_t> dims = drawDims();
  return tensorType(ch_.flip(0.25) ? "i64" : "f32", dims);
}

void Session::createInputs() {
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
    // A string, not the literal: GCC 12 -O2 takes assigning a literal here for an overlapping
    // memcpy (-Wrestrict false positive, CMakeLists.txt).
    if (i == 0 && pol_.fqnCollision) fqn = std::string("x");
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

void Session::emitOne() {
  std::array<int, kFamilyCount> w{};
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

}  // namespace detail

Generator::Generator(GenOptions options) : Generator(std::move(options), builtinSchemas()) {}
Generator::Generator(GenOptions options, SchemaTable schemas)
    : options_(std::move(options)), schemas_(std::move(schemas)) {}

Generated Generator::generate(Choices& choices) const {
  return detail::Session(choices, options_, schemas_).run();
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
