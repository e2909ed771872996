// gen/session.h: internal to gen/, not part of the public API (that is gen/generator.h): the
// Session that builds one program, and the helpers its parts share. Session's members are
// defined by concept: the case's course in gen/generator.cpp, the value model in
// gen/session_values.cpp, the op families in gen/emit_*.cpp, the outputs in gen/session_outputs.cpp.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "core/ir.h"
#include "core/name_index.h"
#include "core/schema.h"
#include "gen/choices.h"
#include "gen/generator.h"
#include "gen/program_builder.h"

namespace wb::gen::detail {

using Dims = std::vector<std::int64_t>;

inline std::int64_t numelOf(const Dims& dims) {
  std::int64_t n = 1;
  for (std::int64_t d : dims) n *= d;
  return n;
}

// NumPy broadcasting of two shapes: f(i, d) for each dimension d of the result, in order (i
// counts from the leading one); false, after the dimensions before it, at the first pair that
// does not broadcast. The helpers below ask it without building the shape (the generator asks
// of every candidate partner).
template <typename F>
bool forEachBroadcastDim(const Dims& a, const Dims& b, F&& f) {
  const std::size_t rank = std::max(a.size(), b.size());
  for (std::size_t i = 0; i < rank; ++i) {
    const std::int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const std::int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) return false;
    if (!f(i, std::max(da, db))) return false;
  }
  return true;
}

// The broadcast shape, or nullopt.
inline std::optional<Dims> broadcastDims(const Dims& a, const Dims& b) {
  Dims out;
  out.reserve(std::max(a.size(), b.size()));
  if (!forEachBroadcastDim(a, b, [&](std::size_t, std::int64_t d) { return out.push_back(d), true; })) return std::nullopt;
  return out;
}

// numelOf(*broadcastDims(a, b)), or nullopt when they do not broadcast.
inline std::optional<std::int64_t> broadcastNumel(const Dims& a, const Dims& b) {
  std::int64_t n = 1;
  if (!forEachBroadcastDim(a, b, [&](std::size_t, std::int64_t d) { return n *= d, true; })) return std::nullopt;
  return n;
}

// Whether broadcastDims(from, to) == to.
inline bool broadcastsTo(const Dims& from, const Dims& to) {
  return from.size() <= to.size() && forEachBroadcastDim(from, to, [&](std::size_t i, std::int64_t d) { return d == to[i]; });
}

// The indices of the values one choice is made among: inline up to kInline (the fuzz targets'
// programs have fewer values), on the heap beyond. The generator chooses among candidates
// several times per node, and a vector per choice was a tenth of its allocations.
class Candidates {
 public:
  void push_back(std::size_t i) {
    if (size_ < kInline) {
      inline_[size_] = i;
    } else {
      if (size_ == kInline) heap_.assign(inline_.begin(), inline_.end());
      heap_.push_back(i);
    }
    ++size_;
  }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  std::size_t operator[](std::size_t k) const { return size_ <= kInline ? inline_[k] : heap_[k]; }

 private:
  static constexpr std::size_t kInline = 48;
  std::array<std::size_t, kInline> inline_;
  std::vector<std::size_t> heap_;
  std::size_t size_ = 0;
};

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
  Session(const Session&) = delete;  // byName_ refers to vals_
  Session& operator=(const Session&) = delete;

  // gen/generator.cpp
  Generated run();
  void keepAnnotationsInReinplacesDomain(Program& program);

 private:
  bool realistic() const { return mode_ == GenMode::Realistic; }
  // Records a feature (a name of featureNames(), a literal) once.
  void feature(std::string_view name) {
    if (std::find(features_.begin(), features_.end(), name) == features_.end()) features_.push_back(name);
  }
  // The index in vals_ of the value named `name` (std::out_of_range if there is none).
  std::size_t indexOf(std::string_view name) const {
    const std::uint32_t i = byName_.find(name);
    if (i == decltype(byName_)::kNone) throw std::out_of_range("generator: no value named " + std::string(name));
    return i;
  }

  // --- gen/generator.cpp: mode, policy, types, inputs, the body -----------------------------
  void drawModeAndPolicy();
  Dims drawDims();
  TensorType drawType();
  const TensorType& poolType() { return ch_.element(pool_); }
  std::int64_t cap() const { return std::max<std::int64_t>(1, opt_.maxShapeElements); }
  void createInputs();
  void emitOne();

  // --- gen/session_values.cpp: values and targets ---------------------------------------------
  std::size_t addVal(Val v);
  std::size_t fresh(const std::string& name, TensorType type, bool writable = true);

  // The predicates are lambdas: a template, not std::function, so that no call allocates a
  // closure (the fuzz targets generate a program per input, under ASan).
  template <typename Pred>
  Candidates candidates(const Pred& pred) const {
    Candidates out;
    for (std::size_t i = 0; i < vals_.size(); ++i)
      if (!vals_[i].retired && pred(vals_[i])) out.push_back(i);
    return out;
  }

  // One of `c` (not empty), drawn as Choices::element draws from a vector.
  std::size_t pick(const Candidates& c) { return c[ch_.index(c.size())]; }

  template <typename Pred>
  std::optional<std::size_t> choose(const Pred& pred) {
    auto c = candidates(pred);
    if (c.empty()) return std::nullopt;
    return pick(c);
  }

  std::size_t valueOfType(const TensorType type);
  std::size_t freshSource(const TensorType type, std::string_view inputName = {});
  std::size_t newUserInput(const TensorType type, std::string_view name = {});
  std::size_t indexTensor(std::int64_t length);
  std::size_t valueOfIndexType(const TensorType type);
  std::size_t anyValue();
  Val& val(std::size_t i) { return vals_[i]; }
  Arg ref(std::size_t i) const { return pb_.ref(vals_[i].name); }
  Target* targetOf(const std::string& placeholder);
  bool isBufferPlaceholder(const std::string& name) const;
  std::size_t broadcastPartner(std::size_t a);
  std::size_t partnerInto(const TensorType type);

  // --- gen/emit_compute.cpp -------------------------------------------------------------------
  bool emitBinary();
  bool emitUnary();
  bool emitScalar();
  bool emitReduce();
  bool emitMatmul();
  bool emitCat();
  bool emitIndexSelect();

  // --- gen/emit_views.cpp ---------------------------------------------------------------------
  struct ViewPlan {
    std::string_view kind;  // one of emitView's literals
    std::vector<Arg> args;  // after self
    Dims out;
    bool expands = false;
    bool keepsContiguity = true;
  };

  std::optional<ViewPlan> planView(std::string_view kind, const Dims& in, bool contiguous);
  static std::string viewTarget(std::string_view kind, bool copy);
  std::optional<std::size_t> viewBase();
  std::size_t addViewVal(const std::string& name, std::size_t baseIndex, const TensorType& type,
                         bool expands, bool keepsContiguity, bool copy);
  bool emitView(bool copy);
  bool emitSplit();

  // --- gen/emit_writes.cpp --------------------------------------------------------------------
  std::string emitInplace(std::size_t self, bool indexStyleOnly);
  bool emitInplaceOnValue();
  bool emitInplaceOnTarget();
  bool emitKvCache();
  void noteDirectWrite(const std::string& name);
  bool emitListOp();
  bool emitOutVariant();
  bool emitShareAlloc();
  bool emitMutableCustom();
  std::string storageOf(const Val& v) const { return v.base.empty() ? v.name : v.base; }
  bool emitTwoWrites(std::size_t first);

  // --- gen/emit_schemaless.cpp ----------------------------------------------------------------
  bool emitSchemaLess();
  bool emitHigherOrder(std::vector<Arg> operands, const TensorType& t, bool writable);
  bool emitDelegate();

  // --- gen/session_outputs.cpp ----------------------------------------------------------------
  std::string emitUpdate(const Target target);
  std::string mutationValue(const Target target, const std::vector<std::string>& mutated);
  void chooseOutputs();
  void recordMutationFeatures(const std::map<std::string, std::string>& value);

  Choices& ch_;
  const GenOptions& opt_;
  ProgramBuilder pb_;
  GenMode mode_ = GenMode::Realistic;
  Policy pol_;
  std::vector<TensorType> pool_;
  std::vector<Val> vals_;
  // Value names are node names, which the builder makes unique: one value per name.
  struct ValName {
    const std::vector<Val>* vals;
    std::string_view operator()(std::uint32_t i) const { return (*vals)[i].name; }
  };
  FlatNameIndex<ValName> byName_{ValName{&vals_}, 16};
  std::vector<Target> buffers_;
  std::vector<Target> userTargets_;
  int userInputs_ = 0;
  int delegates_ = 0;
  int submodules_ = 0;  // call_module targets and higher-order ops' submodules
  std::vector<std::string_view> features_;  // in the order first recorded
};

}  // namespace wb::gen::detail
