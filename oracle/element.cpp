// oracle/element.cpp: the element tier (DESIGN §7): real strided tensors of 64-bit integers.
//
// Compilation does everything that does not depend on data: since shapes are static and
// aliasing in a graph is static (which storage a value lives in, at which offset, with which
// strides), every node's layout is fixed at compile time, every storage gets a fixed range of
// one arena, and every read or write becomes a precomputed run of arena offsets (a range when
// contiguous, else a list in the program's offset pool). A run is then a sequence of steps,
// plain records in one vector: read operands (contiguous ones in place, others gathered into
// scratch), compute, scatter the results. Views cost nothing at run time in the storage model;
// they are layouts. Compiles that agree up to some node (the view modes, F, a program and its
// placed version) share the work up to it (ElementCompiler::compileShared).
//
// Element semantics:
// - Every element is a 64-bit integer, whatever the dtype; arithmetic (add, sub, rsub, mul,
//   neg, sum, mean) is exact with wrap-around (unsigned arithmetic). mean = sum / count, the
//   sum read as a signed 64-bit integer and divided with truncation toward zero (count > 0).
//   A float scalar argument is its integer value when integral, else a hash of its bits.
// - A boolean (condition, mask) is the lowest bit of an element.
// - Index values are taken modulo the dimension (read as signed, result non-negative).
// - Every other op with a schema: each output element = H(op, inputs, channel, position),
//   with shapes from the node's annotation. An in-place or mutating uninterpreted op writes
//   H(op, inputs, k, position) into each written argument k; its result, if it aliases
//   argument k, is that argument (storage model) or a fresh tensor with the same contents
//   (value model), so S_par and F agree on well-formed programs. Under F a written argument
//   that is not an in-place-kind op's returned self is rebound to a fresh tensor with those
//   contents (oracle.h: mutable custom ops, out=, Tensor(a!)[] lists).
// - Results of a tuple-returning node (printed without an annotation) take their shapes from
//   the annotations of the getitems that take them; an element no getitem takes needs none.
// - Schema-less targets (custom ops without a schema, delegates, higher-order ops,
//   call_module): all tensor arguments are read; results are fresh (hashed, shaped by the
//   annotation, or an opaque digest when there is none); arguments are NOT written. Why: the
//   alias analysis treats these conservatively (may read, write and alias every argument), so
//   a correct placement orders copies after them whatever they do; choosing "no writes, fresh
//   results" keeps S_par == F for delegate graphs (a write would make every delegate program an
//   ill-formed finding) and never contradicts the analysis. The verdict for a placement that
//   respects the analysis does not depend on this choice.
#include <algorithm>
#include <array>
#include <cstring>
#include <optional>
#include <type_traits>
#include <utility>

#include "oracle/ops.h"

namespace wb::oracle::detail {

namespace {

using Buffer = std::vector<std::uint64_t>;

// A compile error: the program cannot be run in the element tier.
struct Unsupported {
  std::string why;
};

// Sizes or strides, stored inline: layouts are copied with every value a compile resolves, so
// a heap allocation per shape dominated compile time, and the copies' size still shows (a
// Layout is two Shapes). A rank above kMaxRank is left to the storage tier (a compile error
// that says so); PyTorch programs stay below it (the generator's ranks are at most 4, a few
// unsqueezes more after views).
class Shape {
 public:
  static constexpr std::size_t kMaxRank = 8;
  // The array is not zeroed: only [0, size) is ever read (values are built by the thousand in
  // a compile, and zeroing their layouts showed in profiles). Copies copy the bytes (memcpy:
  // well-defined on the uninitialised tail, and as fast as the trivial copy).
  Shape() {}
  Shape(const Shape& other) noexcept { std::memcpy(static_cast<void*>(this), &other, sizeof(Shape)); }
  Shape& operator=(const Shape& other) noexcept {
    if (this != &other) std::memcpy(static_cast<void*>(this), &other, sizeof(Shape));
    return *this;
  }
  Shape(std::size_t n, std::int64_t value) { assign(n, value); }
  Shape(std::initializer_list<std::int64_t> values) {
    for (std::int64_t v : values) push_back(v);
  }
  explicit Shape(const std::vector<std::int64_t>& values) {
    for (std::int64_t v : values) push_back(v);
  }

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  std::int64_t& operator[](std::size_t i) { return data_[i]; }
  std::int64_t operator[](std::size_t i) const { return data_[i]; }
  std::int64_t* begin() { return data_.data(); }
  std::int64_t* end() { return data_.data() + size_; }
  const std::int64_t* begin() const { return data_.data(); }
  const std::int64_t* end() const { return data_.data() + size_; }
  void clear() { size_ = 0; }
  void push_back(std::int64_t v) {
    if (size_ == kMaxRank) tooLarge();
    data_[size_++] = v;
  }
  // Size n, elements not set (the caller sets every one).
  void resizeUnset(std::size_t n) {
    if (n > kMaxRank) tooLarge();
    size_ = static_cast<std::uint8_t>(n);
  }
  void assign(std::size_t n, std::int64_t value) {
    if (n > kMaxRank) tooLarge();
    std::fill_n(data_.begin(), n, value);
    size_ = static_cast<std::uint8_t>(n);
  }
  std::int64_t* insert(std::int64_t* at, std::int64_t v) {
    if (size_ == kMaxRank) tooLarge();
    std::copy_backward(at, end(), end() + 1);
    *at = v;
    ++size_;
    return at;
  }
  std::int64_t* erase(std::int64_t* at) {
    std::copy(at + 1, end(), at);
    --size_;
    return at;
  }
  // A loop: ranks are small, and std::equal on integers is a call to memcmp.
  friend bool operator==(const Shape& a, const Shape& b) {
    if (a.size_ != b.size_) return false;
    for (std::size_t i = 0; i < a.size_; ++i)
      if (a.data_[i] != b.data_[i]) return false;
    return true;
  }

 private:
  [[noreturn]] static void tooLarge() {
    throw Unsupported{"rank above " + std::to_string(kMaxRank) + " (element tier)"};
  }
  std::array<std::int64_t, kMaxRank> data_;
  std::uint8_t size_ = 0;
};

struct Layout {
  std::uint32_t storage = 0;
  std::int64_t offset = 0;
  Shape sizes;
  Shape strides;

  Layout() {}
  // One copy of the record's bytes, as CValue's (see there).
  Layout(const Layout& other) noexcept { std::memcpy(static_cast<void*>(this), &other, sizeof(Layout)); }
  Layout& operator=(const Layout& other) noexcept {
    if (this != &other) std::memcpy(static_cast<void*>(this), &other, sizeof(Layout));
    return *this;
  }
};

std::int64_t numelOf(const Shape& shape) {
  std::int64_t n = 1;
  for (std::int64_t s : shape) n *= s;
  return n;
}

// The next index of a row-major walk over `sizes` (the last dimension fastest); past the last
// element it wraps to all zeros.
void advanceRowMajor(Shape& idx, const Shape& sizes) {
  for (std::size_t d = idx.size(); d-- > 0;) {
    if (++idx[d] < sizes[d]) return;
    idx[d] = 0;
  }
}

// advanceRowMajor over the first idx.size() dimensions of a strided layout, keeping `pos` (the
// storage position of idx) up to date.
void advanceStrided(Shape& idx, const Shape& sizes, const Shape& strides, std::int64_t& pos) {
  for (std::size_t d = idx.size(); d-- > 0;) {
    if (++idx[d] < sizes[d]) {
      pos += strides[d];
      return;
    }
    pos -= strides[d] * (sizes[d] - 1);
    idx[d] = 0;
  }
}

// The row-major strides of `sizes`, written into `strides` (in place: a Shape is a large record).
void setContiguousStrides(const Shape& sizes, Shape& strides) {
  const std::size_t rank = sizes.size();
  strides.resizeUnset(rank);
  if (rank == 0) return;
  strides[rank - 1] = 1;
  for (std::size_t i = rank - 1; i-- > 0;) strides[i] = strides[i + 1] * std::max<std::int64_t>(sizes[i + 1], 1);
}

Shape contiguousStrides(const Shape& sizes) {
  Shape strides;
  setContiguousStrides(sizes, strides);
  return strides;
}

bool isContiguous(const Layout& l) {
  std::int64_t expected = 1;
  for (std::size_t i = l.sizes.size(); i-- > 0;) {
    if (l.sizes[i] == 1) continue;
    if (l.strides[i] != expected) return false;
    expected *= l.sizes[i];
  }
  return true;
}

// A compile-time value: what a node or an argument denotes.
struct CValue {
  // The small fields first, packed (no padding between them): a value is copied whole.
  enum class Kind : std::uint8_t { None, Int, Float, Bool, Text, Tensor, List, Opaque };
  Kind kind = Kind::None;
  bool b = false;
  std::uint32_t slot = 0;  // Opaque: index of its runtime digest
  // List: its items, at ElementCompiler::lists_[itemsAt, itemsAt + itemsCount). Held there
  // rather than in a vector of its own, so that a CValue is a plain record: a fork copies
  // every node's value, and copying and destroying their vectors showed.
  std::uint32_t itemsAt = 0, itemsCount = 0;
  std::int64_t i = 0;  // Int, Bool; Text: the hash of the text
  double f = 0;
  Layout t;

  // User-provided, so that a value-initialised CValue (resize(), newList(), CValue{}) gets the
  // initialisers above without the whole record zeroed first (a Shape's tail past its size is
  // never read; see Shape): values are made by the hundred per compile and fork.
  CValue() {}
  // One copy of the record's bytes (every field is plain data, a Shape's copy is its bytes
  // too), rather than field by field: values are copied by the hundred per compile and fork.
  CValue(const CValue& other) noexcept { std::memcpy(static_cast<void*>(this), &other, sizeof(CValue)); }
  CValue& operator=(const CValue& other) noexcept {
    if (this != &other) std::memcpy(static_cast<void*>(this), &other, sizeof(CValue));
    return *this;
  }

  bool isTensor() const { return kind == Kind::Tensor; }
  bool isNone() const { return kind == Kind::None; }
};

// The records a program is made of (Span, Operand, Source, EndWrite, Step) are trivial types:
// no default member initialisers, so that the pools holding them are copied (forks, replay())
// with one memmove rather than element by element. Every one is made value-initialised
// (`Step k{}`: all fields zero, which is what each field's default is).

// A run of arena elements, in order: arena[at + i] when contiguous (most layouts: every fresh
// tensor), else arena[offsets[at + i]] (the program's offset pool). Contiguous runs are never
// materialised as offset lists, which is most of what compiling used to allocate.
struct Span {
  std::uint32_t at;
  std::uint32_t count;
  bool listed;
};

// An operand of a kernel: elements read from the arena, or a broadcast constant.
struct Operand {
  Span span;
  std::uint64_t constant;
  bool isConstant;
  std::uint32_t count;  // elements (constants: how many copies)
};

// Where an observation or a node hash reads from: the concatenation of a range of spans.
struct Source {
  enum class Kind : std::uint8_t { Constant, Offsets, Opaque };
  Kind kind;
  std::uint64_t constant;
  std::uint32_t slot;
  std::uint32_t spansAt, spansCount;  // into ElementProgram::spans
};

struct EndWrite {
  Span target;  // the placeholder's storage
  Span value;   // the mutation value, broadcast to the target's shape
};

// What a step does. Steps are plain records interpreted by one switch (no closure per step):
// compiling a program allocates a few pools instead of several objects per node.
// The zero enumerators (a value-initialised Step's) are Kernel and Copy.
enum class StepKind : std::uint8_t {
  Kernel,         // gather operands, compute into a scratch buffer, scatter into dest
  FillSeed,       // dest[i] = inputElement(seed, inputSet, a, i)
  SetOpaque,      // opaque[slot] = a
  FillHash,       // dest[e] = combine(combine(opaque[from], b), e)
  OpaqueCombine,  // opaque[slot] = combine(opaque[from], b)
  Digest,         // opaque[slot] = fold of a, the elements of spans, then the opaque slots
  Copy,           // dest[e] = src[e], element by element (disjoint storages)
};

// The computation of a Kernel step.
enum class Compute : std::uint8_t {
  Copy,
  Add, Sub, Rsub, Mul,  // out = in0 op in1 (alpha = a)
  Neg, Arange,          // Arange: out[e] = a + b * e
  Where, MaskedFill,
  Reduce,        // out[map[e]] += in0[e]; mean (flag): divided by a (signed)
  IndexTensor,   // advanced indexing (mapA: base positions, mapB: index positions, dims)
  IndexPut,      // the same, written (flag: accumulate; valuesAt: the values operand)
  IndexSelect,   // along one dim (mapA: base positions, mapB: coordinates)
  IndexCopyAdd,  // flag: add (alpha = a)
  Scatter,       // mapA: base positions, mapB: source positions; flag: add; flag2: constant source
  Assemble,      // pieces (listAt/listCount: position lists in spans) over the output; flag: start from self
};

struct Step {
  StepKind kind;
  Compute compute;
  bool flag, flag2;
  Span dest, src;
  std::uint32_t slot, from;
  std::uint64_t a, b;
  std::int64_t dimSize, dimStride;
  std::uint32_t operandsAt, operandsCount;  // Kernel: into operands
  std::uint32_t listAt, listCount;  // Digest, Assemble: into spans; Index*: (size, stride) pairs into ints
  std::uint32_t slotsAt, slotsCount;  // Digest: opaque slots, into offsets
  std::uint32_t mapA, mapB, mapCount;  // per-op index tables, into offsets
  std::uint32_t outSize, valuesAt;
};
static_assert(std::is_trivial_v<Span> && std::is_trivial_v<Operand> && std::is_trivial_v<Source> &&
              std::is_trivial_v<EndWrite> && std::is_trivial_v<Step>);

// A run's state: its buffers (borrowed from the caller's RunScratch for the run, so a warm
// run allocates nothing) and its inputs.
struct RunState : RunScratch {
  std::uint64_t seed = 0;
  int inputSet = 0;
};

// A vector whose copies keep room to grow. A fork (a copy of a compiler, see
// ElementCompiler::forkAt) goes on appending to every pool it copied; an exact-size copy
// would be moved again at its first append.
template <typename T>
class Pool : public std::vector<T> {
 public:
  Pool() = default;
  Pool(const Pool& other) : std::vector<T>() {
    this->reserve(other.size() + other.size() / 2 + 16);
    this->insert(this->end(), other.begin(), other.end());
  }
  Pool(Pool&&) noexcept = default;
  Pool& operator=(const Pool&) = default;
  Pool& operator=(Pool&&) noexcept = default;
};

}  // namespace

struct ElementProgram {
  bool valueModel = false;
  bool dependsOnViewMode = false;  // some `*_copy` view variant was compiled
  std::size_t replayedNodes = 0;    // nodes copied from the parent's compile (see replay())
  std::size_t arenaSize = 0;
  std::size_t opaqueSlots = 0;
  Pool<Step> steps;                 // every node's steps, in graph order
  Pool<std::uint32_t> nodeStepEnd;  // per node: end of its steps in `steps`
  // Pools the steps and sources point into.
  Pool<std::uint32_t> offsets;  // arena offsets of listed spans, index tables, slots
  Pool<Span> spans;
  Pool<Operand> operands;
  Pool<std::int64_t> ints;
  std::vector<Source> nodeResults;  // per node (traceNodes only)
  std::vector<std::pair<std::string, Source>> placeholders;
  struct Output {
    // The label ("output 1 (%add)", see observationLabel) is made only when a report needs it:
    // made here, it was an allocation per output in every compile and every fork.
    std::optional<std::string> node;  // the returned node's name, if the output is a reference
    Source reference{};               // Par, Seq, Value
    std::optional<Source> placed;     // Placed, where it differs (a user-input mutation's value)
  };
  std::vector<Output> outputs;
  std::vector<EndWrite> endWrites;  // in output-spec order
  // Forks (ElementCompiler::forkAt): a program forked from another starts with that one's
  // first `forkedAt.step` steps, which touch only arena[0, forkedAt.arena) and opaque slots
  // [0, forkedAt.opaque). So a run of it may start from the other's run state there, which
  // that run keeps at each of its forkPoints (RunScratch::forkStates). forkedFrom is null for
  // a program compiled from the start, or when the one it was forked from failed to compile.
  struct ForkPoint {
    std::uint32_t step = 0;
    std::size_t arena = 0, opaque = 0;
  };
  std::shared_ptr<const ElementProgram> forkedFrom;
  ForkPoint forkedAt;
  std::vector<ForkPoint> forkPoints;  // where other programs were forked from this one, by step
};

namespace {

// ---------------------------------------------------------------------------------------------
// Run-time helpers.

// Calls f(i, arenaOffset) for every element of a span, in order.
template <typename F>
inline void forEachOffset(const ElementProgram& p, Span s, F&& f) {
  if (s.listed) {
    const std::uint32_t* o = p.offsets.data() + s.at;
    for (std::uint32_t i = 0; i < s.count; ++i) f(i, o[i]);
  } else {
    for (std::uint32_t i = 0; i < s.count; ++i) f(i, s.at + i);
  }
}

// The elements of a span: a pointer into the arena when contiguous, else gathered into `buf`.
inline const std::uint64_t* elementsOf(const ElementProgram& p, const RunState& st, Span s, Buffer& buf) {
  if (!s.listed) return st.arena.data() + s.at;
  buf.resize(s.count);
  const std::uint64_t* arena = st.arena.data();
  const std::uint32_t* o = p.offsets.data() + s.at;
  for (std::uint32_t i = 0; i < s.count; ++i) buf[i] = arena[o[i]];
  return buf.data();
}

void gather(const ElementProgram& p, const RunState& st, Span s, Buffer& out) {
  out.resize(s.count);
  const std::uint64_t* arena = st.arena.data();
  forEachOffset(p, s, [&](std::uint32_t i, std::uint32_t o) { out[i] = arena[o]; });
}

void scatter(const ElementProgram& p, RunState& st, Span s, const std::uint64_t* values) {
  std::uint64_t* arena = st.arena.data();
  if (!s.listed) {
    std::copy(values, values + s.count, arena + s.at);
    return;
  }
  forEachOffset(p, s, [&](std::uint32_t i, std::uint32_t o) { arena[o] = values[i]; });
}

std::uint32_t sourceCount(const ElementProgram& p, const Source& s) {
  std::uint32_t n = 0;
  for (std::uint32_t k = 0; k < s.spansCount; ++k) n += p.spans[s.spansAt + k].count;
  return n;
}

std::uint64_t readSourceHash(const ElementProgram& p, const RunState& st, const Source& s) {
  switch (s.kind) {
    case Source::Kind::Constant: return s.constant;
    case Source::Kind::Opaque: return st.opaque[s.slot];
    case Source::Kind::Offsets: {
      std::uint64_t h = 0x51ed270b27a5d1c3ULL ^ sourceCount(p, s);
      for (std::uint32_t k = 0; k < s.spansCount; ++k)
        forEachOffset(p, p.spans[s.spansAt + k], [&](std::uint32_t, std::uint32_t o) { h = combine(h, st.arena[o]); });
      return h;
    }
  }
  return 0;
}

// Appends the values of a source to `out` as one observation.
void readSource(const ElementProgram& p, const RunState& st, const Source& s, Observations& out) {
  switch (s.kind) {
    case Source::Kind::Constant: out.values.push_back(s.constant); break;
    case Source::Kind::Opaque: out.values.push_back(st.opaque[s.slot]); break;
    case Source::Kind::Offsets: {
      if (s.spansCount == 1 && !p.spans[s.spansAt].listed) {  // most: one range (every placeholder)
        const Span span = p.spans[s.spansAt];
        const std::uint64_t* from = st.arena.data() + span.at;
        out.values.insert(out.values.end(), from, from + span.count);  // not zeroed first
        break;
      }
      const std::size_t at = out.values.size();
      out.values.resize(at + sourceCount(p, s));
      std::uint64_t* to = out.values.data() + at;
      for (std::uint32_t k = 0; k < s.spansCount; ++k) {
        const Span span = p.spans[s.spansAt + k];
        if (!span.listed) to = std::copy_n(st.arena.data() + span.at, span.count, to);
        else forEachOffset(p, span, [&](std::uint32_t, std::uint32_t o) { *to++ = st.arena[o]; });
      }
      break;
    }
  }
  out.endObservation();
}

std::int64_t wrapIndex(std::uint64_t value, std::int64_t size) {
  if (size <= 0) return 0;
  std::int64_t v = static_cast<std::int64_t>(value) % size;
  return v < 0 ? v + size : v;
}

// Whether a kernel's computation needs its output zeroed first: Reduce adds into it, an
// Assemble without its self writes only its pieces' positions, and the index kernels that
// fill out[e] for e < mapCount leave the rest. The others write all outSize elements.
bool kernelReadsZeroedOut(const Step& k) {
  switch (k.compute) {
    case Compute::Reduce: return true;
    case Compute::Assemble: return !k.flag;
    case Compute::IndexTensor:
    case Compute::IndexSelect: return k.mapCount < k.outSize;
    default: return false;
  }
}

// One kernel: operands (contiguous ones read in place), the computation into st.out, the
// result scattered into dest. The result goes through a scratch buffer, so a kernel may write
// storage it reads (in-place ops).
void runKernel(const ElementProgram& p, const Step& k, RunState& st) {
  if (st.in.size() < k.operandsCount) st.in.resize(k.operandsCount);
  st.inputs.resize(k.operandsCount);
  for (std::uint32_t i = 0; i < k.operandsCount; ++i) {
    const Operand& op = p.operands[k.operandsAt + i];
    if (op.isConstant) {
      st.in[i].assign(op.count, op.constant);
      st.inputs[i] = st.in[i].data();
    } else {
      st.inputs[i] = elementsOf(p, st, op.span, st.in[i]);
    }
  }
  // Zeroed only for the computes that may leave an element unwritten or add into it: every
  // other one writes all outSize elements (zeroing them first was a fill per kernel per run).
  // st.out only grows: its first outSize elements are the result.
  if (st.out.size() < k.outSize) st.out.resize(k.outSize);
  std::uint64_t* o = st.out.data();
  if (kernelReadsZeroedOut(k)) std::fill_n(o, k.outSize, 0);
  const std::uint64_t* const* in = st.inputs.data();
  const std::size_t n = k.outSize;
  const std::uint32_t* mapA = p.offsets.data() + k.mapA;
  const std::uint32_t* mapB = p.offsets.data() + k.mapB;
  switch (k.compute) {
    case Compute::Add:
      for (std::size_t e = 0; e < n; ++e) o[e] = in[0][e] + in[1][e] * k.a;
      break;
    case Compute::Sub:
      for (std::size_t e = 0; e < n; ++e) o[e] = in[0][e] - in[1][e] * k.a;
      break;
    case Compute::Rsub:
      for (std::size_t e = 0; e < n; ++e) o[e] = in[1][e] - in[0][e] * k.a;
      break;
    case Compute::Mul:
      for (std::size_t e = 0; e < n; ++e) o[e] = in[0][e] * in[1][e];
      break;
    case Compute::Neg:
      for (std::size_t e = 0; e < n; ++e) o[e] = 0 - in[0][e];
      break;
    case Compute::Copy: std::copy(in[0], in[0] + n, o); break;
    case Compute::Arange:
      for (std::size_t e = 0; e < n; ++e) o[e] = k.a + k.b * e;
      break;
    case Compute::Where:
      for (std::size_t e = 0; e < n; ++e) o[e] = (in[0][e] & 1) ? in[1][e] : in[2][e];
      break;
    case Compute::MaskedFill:
      for (std::size_t e = 0; e < n; ++e) o[e] = (in[1][e] & 1) ? in[2][e] : in[0][e];
      break;
    case Compute::Reduce: {
      for (std::uint32_t e = 0; e < k.mapCount; ++e) o[mapA[e]] += in[0][e];
      const std::int64_t count = static_cast<std::int64_t>(k.a);
      if (k.flag)
        for (std::size_t e = 0; e < n; ++e)
          o[e] = count > 0 ? static_cast<std::uint64_t>(static_cast<std::int64_t>(o[e]) / count) : 0;
      break;
    }
    case Compute::IndexTensor:
    case Compute::IndexPut: {
      const std::int64_t* dims = p.ints.data() + k.listAt;  // (size, stride) per index tensor
      const bool put = k.compute == Compute::IndexPut;
      if (put) std::copy(in[0], in[0] + n, o);
      for (std::uint32_t e = 0; e < k.mapCount; ++e) {
        std::int64_t pos = mapA[e];
        for (std::uint32_t j = 0; j < k.listCount; ++j)
          pos += wrapIndex(in[1 + j][mapB[e]], dims[2 * j]) * dims[2 * j + 1];
        if (!put) {
          o[e] = in[0][static_cast<std::size_t>(pos)];
          continue;
        }
        std::uint64_t& slot = o[static_cast<std::size_t>(pos)];
        slot = k.flag ? slot + in[k.valuesAt][e] : in[k.valuesAt][e];
      }
      break;
    }
    case Compute::IndexSelect:
      for (std::uint32_t e = 0; e < k.mapCount; ++e)
        o[e] = in[0][mapA[e] + static_cast<std::size_t>(wrapIndex(in[1][mapB[e]], k.dimSize) * k.dimStride)];
      break;
    case Compute::IndexCopyAdd:
      std::copy(in[0], in[0] + n, o);
      for (std::uint32_t e = 0; e < k.mapCount; ++e) {
        std::uint64_t& slot = o[mapA[e] + static_cast<std::size_t>(wrapIndex(in[1][mapB[e]], k.dimSize) * k.dimStride)];
        slot = k.flag ? slot + in[2][e] * k.a : in[2][e];
      }
      break;
    case Compute::Scatter:
      std::copy(in[0], in[0] + n, o);
      for (std::uint32_t e = 0; e < k.mapCount; ++e) {
        std::uint64_t v = k.flag2 ? in[2][0] : in[2][mapB[e]];
        std::uint64_t& slot = o[mapA[e] + static_cast<std::size_t>(wrapIndex(in[1][e], k.dimSize) * k.dimStride)];
        slot = k.flag ? slot + v : v;
      }
      break;
    case Compute::Assemble: {
      std::uint32_t first = 0;
      if (k.flag) std::copy(in[0], in[0] + n, o), first = 1;
      for (std::uint32_t piece = 0; piece < k.listCount; ++piece) {
        const Span map = p.spans[k.listAt + piece];
        const std::uint32_t* positions = p.offsets.data() + map.at;
        const std::uint64_t* values = in[first + piece];
        for (std::uint32_t e = 0; e < map.count; ++e) o[positions[e]] = values[e];
      }
      break;
    }
  }
  scatter(p, st, k.dest, o);
}

void runStep(const ElementProgram& p, const Step& s, RunState& st) {
  std::uint64_t* arena = st.arena.data();
  switch (s.kind) {
    case StepKind::FillSeed: {
      // inputElement(seed, inputSet, a, i), its part that does not depend on i computed once.
      const std::uint64_t h = inputElementPrefix(st.seed, st.inputSet, s.a);
      forEachOffset(p, s.dest, [&](std::uint32_t i, std::uint32_t o) { arena[o] = combine(h, i); });
      break;
    }
    case StepKind::SetOpaque: st.opaque[s.slot] = s.a; break;
    case StepKind::FillHash: {
      const std::uint64_t h = combine(st.opaque[s.from], s.b);
      forEachOffset(p, s.dest, [&](std::uint32_t e, std::uint32_t o) { arena[o] = combine(h, e); });
      break;
    }
    case StepKind::OpaqueCombine: st.opaque[s.slot] = combine(st.opaque[s.from], s.b); break;
    case StepKind::Digest: {
      std::uint64_t d = s.a;
      for (std::uint32_t k = 0; k < s.listCount; ++k)
        forEachOffset(p, p.spans[s.listAt + k], [&](std::uint32_t, std::uint32_t o) { d = combine(d, arena[o]); });
      for (std::uint32_t k = 0; k < s.slotsCount; ++k) d = combine(d, st.opaque[p.offsets[s.slotsAt + k]]);
      st.opaque[s.slot] = d;
      break;
    }
    case StepKind::Copy:
      if (!s.src.listed && !s.dest.listed) {
        for (std::uint32_t e = 0; e < s.dest.count; ++e) arena[s.dest.at + e] = arena[s.src.at + e];
      } else {
        for (std::uint32_t e = 0; e < s.dest.count; ++e) {
          std::uint32_t from = s.src.listed ? p.offsets[s.src.at + e] : s.src.at + e;
          std::uint32_t to = s.dest.listed ? p.offsets[s.dest.at + e] : s.dest.at + e;
          arena[to] = arena[from];
        }
      }
      break;
    case StepKind::Kernel: runKernel(p, s, st); break;
  }
}

// ---------------------------------------------------------------------------------------------
// The compiler.

class ElementCompiler {
 public:
  ElementCompiler(const Analysis& analysis, const ExecOptions& options)
      : analysis_(&analysis), program_(analysis.program), options_(options), valueModel_(options.valueSemantics) {}

  using Compiled = Result<std::shared_ptr<const ElementProgram>>;

  Compiled compile() {
    return finish([&] {
      begin();
      walk(0);
      compileEnd();
    });
  }

  // What check() compiles, sharing work: storage semantics in both view modes, the value model
  // (F), and the placed program in both view modes. Compiles that agree up to some node share
  // the work up to it: this compiler is copied just before that node (a fork) and the copy
  // continues differently.
  // - The alias-views compile forks before the first `*_copy` view (the view mode is read
  //   nowhere else).
  // - F forks before the first node whose compile depends on the model (see dependsOnModel).
  // - The placed program forks before node `placedFrom`, when the reference program and the
  //   placed one compile alike up to there (see sharedPrefix in ops.h): its alias-views compile
  //   then forks from this compiler's alias-views fork if that one started earlier.
  // aliasViews: nullopt when the copy-views executable does not depend on the view mode (or
  // the copy-views compile failed). value, placed: nullopt when not made here.
  struct Programs {
    Compiled copyViews;
    std::optional<Compiled> aliasViews, value, placed, placedAlias;
  };
  Programs compileShared(bool value, const Analysis* placed, std::size_t placedFrom) {
    forkWanted_ = true;
    valueForkWanted_ = value;
    placed_ = placed;
    placedFrom_ = placedFrom;
    Programs out{compile(), std::nullopt, std::nullopt, std::nullopt, std::nullopt};
    if (valueFork_) out.value = valueFork_->resume();
    ElementCompiler* alias = nullptr;  // this program's alias-views compile, if continued
    if (out.copyViews && (*out.copyViews)->dependsOnViewMode) {
      if (fork_) {
        out.aliasViews = fork_->resume();
        alias = fork_.get();
      } else {  // not expected (the fork precedes the first `*_copy` view): compile afresh
        ExecOptions aliasViews = options_;
        aliasViews.viewMode = ViewMode::AliasViews;
        out.aliasViews = ElementCompiler(*analysis_, aliasViews).compile();
      }
    }
    if (!placed || !placedFork_) return out;
    ElementCompiler& p = *placedFork_;
    out.placed = p.resume();
    if (!*out.placed || !(**out.placed)->dependsOnViewMode) return out;
    if (p.fork_) out.placedAlias = p.fork_->resume();
    else if (alias && alias->placedFork_) out.placedAlias = alias->placedFork_->resume();
    else {
      ExecOptions aliasViews = p.options_;
      aliasViews.viewMode = ViewMode::AliasViews;
      out.placedAlias = ElementCompiler(*placed, aliasViews).compile();
    }
    return out;
  }

 private:
  template <typename F>
  Compiled finish(F&& body) {
    try {
      body();
    } catch (const Unsupported& u) {
      Diagnostic d;
      d.file = "<element tier>";
      d.message = u.why;
      return Result<std::shared_ptr<const ElementProgram>>::failure(d);
    }
    out_.arenaSize = arenaEnd();
    out_.opaqueSlots = opaqueSlots_;
    out_.dependsOnViewMode = viewModeSeen_;
    // The compile this one was forked from has finished first (see compileShared), if it
    // succeeded.
    if (parent_) out_.forkedFrom = parent_->finished_;
    if (!out_.forkedFrom) out_.forkedAt = {};
    finished_ = std::make_shared<const ElementProgram>(std::move(out_));
    return Result<std::shared_ptr<const ElementProgram>>::success(finished_);
  }

  // The end of the arena used so far: of the main storages and of the side ones (see fresh()).
  std::size_t arenaEnd() const {
    const std::int64_t main = storageBase_.empty() ? 0 : storageBase_.back() + storageSize_.back();
    return static_cast<std::size_t>(std::max(main, sideEnd_));
  }

  // A fork (see compileShared) continues from the node it was taken before.
  Compiled resume() {
    return finish([&] {
      // Mirroring needs the parent's storage table (it has finished: see compileShared), and
      // room above its arena for this one's own storages that fits under the arena cap
      // whatever this compile allocates (which is charged: at most maxElements).
      mirrors_ = replaysParent_ && parent_ && parent_->finished_ && parent_->recordsMarks_ &&
                 parent_->arenaEnd() + options_.maxElements < (std::size_t{1} << 31);
      if (mirrors_) sideEnd_ = static_cast<std::int64_t>(parent_->arenaEnd());
      replaysParent_ = mirrors_;
      if (recordsMarks_) marks_ = newMarks(program_->graph.nodes.size());
      walk(forkedAt_);
      compileEnd();
    });
  }

  // Copies this compiler, as it stands before node i, for another view mode or model; the
  // fork's program has `nodes` nodes (its per-node tables' size).
  std::shared_ptr<ElementCompiler> forkAt(std::size_t i, std::size_t nodes) {
    // Where the fork's run may start from this one's (ElementProgram::forkedAt).
    const ElementProgram::ForkPoint here{static_cast<std::uint32_t>(out_.steps.size()), arenaEnd(), opaqueSlots_};
    // The values of nodes i and later are still as begin() made them (no node from i on has
    // been compiled, and only F, never forked from, rebinds earlier ones): the fork takes the
    // first i and makes the rest afresh, rather than copying them with the compiler (a value
    // is a large record). values_ is set aside while the compiler is copied.
    Pool<CValue> values = std::move(values_);
    values_ = Pool<CValue>();
    auto fork = std::make_shared<ElementCompiler>(*this);
    values_ = std::move(values);
    // Made fresh, then the first i copied in one block (a CValue's copy is a copy of its
    // bytes: see CValue), rather than one copy call per value.
    fork->values_.reserve(nodes);
    fork->values_.resize(nodes);
    const std::size_t kept = std::min(i, nodes);  // i <= nodes (placed forks: sharedPrefix)
    if (kept > 0) std::memcpy(static_cast<void*>(fork->values_.data()), values_.data(), kept * sizeof(CValue));
    fork->marks_.reset();  // it records its own, from i on (see resume())
    fork->parent_ = this;
    fork->finished_.reset();
    fork->out_.forkPoints.clear();
    fork->out_.forkedAt = here;
    out_.forkPoints.push_back(here);
    fork->forkWanted_ = fork->valueForkWanted_ = false;
    fork->fork_.reset();
    fork->valueFork_.reset();
    fork->placed_ = nullptr;
    fork->placedFork_.reset();
    fork->forkedAt_ = i;  // its pools were copied with room to grow (Pool)
    fork->replaysParent_ = !valueModel_;  // see replay()
    fork->parentHasProgram_ = true;
    fork->parentCursor_ = i;
    // The values of nodes before i are this one's (copied).
    fork->parentNode_.resize(program_->graph.nodes.size());
    for (std::size_t k = 0; k < fork->parentNode_.size(); ++k)
      fork->parentNode_[k] = k < i ? static_cast<std::uint32_t>(k) : kNotParents;
    return fork;
  }

  // Before node placedFrom_ (placed_ set): this compile, continued with the placed program.
  // Nodes [0, placedFrom_) compile alike in both (sharedPrefix), so only the per-node tables
  // change size. The placed program's alias-views compile forks from it, unless this compile
  // has already forked its own (then that fork makes the placed program's; see walk).
  void takePlacedFork() {
    const std::size_t n = placed_->program->graph.nodes.size();
    placedFork_ = forkAt(placedFrom_, n);
    ElementCompiler& p = *placedFork_;
    p.analysis_ = placed_;
    p.program_ = placed_->program;
    p.options_.placedProgram = true;
    p.declaredAt_.resize(n);
    p.out_.nodeStepEnd.resize(n);
    p.parentNode_.resize(n, kNotParents);
    p.forkWanted_ = forkWanted_ && !fork_;
    p.parentHasProgram_ = false;  // its nodes from placedFrom_ on are matched to this one's (replay())
  }

  // Whether compiling node i reads valueModel_: views (every view is a copy under F), ops
  // with alias annotations (writes, returns that alias an argument) and
  // _share_alloc_with_arg_idx. Nothing else differs between the models. A `*_copy` view
  // variant (not an `out=` one, no annotation) is a copy under F and in the copy-views mode
  // alike, so this compile (the copy-views one; F forks from it) and F's agree on it.
  bool dependsOnModel(std::size_t i) const {
    const NodeOp op = program_->graph.nodes[i].op;
    if (op != NodeOp::CallFunction && op != NodeOp::CallModule) return false;
    const NodeFacts& f = analysis_->nodes[i];
    if (f.shareAllocArgIndex) return true;
    if (!f.info.schema) return false;
    if (f.info.annotated) return true;
    const bool copiedAlike = f.info.copyVariant && !f.info.outVariant && options_.viewMode == ViewMode::CopyViews;
    return isViewKind(f.info.kind) && !copiedAlike;
  }

  void takeValueFork(std::size_t i) {
    valueFork_ = forkAt(i, program_->graph.nodes.size());
    valueFork_->valueModel_ = valueFork_->out_.valueModel = valueFork_->options_.valueSemantics = true;
    // F replays the nodes whose compile does not read the model (replay()); nothing forks
    // from it, so it records no marks.
    valueFork_->recordsMarks_ = false;
    // F reads no view mode (viewIsCopy answers before it looks), whatever the copy-views
    // compile has seen before the fork.
    valueFork_->viewModeSeen_ = false;
  }

  // What one call's compile uses and leaves behind (never read by the next call). One for a
  // compile and all its forks: they run one after another, and a fork is taken between two
  // nodes, so no call's compile is split by one; the forks then reuse the buffers' capacity
  // rather than growing their own.
  struct Scratch {
    std::vector<CValue> literals;                         // a call's non-reference arguments
    std::vector<const CValue*> argPointers;
    std::vector<std::pair<std::size_t, CValue>> rebinds;  // F: pending rebinds of one call
    std::vector<Span> hashSpans;                          // the inputs of one digest
    std::vector<std::uint32_t> hashSlots;
    // The operands of the kernel being compiled (copied into the program's operand pool by
    // emitKernel).
    std::vector<Operand> ins;
  };
  std::shared_ptr<Scratch> scratch_ = std::make_shared<Scratch>();  // shared with the forks

  const Analysis* analysis_;  // pointers: a fork may continue with another program (see forkTo)
  const Program* program_;
  ExecOptions options_;  // a copy: the alias-views fork changes its view mode
  bool forkWanted_ = false, valueForkWanted_ = false;
  std::shared_ptr<ElementCompiler> fork_, valueFork_, placedFork_;  // see compileShared()
  // The compile this one was forked from (it outlives this one: it holds it, directly or
  // through its forks), and this one's program once finished (for its forks' forkedFrom).
  ElementCompiler* parent_ = nullptr;
  std::shared_ptr<const ElementProgram> finished_;
  const Analysis* placed_ = nullptr;  // the placed program, to fork to before placedFrom_
  std::size_t placedFrom_ = 0;
  std::size_t forkedAt_ = 0;
  bool valueModel_;
  ElementProgram out_;
  Pool<CValue> values_;  // Pools: a fork copies them and continues
  // The placeholders as declared (values_ may rebind one under F; the observations and end
  // writes are of the declared storage).
  Pool<std::uint32_t> declaredAt_;  // per node: 1 + its index in declaredValues_, or 0
  std::vector<CValue> declaredValues_;
  const CValue noValue_;
  const CValue& declared(std::size_t node) const {
    return declaredAt_[node] ? declaredValues_[declaredAt_[node] - 1] : noValue_;
  }
  // Storages: where each starts in the arena and its size. A fork mirrors its parent's
  // (mirrors_): its main table is always a prefix of the parent's final one, so a node after
  // the fork that allocates what the parent's allocated there gets the same storages, and the
  // nodes after it read the same places whatever came before (replay() depends on it). The
  // storages a node makes that its parent's did not are side storages (ids with
  // kSideStorage), placed above the parent's arena; a node that made fewer leaves the rest of
  // the parent's as unused holes in the main table.
  static constexpr std::uint32_t kSideStorage = 0x80000000u;
  Pool<std::int64_t> storageBase_, storageSize_;
  std::vector<std::int64_t> sideBase_, sideSize_;  // vectors: most forks make none
  std::int64_t sideEnd_ = 0;
  bool mirrors_ = false;
  std::size_t mirrorNext_ = 0, mirrorEnd_ = 0;  // the parent's storages of the node being compiled
  std::int64_t baseOf(std::uint32_t storage) const {
    return storage & kSideStorage ? sideBase_[storage & ~kSideStorage] : storageBase_[storage];
  }
  std::int64_t sizeOf(std::uint32_t storage) const {
    return storage & kSideStorage ? sideSize_[storage & ~kSideStorage] : storageSize_[storage];
  }
  std::uint32_t opaqueSlots_ = 0;
  std::size_t budget_ = 0;

  [[noreturn]] static void fail(std::string why) { throw Unsupported{std::move(why)}; }

  // Inlined where it is called (every span and fresh tensor): the failure, which builds a
  // message, is a call of its own.
  void charge(std::size_t elements) {
    budget_ += elements;
    if (budget_ > options_.maxElements) overBudget();
  }
  [[noreturn, gnu::noinline]] void overBudget() const {
    fail("memory cap: the element tier needs more than " + std::to_string(options_.maxElements) +
         " elements for this program (ExecOptions::maxElements)");
  }

  // --- storages and layouts ---

  // A fresh contiguous tensor of shape `shape`, made in `l` (in place: a Layout is a large
  // record, and most are made straight into a value).
  void fresh(const Shape& shape, Layout& l) {
    for (std::int64_t s : shape)
      if (s < 0) fail("negative size in shape");
    std::int64_t n = numelOf(shape);
    charge(static_cast<std::size_t>(n));
    l.offset = 0;
    if (mirrorNext_ < mirrorEnd_ && parent_->storageSize_[mirrorNext_] == n) {
      // The parent's next storage of this node: the same id and place (see mirrors_).
      l.storage = static_cast<std::uint32_t>(mirrorNext_);
      storageBase_.push_back(parent_->storageBase_[mirrorNext_++]);
      storageSize_.push_back(n);
    } else if (mirrors_) {  // one the parent did not make here: above its arena
      if (sideEnd_ + n > std::int64_t{1} << 31) fail("memory cap: arena too large");
      l.storage = kSideStorage | static_cast<std::uint32_t>(sideBase_.size());
      if (sideBase_.empty()) {  // a fork's first: room for a few, not grown one by one
        sideBase_.reserve(8);
        sideSize_.reserve(8);
      }
      sideBase_.push_back(sideEnd_);
      sideSize_.push_back(n);
      sideEnd_ += n;
    } else {
      const std::int64_t base = static_cast<std::int64_t>(arenaEnd());
      if (base + n > std::int64_t{1} << 31) fail("memory cap: arena too large");
      l.storage = static_cast<std::uint32_t>(storageBase_.size());
      storageBase_.push_back(base);
      storageSize_.push_back(n);
    }
    l.sizes = shape;  // may be l.sizes itself
    setContiguousStrides(l.sizes, l.strides);
  }

  // The arena elements of a layout, in row-major order. Charged as if every offset were
  // listed (the budget, and so which programs fall back to the storage tier, is unchanged).
  Span spanOf(const Layout& l) {
    // numelOf and isContiguous in one pass (isContiguous's running product is the product of
    // the sizes after dimension i).
    std::int64_t n = 1;
    bool contiguous = true;
    for (std::size_t i = l.sizes.size(); i-- > 0;) {
      if (l.sizes[i] != 1 && l.strides[i] != n) contiguous = false;
      n *= l.sizes[i];
    }
    charge(static_cast<std::size_t>(n));
    Span span{};
    if (n == 0) return span;
    if (!contiguous) return listedSpanOf(l, n);
    // Most layouts (every fresh tensor): one range, no index walk.
    const std::int64_t base = baseOf(l.storage), size = sizeOf(l.storage);
    span.count = static_cast<std::uint32_t>(n);
    if (l.offset < 0 || l.offset + n > size) outsideStorage();
    span.at = static_cast<std::uint32_t>(base + l.offset);
    return span;
  }

  [[noreturn, gnu::noinline]] static void outsideStorage() { fail("a view reaches outside its storage (as_strided?)"); }

  // spanOf() of a layout that is not contiguous, with n > 0 elements: its offsets listed. A
  // function of its own, so that the contiguous case (most calls) is a short one.
  [[gnu::noinline]] Span listedSpanOf(const Layout& l, std::int64_t n) {
    const std::int64_t base = baseOf(l.storage), size = sizeOf(l.storage);
    Span span{};
    span.count = static_cast<std::uint32_t>(n);
    span.listed = true;
    span.at = newTable(static_cast<std::size_t>(n));  // a resize: the pool grows geometrically
    std::uint32_t* to = out_.offsets.data() + span.at;
    if (std::any_of(l.sizes.begin(), l.sizes.end(), [](std::int64_t s) { return s < 0; })) {
      // Negative sizes (a view's [-2, -3]: n > 0 all the same) have no rows: element by
      // element, an odometer over every dimension.
      Shape idx(l.sizes.size(), 0);
      std::int64_t pos = l.offset;
      for (std::int64_t e = 0; e < n; ++e) {
        if (pos < 0 || pos >= size) outsideStorage();
        *to++ = static_cast<std::uint32_t>(base + pos);
        advanceStrided(idx, l.sizes, l.strides, pos);
      }
      return span;
    }
    // Listed row by row (rows of the last dimension; a non-contiguous layout has rank >= 1, and
    // n > 0 with no negative size makes every size positive). A row's positions are evenly
    // spaced, so it stays inside the storage iff its two ends do.
    const std::size_t rank = l.sizes.size();
    const std::int64_t rowSize = l.sizes[rank - 1], step = l.strides[rank - 1];
    Shape idx(rank - 1, 0);  // the row's index in the leading dimensions
    std::int64_t pos = l.offset;  // the row's first position
    for (std::int64_t row = n / rowSize; row-- > 0;) {
      const std::int64_t last = pos + (rowSize - 1) * step;
      if (pos < 0 || pos >= size || last < 0 || last >= size) outsideStorage();
      for (std::int64_t j = 0, at = base + pos; j < rowSize; ++j, at += step) *to++ = static_cast<std::uint32_t>(at);
      advanceStrided(idx, l.sizes, l.strides, pos);  // idx spans the leading rank - 1 dimensions
    }
    return span;
  }

  static Shape broadcastShapes(const Shape& a, const Shape& b) {
    Shape out(std::max(a.size(), b.size()), 1);
    for (std::size_t i = 0; i < out.size(); ++i) {
      std::int64_t x = i < out.size() - a.size() ? 1 : a[i - (out.size() - a.size())];
      std::int64_t y = i < out.size() - b.size() ? 1 : b[i - (out.size() - b.size())];
      if (x != y && x != 1 && y != 1) fail("shapes do not broadcast");
      out[i] = x == 1 ? y : x;
    }
    return out;
  }

  static Layout expandTo(const Layout& l, const Shape& target) {
    if (target.size() < l.sizes.size()) fail("cannot broadcast to a shape of lower rank");
    Layout r;
    r.storage = l.storage;
    r.offset = l.offset;
    r.sizes = target;
    r.strides.assign(target.size(), 0);
    std::size_t lead = target.size() - l.sizes.size();
    for (std::size_t i = 0; i < l.sizes.size(); ++i) {
      std::int64_t s = l.sizes[i], t = target[lead + i];
      if (t == -1) t = s;
      r.sizes[lead + i] = t;
      if (s == t) r.strides[lead + i] = l.strides[i];
      else if (s == 1) r.strides[lead + i] = 0;
      else fail("shapes do not broadcast");
    }
    return r;
  }

  // --- values ---

  // The value of a node a reference names (references were resolved by the analysis).
  const CValue& valueOf(const ArgRef& r) const {
    if (r.node == ArgRef::kNoNode) return values_.at(analysis_->nodeOf(r.arg->text));  // throws
    return values_[r.node];
  }

  CValue resolve(const ArgRef& r) {
    if (r.arg->isRef()) return valueOf(r);
    CValue v;
    if (r.arg->isSequence()) makeListOf(r, v);
    else setLiteral(*r.arg, v);
    return v;
  }

  // A literal argument that is no list (None, a number, a string or a token), written into
  // `v`, a CValue as made (fresh or reset()).
  static void setLiteral(const Arg& arg, CValue& v) {
    switch (arg.kind) {
      case Arg::Kind::Bool: v.kind = CValue::Kind::Bool; v.b = arg.boolean; v.i = arg.boolean; break;
      case Arg::Kind::Int: v.kind = CValue::Kind::Int; v.i = arg.integer; break;
      case Arg::Kind::Float: v.kind = CValue::Kind::Float; v.f = arg.real; break;
      case Arg::Kind::String:
      case Arg::Kind::Token: v.kind = CValue::Kind::Text; v.i = static_cast<std::int64_t>(hashText(arg.text)); break;
      default: break;  // None
    }
  }

  // List argument r: its items made in lists_, and the list written into `v` (no item of
  // lists_). Items are made in their place in the pool (a value is a large record, better
  // copied once), except nested lists: making one may move the pool.
  void makeListOf(const ArgRef& r, CValue& v) {
    const std::span<const ArgRef> items = analysis_->items(r);
    const std::uint32_t at = newList(items.size());  // fresh CValues
    for (std::size_t j = 0; j < items.size(); ++j) {
      const ArgRef& item = items[j];
      if (item.arg->isRef()) lists_[at + j] = valueOf(item);
      else if (!item.arg->isSequence()) setLiteral(*item.arg, lists_[at + j]);
      else {
        const CValue nested = resolve(item);  // makes lists after this one
        lists_[at + j] = nested;
      }
    }
    v.kind = CValue::Kind::List;
    v.itemsAt = at;
    v.itemsCount = static_cast<std::uint32_t>(items.size());
  }

  // The items of every list value (see CValue::itemsAt). A list is never changed once made,
  // and the pool only grows during a compile (a fork copies it with the values).
  Pool<CValue> lists_;

  // Room for a list of n items, made by the caller by index (an item's making may make lists
  // and move the pool): its start.
  std::uint32_t newList(std::size_t n) {
    const std::size_t at = lists_.size();
    lists_.resize(at + n);
    return static_cast<std::uint32_t>(at);
  }
  // A list of `items`, made.
  CValue makeList(const std::vector<CValue>& items) {
    CValue v;
    v.kind = CValue::Kind::List;
    v.itemsAt = static_cast<std::uint32_t>(lists_.size());
    v.itemsCount = static_cast<std::uint32_t>(items.size());
    lists_.insert(lists_.end(), items.begin(), items.end());
    return v;
  }
  // A list's items. Valid until the next list is made.
  std::span<const CValue> itemsOf(const CValue& v) const { return {lists_.data() + v.itemsAt, v.itemsCount}; }

  // Every field of `v` as a fresh CValue has it (kind None).
  static void reset(CValue& v) {
    v.kind = CValue::Kind::None;
    v.i = 0;
    v.f = 0;
    v.b = false;
    v.t.storage = 0;
    v.t.offset = 0;
    v.t.sizes.clear();
    v.t.strides.clear();
    v.itemsAt = v.itemsCount = 0;
    v.slot = 0;
  }

  // resolve() without copying a node's value: a reference yields the node's value itself,
  // anything else is built into `scratch`. Scalars (most literal arguments: defaults such as
  // alpha=1 or None) are written into it in place, field by field as a fresh CValue has them,
  // rather than built and moved in whole.
  const CValue& resolveRef(const ArgRef& a, CValue& scratch) {
    if (a.arg->isRef()) return valueOf(a);
    reset(scratch);
    if (a.arg->isSequence()) makeListOf(a, scratch);
    else setLiteral(*a.arg, scratch);
    return scratch;
  }

  static std::int64_t asInt(const CValue& v, const char* what) {
    switch (v.kind) {
      case CValue::Kind::Int:
      case CValue::Kind::Bool: return v.i;
      case CValue::Kind::Float:
        if (v.f == static_cast<double>(static_cast<std::int64_t>(v.f))) return static_cast<std::int64_t>(v.f);
        break;
      default: break;
    }
    fail(std::string("expected a static integer for ") + what);
  }

  static std::optional<std::int64_t> asOptInt(const CValue& v, const char* what) {
    if (v.isNone()) return std::nullopt;
    return asInt(v, what);
  }

  Shape asIntList(const CValue& v, const char* what) const {
    if (v.kind == CValue::Kind::List) {
      Shape out;
      for (const CValue& item : itemsOf(v)) out.push_back(asInt(item, what));
      return out;
    }
    return {asInt(v, what)};
  }

  static std::uint64_t asScalar(const CValue& v) {
    switch (v.kind) {
      case CValue::Kind::Int:
      case CValue::Kind::Bool: return static_cast<std::uint64_t>(v.i);
      case CValue::Kind::Float: return scalarElement(v.f);
      case CValue::Kind::None: return 0;
      case CValue::Kind::Text: return static_cast<std::uint64_t>(v.i);
      default: fail("expected a scalar");
    }
  }

  static std::int64_t normDim(std::int64_t dim, std::size_t rank) {
    std::int64_t r = static_cast<std::int64_t>(std::max<std::size_t>(rank, 1));
    if (dim < -r || dim >= r) fail("dimension out of range");
    return dim < 0 ? dim + r : dim;
  }

  const Layout& tensorArg(const CValue& v, const char* what) {
    if (!v.isTensor()) fail(std::string("expected a tensor for ") + what);
    return v.t;
  }

  std::uint32_t newOpaque() { return opaqueSlots_++; }

  // The static shape of a node's annotation, or nullopt.
  std::optional<Shape> annotatedShape(std::size_t node) const {
    const NodeFacts& f = analysis_->nodes[node];
    if (!f.hasShape) return std::nullopt;
    if (f.rank > Shape::kMaxRank) fail("rank above " + std::to_string(Shape::kMaxRank) + " (element tier)");
    Shape shape;
    for (std::uint32_t d = 0; d < f.rank; ++d) shape.push_back(analysis_->shapes[f.shapeAt + d]);
    return shape;
  }

  // --- the walk ---

  void begin() {
    const Graph& g = program_->graph;
    const std::size_t n = g.nodes.size();
    values_.resize(n);
    declaredAt_.resize(n);
    out_.nodeStepEnd.resize(n);
    marks_ = newMarks(n);
    reservePools();
    std::size_t placeholders = 0;
    for (const Node& node : g.nodes) placeholders += node.isPlaceholder();
    out_.placeholders.reserve(placeholders);
    declaredValues_.reserve(placeholders);
    if (options_.traceNodes) out_.nodeResults.resize(g.nodes.size());
    out_.valueModel = valueModel_;
  }

  // Rough sizes for a typical program, so the pools rarely grow.
  void reservePools() {
    const std::size_t n = program_->graph.nodes.size();
    auto atLeast = [](auto& pool, std::size_t size) { pool.reserve(std::max(size, pool.size() + pool.size() / 2)); };
    atLeast(out_.steps, 2 * n);
    atLeast(out_.spans, n);
    atLeast(out_.operands, 2 * n);
    atLeast(out_.offsets, 8 * n);
    atLeast(storageBase_, n);
    atLeast(storageSize_, n);
  }

  void walk(std::size_t first) {
    const Graph& g = program_->graph;
    const std::size_t count = g.nodes.size();  // read once: the loop's stores may alias it
    for (std::size_t i = first; i < count; ++i) {
      const Node& n = g.nodes[i];
      current_ = i;
      if (valueForkWanted_ && !valueFork_ && dependsOnModel(i)) takeValueFork(i);
      if (placed_ && !placedFork_ && i == placedFrom_) takePlacedFork();
      if (forkWanted_ && !fork_ && !valueModel_ && analysis_->nodes[i].info.copyVariant) {
        fork_ = forkAt(i, g.nodes.size());
        fork_->options_.viewMode = ViewMode::AliasViews;
        if (placed_ && !placedFork_) {  // its placed-program fork makes the placed alias views
          fork_->placed_ = placed_;
          fork_->placedFrom_ = placedFrom_;
        }
      }
      if (recordsMarks_) marks_[i] = marks();
      const std::size_t j = replaysParent_ ? parentNodeOf(i) : kNoParentNode;
      if (j != kNoParentNode && replay(i, j)) {
        parentNode_[i] = static_cast<std::uint32_t>(j);
        ++out_.replayedNodes;
      } else {
        if (j != kNoParentNode) mirrorNode(j);
        switch (n.op) {
          case NodeOp::Placeholder: compilePlaceholder(n); break;
          case NodeOp::GetAttr: compileGetAttr(n); break;
          case NodeOp::CallFunction:
          case NodeOp::CallModule: compileCall(n); break;
          case NodeOp::Output: break;
        }
        if (mirrors_) {  // the parent's storages this node did not take: holes
          for (; mirrorNext_ < mirrorEnd_; ++mirrorNext_) {
            storageBase_.push_back(parent_->storageBase_[mirrorNext_]);
            storageSize_.push_back(parent_->storageSize_[mirrorNext_]);
          }
          mirrorNext_ = mirrorEnd_ = 0;
        }
        // Whether its value is the parent's (for the replays of the nodes that read it).
        if (j != kNoParentNode && (n.op == NodeOp::CallFunction || n.op == NodeOp::CallModule))
          parentNode_[i] = sameValue(values_[i], parent_->values_[j], *parent_) ? static_cast<std::uint32_t>(j) : kNotParents;
      }
      out_.nodeStepEnd[i] = static_cast<std::uint32_t>(out_.steps.size());
      if (options_.traceNodes) out_.nodeResults[i] = sourceOf(values_[i]);
    }
    if (valueForkWanted_ && !valueFork_) takeValueFork(g.nodes.size());  // no node depends on the model
    if (placed_ && !placedFork_ && placedFrom_ == g.nodes.size()) takePlacedFork();
  }

  std::size_t current_ = 0;

  // --- replaying a node the parent compiled alike ---
  //
  // A fork (alias views, F, the placed program) goes on compiling nodes its parent has
  // compiled too, most of them alike: after a `*_copy` view made an alias, a view that F
  // copies, an in-place op that F makes a new version of, or an inserted copy_, the nodes that
  // do not read what differs read the same values as in the parent and, with the storages
  // mirrored (see storageBase_), allocate the same storages. Compiling node i depends only on
  // the node, its facts, the values its arguments name (the storages they live in included),
  // the model where the node's compile reads it (dependsOnModel), and three counters (main
  // storages, opaque slots, list items): with all of them equal to the parent's before its
  // node j, node i compiles to the parent's steps and value for j, with indices into the
  // program's pools moved by where the pools stand (a copy_ before it added a kernel and its
  // operands). Those are then copied instead of compiled again. Never for a `*_copy` view in
  // another view mode than the parent's, what reads other nodes' facts (a tuple result reads
  // its getitems' annotations), nor where the parent's node made side storages.

  // Where the pools and counters stand before a node's compile (after node j: before node
  // j + 1; the output node comes last and is never replayed). Not initialised: every node a
  // fork may replay from is recorded before it is read (forks start at or after their parent's
  // fork point, and the parent has finished).
  struct Marks {
    std::uint32_t steps, offsets, spans, operands, ints, lists, storages, side, opaque;
    std::size_t budget;
  };
  static std::shared_ptr<Marks[]> newMarks(std::size_t n) { return std::shared_ptr<Marks[]>(new Marks[n]); }
  std::shared_ptr<Marks[]> marks_;  // per node, as compiled (or replayed) here; a fork has its own
  bool recordsMarks_ = true;        // F's are never read (see takeValueFork)
  bool replaysParent_ = false;      // a fork that replays its parent's nodes (see resume())
  // Per node: the parent's node whose value (as the parent left it) its value is, field by
  // field (sameValue), or kNotParents. Kept as nodes are compiled, replayed and rebound, so that
  // comparing an argument with the parent's is one look-up.
  static constexpr std::uint32_t kNotParents = 0xffffffffu;
  std::vector<std::uint32_t> parentNode_;
  bool parentHasProgram_ = true;  // the parent compiled the same program (node i is its node i)
  std::size_t parentCursor_ = 0;  // else: the parent's next node to match (placed forks)

  Marks marks() const {
    Marks m;
    m.steps = static_cast<std::uint32_t>(out_.steps.size());
    m.offsets = static_cast<std::uint32_t>(out_.offsets.size());
    m.spans = static_cast<std::uint32_t>(out_.spans.size());
    m.operands = static_cast<std::uint32_t>(out_.operands.size());
    m.ints = static_cast<std::uint32_t>(out_.ints.size());
    m.lists = static_cast<std::uint32_t>(lists_.size());
    m.storages = static_cast<std::uint32_t>(storageBase_.size());
    m.side = static_cast<std::uint32_t>(sideBase_.size());
    m.opaque = opaqueSlots_;
    m.budget = budget_;
    return m;
  }

  // The same storage here and in `other` (its table entry).
  bool sameStorage(std::uint32_t s, const ElementCompiler& other) const {
    if (s & kSideStorage) {
      const std::uint32_t k = s & ~kSideStorage;
      return k < sideBase_.size() && k < other.sideBase_.size() && sideBase_[k] == other.sideBase_[k] &&
             sideSize_[k] == other.sideSize_[k];
    }
    return s < storageBase_.size() && s < other.storageBase_.size() && storageBase_[s] == other.storageBase_[s] &&
           storageSize_[s] == other.storageSize_[s];
  }

  // A value here and one of `other`: the same in the fields a value of its kind is read by
  // (a list item by item, a tensor with its storage).
  bool sameValue(const CValue& x, const CValue& y, const ElementCompiler& other) const {
    if (x.kind != y.kind) return false;
    switch (x.kind) {
      case CValue::Kind::None: return true;
      case CValue::Kind::Int:
      case CValue::Kind::Text: return x.i == y.i;
      case CValue::Kind::Bool: return x.i == y.i && x.b == y.b;
      case CValue::Kind::Float: return std::memcmp(&x.f, &y.f, sizeof x.f) == 0;
      case CValue::Kind::Opaque: return x.slot == y.slot;
      case CValue::Kind::Tensor:
        return x.t.storage == y.t.storage && x.t.offset == y.t.offset && x.t.sizes == y.t.sizes &&
               x.t.strides == y.t.strides && sameStorage(x.t.storage, other);
      case CValue::Kind::List:
        if (x.itemsAt != y.itemsAt || x.itemsCount != y.itemsCount || x.itemsAt + x.itemsCount > lists_.size() ||
            y.itemsAt + y.itemsCount > other.lists_.size())
          return false;
        for (std::uint32_t k = 0; k < x.itemsCount; ++k)
          if (!sameValue(lists_[x.itemsAt + k], other.lists_[y.itemsAt + k], other)) return false;
        return true;
    }
    return false;
  }

  // An argument here and the same argument (of an equal node) in `other`, the parent: what
  // it names has the same value in both (see parentNode_). Literals are equal with their
  // nodes.
  // Inlined in replay() (a test per argument of every node a fork meets); lists are a call.
  [[gnu::always_inline]] bool sameArgument(const ArgRef& x, const ArgRef& y, const ElementCompiler& other) const {
    if (x.arg->isRef()) return x.node != ArgRef::kNoNode && y.node != ArgRef::kNoNode && parentNode_[x.node] == y.node;
    return !x.arg->isSequence() || sameItems(x, y, other);
  }
  [[gnu::noinline]] bool sameItems(const ArgRef& x, const ArgRef& y, const ElementCompiler& other) const {
    const std::span<const ArgRef> xs = analysis_->items(x), ys = other.analysis_->items(y);
    for (std::size_t k = 0; k < xs.size(); ++k)
      if (!sameArgument(xs[k], ys[k], other)) return false;
    return true;
  }

  static std::uint32_t moved(std::uint32_t at, std::int64_t by) {
    return static_cast<std::uint32_t>(static_cast<std::int64_t>(at) + by);
  }
  static void moveSpan(Span& s, std::int64_t by) {
    if (s.listed) s.at = moved(s.at, by);
  }

  // Whether every pool index of a parent's step lies in the ranges its node appended (so that
  // moving the ranges moves everything the step reads).
  static bool stepWithin(const ElementProgram& p, const Step& k, const Marks& b, const Marks& a) {
    auto spanWithin = [&](const Span& s) { return !s.listed || (s.at >= b.offsets && s.at + s.count <= a.offsets); };
    auto rangeWithin = [](std::uint32_t at, std::uint32_t count, std::uint32_t begin, std::uint32_t end) {
      return at >= begin && at + count <= end;
    };
    if (!spanWithin(k.dest) || !spanWithin(k.src)) return false;
    switch (k.kind) {
      case StepKind::Digest:
        return rangeWithin(k.listAt, k.listCount, b.spans, a.spans) &&
               rangeWithin(k.slotsAt, k.slotsCount, b.offsets, a.offsets);
      case StepKind::Kernel: {
        if (!rangeWithin(k.operandsAt, k.operandsCount, b.operands, a.operands)) return false;
        for (std::uint32_t o = 0; o < k.operandsCount; ++o)
          if (!spanWithin(p.operands[k.operandsAt + o].span)) return false;
        switch (k.compute) {
          case Compute::Reduce: return rangeWithin(k.mapA, k.mapCount, b.offsets, a.offsets);
          case Compute::IndexTensor:
          case Compute::IndexPut:
            if (!rangeWithin(k.listAt, 2 * k.listCount, b.ints, a.ints)) return false;
            [[fallthrough]];
          case Compute::IndexSelect:
          case Compute::IndexCopyAdd:
          case Compute::Scatter:
            return rangeWithin(k.mapA, k.mapCount, b.offsets, a.offsets) &&
                   rangeWithin(k.mapB, 0, b.offsets, a.offsets);
          case Compute::Assemble: {
            if (!rangeWithin(k.listAt, k.listCount, b.spans, a.spans)) return false;
            for (std::uint32_t m = 0; m < k.listCount; ++m)
              if (!spanWithin(p.spans[k.listAt + m])) return false;
            return true;
          }
          default: return true;
        }
      }
      default: return true;
    }
  }

  static constexpr std::size_t kNoParentNode = static_cast<std::size_t>(-1);

  // The parent's node that node i is (the same node of the same program; for a placed program
  // the parent's next node, if node i equals it: the inserted copies match none), or
  // kNoParentNode. Never the parent's last node (the output).
  // The analysis made `like` the parent's program has matched the nodes so already (see
  // Analysis::likeNodes; the cursor starts at placedFrom_, at most its equal leading nodes,
  // and so goes through the same matches), without comparing them again.
  std::size_t parentNodeOf(std::size_t i) {
    std::size_t j = i;
    const std::vector<Node>& theirs = parent_->program_->graph.nodes;
    if (!parentHasProgram_) {
      if (parentCursor_ >= theirs.size()) return kNoParentNode;
      const bool matched = analysis_->likeProgram == parent_->program_
                               ? analysis_->likeNodes[i] == parentCursor_
                               : theirs[parentCursor_] == program_->graph.nodes[i];
      if (!matched) return kNoParentNode;
      j = parentCursor_++;
    }
    return j + 1 < theirs.size() ? j : kNoParentNode;
  }

  // Compiling node i, which is the parent's node j: fresh() takes the parent's storages of j
  // in their order while the sizes asked for are theirs (see storageBase_).
  void mirrorNode(std::size_t j) {
    const Marks& b = parent_->marks_[j];
    if (storageBase_.size() != b.storages) return;  // not expected: the main table is the parent's
    mirrorNext_ = b.storages;
    mirrorEnd_ = parent_->marks_[j + 1].storages;
  }

  // Node i (the parent's node j) compiled by copying what the parent compiled for j, if that
  // is what compiling it would give (see above); false (nothing done) if not.
  bool replay(std::size_t i, std::size_t j) {
    if (options_.traceNodes || (valueModel_ && dependsOnModel(i))) return false;
    const Node& n = program_->graph.nodes[i];
    if (n.op != NodeOp::CallFunction && n.op != NodeOp::CallModule) return false;
    const ElementCompiler& parent = *parent_;
    const ElementProgram* done = parent.finished_.get();
    if (!done || parent.valueModel_ || !parent.recordsMarks_) return false;
    const NodeFacts& f = analysis_->nodes[i];
    const NodeFacts& g = parent.analysis_->nodes[j];
    if (!f.getitemUsers.empty() || !g.getitemUsers.empty() || f.rawCount != g.rawCount) return false;
    // A `*_copy` view compiles alike in the same view mode (in the alias-views one, as the
    // program does or does not return it), and under F as in the copy-views mode (a copy).
    const bool readsViewMode = f.info.copyVariant && !valueModel_;
    if (readsViewMode && (options_.viewMode != parent.options_.viewMode ||
                          (options_.viewMode == ViewMode::AliasViews && f.keptViewCopy != g.keptViewCopy)))
      return false;
    const Marks& b = parent.marks_[j];
    const Marks& a = parent.marks_[j + 1];
    if (storageBase_.size() != b.storages || a.side != b.side || opaqueSlots_ != b.opaque || lists_.size() != b.lists)
      return false;
    for (std::uint32_t k = 0; k < f.rawCount; ++k)
      if (!sameArgument(analysis_->argRefs[f.rawAt + k], parent.analysis_->argRefs[g.rawAt + k], parent)) return false;
    for (std::size_t k = 0; k < n.kwargs.size(); ++k)
      if (!sameArgument(analysis_->argRefs[f.kwAt + k], parent.analysis_->argRefs[g.kwAt + k], parent)) return false;
    for (std::uint32_t s = b.steps; s < a.steps; ++s)
      if (!stepWithin(*done, done->steps[s], b, a)) return false;

    // Alike: the parent's work for node j, appended and moved to where the pools stand.
    charge(a.budget - b.budget);  // fails as the compile would (the same message)
    const std::int64_t offsetsBy = static_cast<std::int64_t>(out_.offsets.size()) - b.offsets;
    const std::int64_t spansBy = static_cast<std::int64_t>(out_.spans.size()) - b.spans;
    const std::int64_t operandsBy = static_cast<std::int64_t>(out_.operands.size()) - b.operands;
    const std::int64_t intsBy = static_cast<std::int64_t>(out_.ints.size()) - b.ints;
    auto append = [](auto& to, const auto& from, std::uint32_t begin, std::uint32_t end) {
      if (begin != end) to.insert(to.end(), from.begin() + begin, from.begin() + end);  // most stay as they are
    };
    const std::size_t firstStep = out_.steps.size(), firstSpan = out_.spans.size(), firstOperand = out_.operands.size();
    append(out_.steps, done->steps, b.steps, a.steps);
    append(out_.offsets, done->offsets, b.offsets, a.offsets);  // arena offsets and slots: as they are
    append(out_.spans, done->spans, b.spans, a.spans);
    append(out_.operands, done->operands, b.operands, a.operands);
    append(out_.ints, done->ints, b.ints, a.ints);
    append(storageBase_, parent.storageBase_, b.storages, a.storages);
    append(storageSize_, parent.storageSize_, b.storages, a.storages);
    append(lists_, parent.lists_, b.lists, a.lists);
    opaqueSlots_ = a.opaque;
    // By pointer: with an index, each pool's size would be read again after every record
    // written (a store may alias the vector's own pointers).
    for (Span *s = out_.spans.data() + firstSpan, *end = out_.spans.data() + out_.spans.size(); s != end; ++s)
      moveSpan(*s, offsetsBy);
    for (Operand *o = out_.operands.data() + firstOperand, *end = out_.operands.data() + out_.operands.size(); o != end; ++o)
      moveSpan(o->span, offsetsBy);
    for (Step *step = out_.steps.data() + firstStep, *end = out_.steps.data() + out_.steps.size(); step != end; ++step) {
      Step& k = *step;
      moveSpan(k.dest, offsetsBy);
      moveSpan(k.src, offsetsBy);
      if (k.kind == StepKind::Digest) {
        k.listAt = moved(k.listAt, spansBy);
        k.slotsAt = moved(k.slotsAt, offsetsBy);
      }
      if (k.kind != StepKind::Kernel) continue;
      k.operandsAt = moved(k.operandsAt, operandsBy);
      switch (k.compute) {
        case Compute::Reduce: k.mapA = moved(k.mapA, offsetsBy); break;
        case Compute::IndexTensor:
        case Compute::IndexPut: k.listAt = moved(k.listAt, intsBy); [[fallthrough]];
        case Compute::IndexSelect:
        case Compute::IndexCopyAdd:
        case Compute::Scatter:
          k.mapA = moved(k.mapA, offsetsBy);
          k.mapB = moved(k.mapB, offsetsBy);
          break;
        case Compute::Assemble: k.listAt = moved(k.listAt, spansBy); break;
        default: break;
      }
    }
    values_[i] = parent.values_[j];
    if (readsViewMode) viewModeSeen_ = true;  // as viewIsCopy() would have noted
    return true;
  }

  void emit(const Step& step) { out_.steps.push_back(step); }

  // Where a value is read from. A list's tensors are read in order: the spans of its items
  // (nested lists flattened) are appended to the span pool in that order, one range.
  Source sourceOf(const CValue& v) {
    Source s{};
    switch (v.kind) {
      case CValue::Kind::Tensor:
        s.kind = Source::Kind::Offsets;
        s.spansAt = static_cast<std::uint32_t>(out_.spans.size());
        out_.spans.push_back(spanOf(v.t));
        s.spansCount = 1;
        break;
      case CValue::Kind::List:
        s.kind = Source::Kind::Offsets;
        s.spansAt = static_cast<std::uint32_t>(out_.spans.size());
        for (const CValue& item : itemsOf(v)) {  // makes no list
          Source inner = sourceOf(item);
          if (inner.kind != Source::Kind::Offsets) s.constant = combine(s.constant, inner.constant);
        }
        s.spansCount = static_cast<std::uint32_t>(out_.spans.size()) - s.spansAt;
        break;
      case CValue::Kind::Opaque:
        s.kind = Source::Kind::Opaque;
        s.slot = v.slot;
        break;
      case CValue::Kind::Int:
      case CValue::Kind::Bool: s.constant = combine(1, static_cast<std::uint64_t>(v.i)); break;
      case CValue::Kind::Float: s.constant = combine(2, scalarElement(v.f)); break;
      case CValue::Kind::Text: s.constant = combine(3, static_cast<std::uint64_t>(v.i)); break;
      case CValue::Kind::None: s.constant = 0; break;
    }
    return s;
  }

  void fillFromSeed(const Layout& l, std::uint64_t nameHash) {
    Step s{};
    s.kind = StepKind::FillSeed;
    s.dest = spanOf(l);
    s.a = nameHash;
    emit(s);
  }

  void emitOpaqueCombine(std::uint32_t slot, std::uint32_t from, std::uint64_t salt) {
    Step s{};
    s.kind = StepKind::OpaqueCombine;
    s.slot = slot;
    s.from = from;
    s.b = salt;
    emit(s);
  }

  // dest[e] = src[e], element by element.
  void emitCopy(const Layout& from, const Layout& to) {
    Step s{};
    s.kind = StepKind::Copy;
    s.src = spanOf(from);
    s.dest = spanOf(to);
    emit(s);
  }

  void compilePlaceholder(const Node& n) {
    std::optional<Shape> shape = annotatedShape(current_);
    if (!shape) fail("placeholder %" + n.name + " has no static tensor type");
    CValue& v = values_[current_];  // made in place (a value is a large record)
    reset(v);
    v.kind = CValue::Kind::Tensor;
    fresh(*shape, v.t);
    fillFromSeed(v.t, hashText(n.name));
    declaredValues_.push_back(v);
    declaredAt_[current_] = static_cast<std::uint32_t>(declaredValues_.size());
    out_.placeholders.emplace_back(n.name, Source{});
  }

  void compileGetAttr(const Node& n) {
    CValue v;
    if (std::optional<Shape> shape = annotatedShape(current_)) {
      v.kind = CValue::Kind::Tensor;
      fresh(*shape, v.t);
      fillFromSeed(v.t, hashText("get_attr:" + n.target));
    } else {
      v.kind = CValue::Kind::Opaque;
      v.slot = newOpaque();
      Step s{};
      s.kind = StepKind::SetOpaque;
      s.slot = v.slot;
      s.a = hashText("get_attr:" + n.target);
      emit(s);
    }
    values_[current_] = v;
  }

  // --- calls ---

  struct Call {
    const Node& node;
    OpInfo info;
    // Bound to schema positions (schema ops only): a node's value itself for a reference (no
    // copy), else a literal in ElementCompiler::scratch_->literals.
    std::vector<const CValue*> args;
    std::span<const ArgRef> bound;  // the same arguments as written (for rebinding)

    Call(const Node& n, const OpInfo& i, std::vector<const CValue*> a, std::span<const ArgRef> b)
        : node(n), info(i), args(std::move(a)), bound(b) {}

    // By name, a literal: its length is known where it is called, so the comparisons with the
    // schema's names compile to a few instructions (a kernel's compile asks for several
    // arguments by name, in every compile and fork; Schema::argumentIndex was a call and a
    // memcmp call per name).
    template <std::size_t N>
    const CValue& arg(const char (&name)[N]) const {
      const std::size_t i = indexOf<N>(name);
      if (i == kNone) fail("schema of " + node.target + " has no argument '" + std::string(name) + "'");
      return *args[i];
    }
    template <std::size_t N>
    bool has(const char (&name)[N]) const {
      return indexOf<N>(name) != kNone;
    }
    // The argument `name`, or nullptr if the schema has none: has() and arg() in one look-up.
    template <std::size_t N>
    const CValue* find(const char (&name)[N]) const {
      const std::size_t i = indexOf<N>(name);
      return i == kNone ? nullptr : args[i];
    }

   private:
    static constexpr std::size_t kNone = static_cast<std::size_t>(-1);
    template <std::size_t N>
    std::size_t indexOf(const char (&name)[N]) const {
      const std::vector<SchemaArgument>& params = info.schema->arguments;
      for (std::size_t i = 0; i < params.size(); ++i)
        if (params[i].name.size() == N - 1 && std::memcmp(params[i].name.data(), name, N - 1) == 0) return i;
      return kNone;
    }
  };

  void compileCall(const Node& n) {
    const NodeFacts& facts = analysis_->nodes[current_];
    const OpInfo& info = facts.info;
    if (info.getitem) return compileGetitem(n);
    if (!info.schema) return compileSchemaless(n, info);
    if (!facts.bound) fail("%" + n.name + ": " + facts.bindError);
    Call call{n, info, std::move(scratch_->argPointers), analysis_->args(facts)};
    call.args.clear();
    // Sized before any pointer into it is taken; room for most schemas at once, rather than
    // grown (and its values moved) as longer ones come.
    if (scratch_->literals.size() < call.bound.size()) scratch_->literals.resize(std::max<std::size_t>(call.bound.size(), 16));
    for (std::size_t k = 0; k < call.bound.size(); ++k)
      call.args.push_back(&resolveRef(call.bound[k], scratch_->literals[k]));
    // Assigned once, as made (a CValue copies its layout's bytes: no cheaper move).
    values_[current_] = [&]() -> CValue {
      if (isViewKind(info.kind) && !info.outVariant) return compileView(call);
      if (info.kind == OpKind::SymSize) {
        const Layout& self = tensorArg(call.arg("self"), "self");
        CValue size;
        size.kind = CValue::Kind::Int;
        if (self.sizes.empty()) fail("sym_size of a 0-d tensor");
        size.i = self.sizes[static_cast<std::size_t>(normDim(asInt(call.arg("dim"), "dim"), self.sizes.size()))];
        return size;
      }
      if (isViewKind(info.kind)) return compileListViewOut(call);
      if (info.kind == OpKind::Hash) return compileHashOp(call);
      return compileKernel(call);
    }();
    scratch_->argPointers = std::move(call.args);  // its capacity, for the next call
    // F's rebinds take effect after the call: every argument above was read before any of
    // them (the arguments point at node values, which a rebind replaces).
    for (auto& [node, next] : scratch_->rebinds) {
      values_[node] = std::move(next);
      if (node < parentNode_.size()) parentNode_[node] = kNotParents;
    }
    scratch_->rebinds.clear();
  }


  void compileGetitem(const Node& n) {
    if (n.args.size() < 2 || !n.args[0].isRef()) fail("getitem needs a container and an index");
    std::span<const ArgRef> raw = analysis_->raw(analysis_->nodes[current_]);
    const CValue& container = valueOf(raw[0]);
    CValue scratch;
    std::int64_t i = asInt(resolveRef(raw[1], scratch), "getitem index");
    if (container.kind == CValue::Kind::List) {
      std::int64_t size = static_cast<std::int64_t>(container.itemsCount);
      if (i < 0) i += size;
      if (i < 0 || i >= size) fail("getitem index out of range");
      values_[current_] = itemsOf(container)[static_cast<std::size_t>(i)];
      return;
    }
    if (container.kind != CValue::Kind::Opaque) fail("getitem of a value that is not a list");
    // An element of an opaque (schema-less) result: fresh, derived from the container's digest.
    std::uint32_t from = container.slot;
    std::uint64_t salt = combine(hashText("getitem"), static_cast<std::uint64_t>(i));
    CValue v;
    if (std::optional<Shape> shape = annotatedShape(current_)) {
      v.kind = CValue::Kind::Tensor;
      fresh(*shape, v.t);
      emitHashFill(v.t, from, salt);
    } else {
      v.kind = CValue::Kind::Opaque;
      v.slot = newOpaque();
      emitOpaqueCombine(v.slot, from, salt);
    }
    values_[current_] = v;
  }

  // Everything a hash reads: tensors (by spans), opaque digests, and a constant for the rest.
  // The lists are compiler scratch (one digest is collected at a time).
  struct HashInputs {
    std::vector<Span>& tensors;
    std::vector<std::uint32_t>& opaques;
    std::uint64_t constant = 0;
  };

  HashInputs newHashInputs() {
    scratch_->hashSpans.clear();
    scratch_->hashSlots.clear();
    return HashInputs{scratch_->hashSpans, scratch_->hashSlots};
  }

  void collectHashInputs(const CValue& v, HashInputs& h) {
    switch (v.kind) {
      case CValue::Kind::Tensor:
        h.tensors.push_back(spanOf(v.t));
        h.constant = combine(h.constant, numelOf(v.t.sizes));
        break;
      case CValue::Kind::Opaque: h.opaques.push_back(v.slot); break;
      case CValue::Kind::List:
        h.constant = combine(h.constant, 0x4c495354 + v.itemsCount);
        for (const CValue& item : itemsOf(v)) collectHashInputs(item, h);  // makes no list
        break;
      default: h.constant = combine(h.constant, sourceOf(v).constant); break;
    }
  }

  // A step computing the digest of its inputs into a fresh opaque slot; returns the slot.
  std::uint32_t emitDigest(const HashInputs& h, std::uint64_t opId) {
    Step s{};
    s.kind = StepKind::Digest;
    s.slot = newOpaque();
    s.a = combine(opId, h.constant);
    s.listAt = static_cast<std::uint32_t>(out_.spans.size());
    s.listCount = static_cast<std::uint32_t>(h.tensors.size());
    out_.spans.insert(out_.spans.end(), h.tensors.begin(), h.tensors.end());
    s.slotsAt = static_cast<std::uint32_t>(out_.offsets.size());
    s.slotsCount = static_cast<std::uint32_t>(h.opaques.size());
    out_.offsets.insert(out_.offsets.end(), h.opaques.begin(), h.opaques.end());
    emit(s);
    return s.slot;
  }

  // Fills a layout with H(digest, channel, position).
  void emitHashFill(const Layout& l, std::uint32_t digestSlot, std::uint64_t channel) {
    Step s{};
    s.kind = StepKind::FillHash;
    s.dest = spanOf(l);
    s.from = digestSlot;
    s.b = channel;
    emit(s);
  }

  void compileSchemaless(const Node& n, const OpInfo& info) {
    HashInputs h = newHashInputs();
    CValue scratch;
    const NodeFacts& facts = analysis_->nodes[current_];
    for (const ArgRef& a : analysis_->raw(facts)) collectHashInputs(resolveRef(a, scratch), h);
    std::size_t kw = facts.kwAt;
    for (const auto& [name, a] : n.kwargs) {
      h.constant = combine(h.constant, hashText(name));
      collectHashInputs(resolveRef(analysis_->argRefs[kw++], scratch), h);
    }
    std::uint32_t digest = emitDigest(h, info.opId);
    CValue v;
    if (std::optional<Shape> shape = annotatedShape(current_)) {
      v.kind = CValue::Kind::Tensor;
      fresh(*shape, v.t);
      emitHashFill(v.t, digest, 1000);
    } else {
      v.kind = CValue::Kind::Opaque;
      v.slot = digest;
    }
    values_[current_] = v;
  }

  static bool sameAliasSet(const SchemaType& a, const SchemaType& b) {
    return a.alias && b.alias && !a.alias->beforeSets.empty() && a.alias->beforeSets == b.alias->beforeSets;
  }

  // Uninterpreted op with a schema.
  CValue compileHashOp(const Call& call) {
    const Schema& s = *call.info.schema;
    HashInputs h = newHashInputs();
    for (std::size_t k = 0; k < call.args.size(); ++k) {
      if (s.arguments[k].type.isTensor()) collectHashInputs(*call.args[k], h);
      else h.constant = combine(h.constant, sourceOf(*call.args[k]).constant);
    }
    std::uint32_t digest = emitDigest(h, call.info.opId);
    // Written arguments: every element gets H(op, inputs, k, position). Storage model: in
    // place. Value model (F): into a fresh new version that replaces the argument node for
    // later references (see rebindsWrittenArgument; an in-place-kind op's returned self is
    // its result instead, made in hashReturn).
    for (std::size_t k = 0; k < call.args.size(); ++k) {
      if (!s.arguments[k].type.isWrite()) continue;
      if (valueModel_ && !rebindsWrittenArgument(s, k)) continue;
      const CValue& a = *call.args[k];
      auto write = [&](const Layout& l, std::uint64_t channel, std::size_t item, bool isItem) {
        if (!valueModel_) return emitHashFill(l, digest, channel);
        CValue next;
        next.kind = CValue::Kind::Tensor;
        fresh(l.sizes, next.t);
        emitHashFill(next.t, digest, channel);
        rebind(call, k, item, isItem, next);
      };
      if (a.isTensor()) write(a.t, k, 0, false);
      else if (a.kind == CValue::Kind::List)
        for (std::size_t j = 0; j < a.itemsCount; ++j)  // write() makes no list
          if (itemsOf(a)[j].isTensor()) write(itemsOf(a)[j].t, combine(k, j), j, true);
    }
    if (s.returns.empty()) return {};
    CValue result;
    if (s.returns.size() == 1) {
      result = hashReturn(call, 0, digest);
    } else {
      result.kind = CValue::Kind::List;
      result.itemsAt = newList(s.returns.size());
      result.itemsCount = static_cast<std::uint32_t>(s.returns.size());
      for (std::size_t r = 0; r < s.returns.size(); ++r) {
        const CValue item = hashReturn(call, r, digest);
        lists_[result.itemsAt + r] = item;
      }
    }
    shareAlloc(call, result);
    return result;
  }

  // F: the node argument k of `call` names (item `item` of a list argument) is bound to its
  // new version `next` for every later reference, the output included (from the end of the
  // call on: see compileCall).
  void rebind(const Call& call, std::size_t k, std::size_t item, bool isItem, const CValue& next) {
    const ArgRef& r = call.bound[k];
    const Arg& a = *r.arg;
    if (!isItem && a.isRef()) scratch_->rebinds.emplace_back(nodeOfRef(r), next);
    else if (isItem && a.isSequence() && item < a.items.size() && a.items[item].isRef())
      scratch_->rebinds.emplace_back(nodeOfRef(analysis_->items(r)[item]), next);
  }

  std::size_t nodeOfRef(const ArgRef& r) const {
    return r.node == ArgRef::kNoNode ? analysis_->nodeOf(r.arg->text) : r.node;
  }

  // A result's shape: the node's annotation for a single return; for a tuple (printed without
  // an annotation), the annotation of a getitem user taking element r.
  std::optional<Shape> returnShape(const Call& call, std::size_t r) const {
    const Schema& s = *call.info.schema;
    if (s.returns.size() == 1) return annotatedShape(current_);
    for (std::size_t user : analysis_->nodes[current_].getitemUsers)
      if (takesElement(user, r))
        if (std::optional<Shape> shape = annotatedShape(user)) return shape;
    return std::nullopt;
  }

  bool takesElement(std::size_t getitem, std::size_t r) const {
    const Node& u = program_->graph.nodes[getitem];
    return u.args.size() >= 2 && u.args[1].kind == Arg::Kind::Int && u.args[1].integer == static_cast<std::int64_t>(r);
  }

  // Element r of a tuple result is read: some getitem takes it.
  bool elementUsed(std::size_t r) const {
    for (std::size_t user : analysis_->nodes[current_].getitemUsers)
      if (takesElement(user, r)) return true;
    return false;
  }

  CValue hashReturn(const Call& call, std::size_t r, std::uint32_t digest) {
    const Schema& s = *call.info.schema;
    const SchemaType& type = s.returns[r].type;
    CValue v;
    if (!type.isTensor()) {
      v.kind = CValue::Kind::Opaque;
      v.slot = newOpaque();
      emitOpaqueCombine(v.slot, digest, 5000 + r);
      return v;
    }
    if (type.isList) fail(call.node.target + ": uninterpreted op returning a tensor list");
    // A return aliasing an argument.
    for (std::size_t k = 0; k < s.arguments.size(); ++k) {
      if (!sameAliasSet(type, s.arguments[k].type) || !call.args[k]->isTensor()) continue;
      const Layout& arg = call.args[k]->t;
      if (s.arguments[k].type.isWrite()) {
        if (!valueModel_) return *call.args[k];
        v.kind = CValue::Kind::Tensor;  // the new version: the same contents, fresh
        fresh(arg.sizes, v.t);
        emitHashFill(v.t, digest, k);
        return v;
      }
      // An unknown view: only the whole-tensor case is representable.
      std::optional<Shape> shape = returnShape(call, r);
      if (shape && *shape == arg.sizes && !valueModel_) return *call.args[k];
      if (!shape || *shape != arg.sizes) fail(call.node.target + ": unknown view op");
      v.kind = CValue::Kind::Tensor;
      fresh(*shape, v.t);
      emitCopy(arg, v.t);
      return v;
    }
    std::optional<Shape> shape = returnShape(call, r);
    if (!shape) {
      // An element of a tuple no getitem takes (a batch norm's save_mean): never read as a
      // tensor, so it needs no shape or storage.
      if (s.returns.size() > 1 && !elementUsed(r)) {
        v.kind = CValue::Kind::Opaque;
        v.slot = digest;
        return v;
      }
      fail("%" + call.node.name + " (" + call.node.target + "): result shape unknown (no annotation)");
    }
    v.kind = CValue::Kind::Tensor;
    fresh(*shape, v.t);
    emitHashFill(v.t, digest, 1000 + r);
    return v;
  }

  // _share_alloc_with_arg_idx = k (storage model): the result lives in argument k's storage.
  // Inline, the test most calls stop at (no such meta); the move itself is a call of its own.
  void shareAlloc(const Call& call, CValue& result) {
    const std::optional<int>& k = analysis_->nodes[current_].shareAllocArgIndex;
    if (!k || valueModel_ || !result.isTensor()) return;
    shareAllocAt(call, result, *k);
  }
  [[gnu::noinline]] void shareAllocAt(const Call& call, CValue& result, int index) {
    if (index < 0 || static_cast<std::size_t>(index) >= call.node.args.size()) fail("_share_alloc_with_arg_idx out of range");
    CValue scratch;
    const CValue& base = resolveRef(analysis_->raw(analysis_->nodes[current_])[static_cast<std::size_t>(index)], scratch);
    if (!base.isTensor()) fail("_share_alloc_with_arg_idx names a non-tensor argument");
    Layout shared;
    shared.storage = base.t.storage;
    shared.offset = base.t.offset;
    shared.sizes = result.t.sizes;
    shared.strides = contiguousStrides(shared.sizes);
    if (shared.offset + numelOf(shared.sizes) > sizeOf(shared.storage))
      fail("_share_alloc_with_arg_idx: the result does not fit in argument's storage");
    // The result was computed into fresh storage; move it into the shared place.
    emitCopy(result.t, shared);
    result.t = shared;
  }

  // --- views ---

  Layout viewLayout(const Call& call, bool& needsCopy) {
    const OpKind kind = call.info.kind;
    const Layout& self = tensorArg(call.arg("self"), "self");
    Layout l = self;
    std::size_t rank = self.sizes.size();
    switch (kind) {
      case OpKind::Select: {
        std::size_t d = static_cast<std::size_t>(normDim(asInt(call.arg("dim"), "dim"), rank));
        if (rank == 0) fail("select on a 0-d tensor");
        std::int64_t i = asInt(call.arg("index"), "index");
        if (i < 0) i += self.sizes[d];
        if (i < 0 || i >= self.sizes[d]) fail("select index out of range");
        l.offset += i * self.strides[d];
        l.sizes.erase(l.sizes.begin() + static_cast<std::ptrdiff_t>(d));
        l.strides.erase(l.strides.begin() + static_cast<std::ptrdiff_t>(d));
        return l;
      }
      case OpKind::Slice:
      case OpKind::Narrow: {
        std::size_t d = static_cast<std::size_t>(normDim(asInt(call.arg("dim"), "dim"), rank));
        if (rank == 0) fail("slice of a 0-d tensor");
        std::int64_t size = self.sizes[d], start, end, step = 1;
        if (kind == OpKind::Narrow) {
          start = asInt(call.arg("start"), "start");
          if (start < 0) start += size;
          end = start + asInt(call.arg("length"), "length");
          if (start < 0 || end > size || end < start) fail("narrow out of range");
        } else {
          start = asOptInt(call.arg("start"), "start").value_or(0);
          end = asOptInt(call.arg("end"), "end").value_or(size);
          step = asInt(call.arg("step"), "step");
          if (step <= 0) fail("slice step must be positive");
          if (start < 0) start += size;
          if (end < 0) end += size;
          start = std::clamp<std::int64_t>(start, 0, size);
          end = std::clamp<std::int64_t>(end, start, size);
        }
        l.offset += start * self.strides[d];
        l.sizes[d] = (end - start + step - 1) / step;
        l.strides[d] *= step;
        return l;
      }
      case OpKind::Expand: return expandTo(self, asIntList(call.arg("size"), "size"));
      case OpKind::ExpandAs: return expandTo(self, tensorArg(call.arg("other"), "other").sizes);
      case OpKind::Transpose:
      case OpKind::T: {
        if (kind == OpKind::T && rank < 2) return l;
        std::size_t a = kind == OpKind::T ? 0 : static_cast<std::size_t>(normDim(asInt(call.arg("dim0"), "dim0"), rank));
        std::size_t b = kind == OpKind::T ? 1 : static_cast<std::size_t>(normDim(asInt(call.arg("dim1"), "dim1"), rank));
        if (rank == 0) return l;
        std::swap(l.sizes[a], l.sizes[b]);
        std::swap(l.strides[a], l.strides[b]);
        return l;
      }
      case OpKind::Permute: {
        Shape dims = asIntList(call.arg("dims"), "dims");
        if (dims.size() != rank) fail("permute: wrong number of dims");
        std::vector<bool> seen(rank, false);
        for (std::size_t i = 0; i < rank; ++i) {
          std::size_t d = static_cast<std::size_t>(normDim(dims[i], rank));
          if (seen[d]) fail("permute: repeated dim");
          seen[d] = true;
          l.sizes[i] = self.sizes[d];
          l.strides[i] = self.strides[d];
        }
        return l;
      }
      case OpKind::Unsqueeze: {
        std::int64_t d = asInt(call.arg("dim"), "dim");
        std::int64_t r = static_cast<std::int64_t>(rank);
        if (d < -r - 1 || d > r) fail("unsqueeze: dim out of range");
        if (d < 0) d += r + 1;
        std::size_t u = static_cast<std::size_t>(d);
        std::int64_t stride = u < rank ? self.sizes[u] * self.strides[u] : 1;
        l.sizes.insert(l.sizes.begin() + d, 1);
        l.strides.insert(l.strides.begin() + d, stride);
        return l;
      }
      case OpKind::Squeeze: {
        std::vector<bool> drop(rank, false);
        if (call.has("dim")) {
          for (std::int64_t d : asIntList(call.arg("dim"), "dim")) {
            if (rank == 0) break;
            std::size_t u = static_cast<std::size_t>(normDim(d, rank));
            drop[u] = self.sizes[u] == 1;
          }
        } else {
          for (std::size_t u = 0; u < rank; ++u) drop[u] = self.sizes[u] == 1;
        }
        l.sizes.clear();
        l.strides.clear();
        for (std::size_t u = 0; u < rank; ++u)
          if (!drop[u]) l.sizes.push_back(self.sizes[u]), l.strides.push_back(self.strides[u]);
        return l;
      }
      case OpKind::View:
      case OpKind::ViewAs: {
        Shape target = kind == OpKind::ViewAs ? tensorArg(call.arg("other"), "other").sizes
                                              : asIntList(call.has("size") ? call.arg("size") : call.arg("shape"), "size");
        std::int64_t known = 1, infer = -1;
        for (std::size_t i = 0; i < target.size(); ++i) {
          if (target[i] == -1) {
            if (infer >= 0) fail("view: two -1 sizes");
            infer = static_cast<std::int64_t>(i);
          } else known *= target[i];
        }
        std::int64_t n = numelOf(self.sizes);
        if (infer >= 0) target[static_cast<std::size_t>(infer)] = known == 0 ? 0 : n / known;
        if (numelOf(target) != n) fail("view: size mismatch");
        if (!isContiguous(self)) {
          if (call.info.schema->name == "view" && !call.info.copyVariant) fail("view of a non-contiguous tensor");
          needsCopy = true;  // reshape semantics
        }
        l.sizes = target;
        l.strides = contiguousStrides(target);
        return l;
      }
      case OpKind::Diagonal: {
        std::int64_t off = asInt(call.arg("offset"), "offset");
        std::size_t d1 = static_cast<std::size_t>(normDim(asInt(call.arg("dim1"), "dim1"), rank));
        std::size_t d2 = static_cast<std::size_t>(normDim(asInt(call.arg("dim2"), "dim2"), rank));
        if (rank < 2 || d1 == d2) fail("diagonal: bad dims");
        std::int64_t len = off >= 0 ? std::min(self.sizes[d1], self.sizes[d2] - off)
                                    : std::min(self.sizes[d1] + off, self.sizes[d2]);
        len = std::max<std::int64_t>(len, 0);
        if (len > 0) l.offset += off >= 0 ? off * self.strides[d2] : -off * self.strides[d1];
        l.sizes.clear();
        l.strides.clear();
        for (std::size_t u = 0; u < rank; ++u)
          if (u != d1 && u != d2) l.sizes.push_back(self.sizes[u]), l.strides.push_back(self.strides[u]);
        l.sizes.push_back(len);
        l.strides.push_back(self.strides[d1] + self.strides[d2]);
        return l;
      }
      case OpKind::AsStrided: {
        l.sizes = asIntList(call.arg("size"), "size");
        l.strides = asIntList(call.arg("stride"), "stride");
        if (l.sizes.size() != l.strides.size()) fail("as_strided: size and stride differ in rank");
        l.offset = asOptInt(call.arg("storage_offset"), "storage_offset").value_or(self.offset);
        return l;
      }
      case OpKind::Alias: return l;
      case OpKind::Contiguous:
        needsCopy = !isContiguous(self);
        return l;
      default: fail("not a view");
    }
  }

  std::vector<Layout> listViewLayouts(const Call& call) {
    const Layout& self = tensorArg(call.arg("self"), "self");
    std::size_t rank = self.sizes.size();
    std::size_t d = static_cast<std::size_t>(normDim(asInt(call.arg("dim"), "dim"), rank));
    if (rank == 0) fail("split of a 0-d tensor");
    std::int64_t size = self.sizes[d];
    std::vector<Layout> parts;
    if (call.info.kind == OpKind::Unbind) {
      for (std::int64_t i = 0; i < size; ++i) {
        Layout l = self;
        l.offset += i * self.strides[d];
        l.sizes.erase(l.sizes.begin() + static_cast<std::ptrdiff_t>(d));
        l.strides.erase(l.strides.begin() + static_cast<std::ptrdiff_t>(d));
        parts.push_back(l);
      }
      return parts;
    }
    std::vector<std::int64_t> sizes;  // may be longer than a rank
    if (call.info.kind == OpKind::SplitWithSizes) {
      const CValue& list = call.arg("split_sizes");
      if (list.kind == CValue::Kind::List)
        for (const CValue& item : itemsOf(list)) sizes.push_back(asInt(item, "split_sizes"));
      else sizes.push_back(asInt(list, "split_sizes"));
      std::int64_t total = 0;
      for (std::int64_t s : sizes) total += s;
      if (total != size) fail("split_with_sizes: sizes do not add up");
    } else {
      std::int64_t chunk = 0;
      if (call.info.kind == OpKind::Chunk) {
        std::int64_t chunks = asInt(call.arg("chunks"), "chunks");
        if (chunks <= 0) fail("chunk: chunks must be positive");
        chunk = (size + chunks - 1) / chunks;
      } else {
        chunk = asInt(call.arg("split_size"), "split_size");
      }
      if (chunk <= 0 && size > 0) fail("split: size must be positive");
      for (std::int64_t at = 0; at < size; at += chunk) sizes.push_back(std::min(chunk, size - at));
      if (size == 0) sizes.push_back(0);
    }
    std::int64_t at = 0;
    for (std::int64_t s : sizes) {
      Layout l = self;
      l.offset += at * self.strides[d];
      l.sizes[d] = s;
      parts.push_back(l);
      at += s;
    }
    return parts;
  }

  CValue materialize(const Layout& from) {
    CValue v;
    v.kind = CValue::Kind::Tensor;
    fresh(from.sizes, v.t);
    emitCopy(from, v.t);
    return v;
  }

  mutable bool viewModeSeen_ = false;

  bool viewIsCopy(const Call& call) const {
    if (valueModel_) return true;
    if (!call.info.copyVariant) return false;
    viewModeSeen_ = true;
    if (options_.viewMode == ViewMode::CopyViews) return true;
    // AliasViews: every copy variant becomes a view, except a view_copy the program returns.
    return call.info.schema->name == "view_copy" && analysis_->nodes[current_].keptViewCopy;
  }

  CValue compileView(const Call& call) {
    const bool copy = viewIsCopy(call);
    if (isListViewKind(call.info.kind)) {
      std::vector<CValue> items;
      for (const Layout& part : listViewLayouts(call)) {
        if (copy) items.push_back(materialize(part));
        else {
          CValue v;
          v.kind = CValue::Kind::Tensor;
          v.t = part;
          items.push_back(v);
        }
      }
      return makeList(items);
    }
    bool needsCopy = false;
    Layout l = viewLayout(call, needsCopy);
    if (needsCopy) {  // reshape of a non-contiguous tensor: a copy in the self's order, then a view
      CValue c = materialize(tensorArg(call.arg("self"), "self"));
      l.storage = c.t.storage;
      l.offset = 0;
      l.strides = contiguousStrides(l.sizes);
      if (call.info.kind == OpKind::Contiguous) return c;
    }
    if (copy) return materialize(l);
    CValue v;
    v.kind = CValue::Kind::Tensor;
    v.t = l;
    return v;
  }

  // split_with_sizes_copy.out / unbind_copy.int_out: the parts copied into `out`.
  CValue compileListViewOut(const Call& call) {
    std::vector<Layout> parts = listViewLayouts(call);
    const CValue& out = call.arg("out");
    if (out.kind != CValue::Kind::List || out.itemsCount != parts.size()) fail(call.node.target + ": out list arity");
    for (std::size_t j = 0; j < parts.size(); ++j) {
      const Layout& dst = tensorArg(itemsOf(out)[j], "out");  // the loop makes no list
      if (dst.sizes != parts[j].sizes) fail(call.node.target + ": out shape mismatch");
      if (valueModel_) {  // F: the out list's elements are rebound to copies of the parts
        rebind(call, *call.info.schema->argumentIndex("out"), j, true, materialize(parts[j]));
        continue;
      }
      // A kernel, not a Copy step: the parts may overlap `out`, so read all, then write.
      scratch_->ins.clear();
      Operand in{};
      in.span = spanOf(parts[j]);
      in.count = in.span.count;
      scratch_->ins.push_back(in);
      Step k{};
      k.compute = Compute::Copy;
      Span to = spanOf(dst);
      emitKernel(k, to, to.count);
    }
    return {};
  }

  // --- interpreted kernels ---


  Operand operandOf(const CValue& v, const Shape& target) {
    Operand op{};
    op.count = static_cast<std::uint32_t>(numelOf(target));
    // Most operands already have the target's shape; expandTo would return their layout as it
    // is.
    if (v.isTensor()) op.span = v.t.sizes == target ? spanOf(v.t) : spanOf(expandTo(v.t, target));
    else {
      op.isConstant = true;
      op.constant = asScalar(v);
    }
    return op;
  }

  Operand operandOwnShape(const CValue& v, const char* what) {
    const Layout& l = tensorArg(v, what);
    Operand op{};
    op.span = spanOf(l);
    op.count = op.span.count;
    return op;
  }

  // A scalar's shape is [] (a reference: a Shape is a large record).
  const Shape& shapeOf(const CValue& v) const { return v.isTensor() ? v.t.sizes : noShape_; }
  const Shape noShape_;

  // A kernel step over scratch_->ins, computing `n` elements into `dest`; `k` holds the computation
  // and its parameters.
  void emitKernel(const Step& step, Span dest, std::size_t n) {
    Step& k = out_.steps.emplace_back(step);  // completed in place (a Step is a large record)
    k.kind = StepKind::Kernel;
    k.operandsAt = static_cast<std::uint32_t>(out_.operands.size());
    k.operandsCount = static_cast<std::uint32_t>(scratch_->ins.size());
    out_.operands.insert(out_.operands.end(), scratch_->ins.begin(), scratch_->ins.end());
    k.dest = dest;
    k.outSize = static_cast<std::uint32_t>(n);
  }

  // An index table of n entries in the offset pool: its start.
  std::uint32_t newTable(std::size_t n) {
    std::uint32_t at = static_cast<std::uint32_t>(out_.offsets.size());
    out_.offsets.resize(out_.offsets.size() + n);
    return at;
  }

  // The destination of a single tensor result of shape `shape`, and the result value.
  CValue destinationFor(const Call& call, const Shape& shape, Span& dest) {
    CValue v;
    if (!valueModel_ && call.info.resultWrites >= 0) {
      const CValue& written = *call.args[static_cast<std::size_t>(call.info.resultWrites)];
      const Layout& l = tensorArg(written, "written argument");
      if (l.sizes != shape) fail("%" + call.node.name + ": result shape differs from the written argument's");
      dest = spanOf(l);
      return written;
    }
    v.kind = CValue::Kind::Tensor;
    fresh(shape, v.t);
    dest = spanOf(v.t);
    return v;
  }

  // Compiles one kernel: operands, output shape, the computation; in-place ops compute with
  // the self's shape and write the self; out= variants write `out`.
  CValue compileKernel(const Call& call) {
    const OpKind kind = call.info.kind;
    // Foreach ops: several results.
    if (kind == OpKind::ForeachAdd || kind == OpKind::ForeachSub || kind == OpKind::ForeachMul) return compileForeach(call);

    const bool inplace = call.info.inplace;
    scratch_->ins.clear();
    Shape shape;
    Step k{};
    auto selfShape = [&]() -> const Shape& { return tensorArg(call.arg("self"), "self").sizes; };

    switch (kind) {
      case OpKind::Add:
      case OpKind::Sub:
      case OpKind::Rsub:
      case OpKind::Mul: {
        const CValue& self = call.arg("self");
        const CValue& other = call.arg("other");
        shape = inplace ? selfShape() : broadcastShapes(shapeOf(self), shapeOf(other));
        scratch_->ins.push_back(operandOf(self, shape));
        scratch_->ins.push_back(operandOf(other, shape));
        const CValue* alphaArg = call.find("alpha");  // None: 1
        const std::uint64_t alpha = alphaArg && !alphaArg->isNone() ? asScalar(*alphaArg) : 1;
        k.compute = kind == OpKind::Add ? Compute::Add
                    : kind == OpKind::Sub ? Compute::Sub
                    : kind == OpKind::Rsub ? Compute::Rsub
                                           : Compute::Mul;
        k.a = alpha;
        break;
      }
      case OpKind::Neg:
        shape = selfShape();
        scratch_->ins.push_back(operandOf(call.arg("self"), shape));
        k.compute = Compute::Neg;
        break;
      case OpKind::Sum:
      case OpKind::Mean: return compileReduction(call);
      case OpKind::Copy:
      case OpKind::Clone:
      case OpKind::Fill:
      case OpKind::Zero:
      case OpKind::FactoryLike: {
        shape = selfShape();
        if (kind == OpKind::Copy) scratch_->ins.push_back(operandOf(call.arg("src"), shape));
        else if (kind == OpKind::Clone) scratch_->ins.push_back(operandOf(call.arg("self"), shape));
        else if (kind == OpKind::Fill) scratch_->ins.push_back(operandOf(call.arg("value"), shape));
        else if (kind == OpKind::Zero) scratch_->ins.push_back(operandOf(CValue{}, shape));
        else scratch_->ins.push_back(factoryFill(call, shape));
        k.compute = Compute::Copy;
        break;
      }
      case OpKind::Factory: {
        shape = asIntList(call.arg("size"), "size");
        scratch_->ins.push_back(factoryFill(call, shape));
        k.compute = Compute::Copy;
        break;
      }
      case OpKind::Arange: {
        const CValue* startArg = call.find("start");
        std::int64_t start = startArg ? asInt(*startArg, "start") : 0;
        std::int64_t end = asInt(call.arg("end"), "end");
        const CValue* stepArg = call.find("step");
        std::int64_t step = stepArg ? asInt(*stepArg, "step") : 1;
        if (step == 0) fail("arange: step 0");
        std::int64_t n = step > 0 ? (end - start + step - 1) / step : (start - end - step - 1) / -step;
        shape = {std::max<std::int64_t>(n, 0)};
        k.compute = Compute::Arange;
        k.a = static_cast<std::uint64_t>(start);
        k.b = static_cast<std::uint64_t>(step);
        break;
      }
      case OpKind::Where: {
        const CValue &c = call.arg("condition"), &a = call.arg("self"), &b = call.arg("other");
        shape = broadcastShapes(broadcastShapes(shapeOf(c), shapeOf(a)), shapeOf(b));
        scratch_->ins.push_back(operandOf(c, shape));
        scratch_->ins.push_back(operandOf(a, shape));
        scratch_->ins.push_back(operandOf(b, shape));
        k.compute = Compute::Where;
        break;
      }
      case OpKind::MaskedFill: {
        const CValue &self = call.arg("self"), &mask = call.arg("mask");
        shape = inplace ? selfShape() : broadcastShapes(shapeOf(self), shapeOf(mask));
        scratch_->ins.push_back(operandOf(self, shape));
        scratch_->ins.push_back(operandOf(mask, shape));
        scratch_->ins.push_back(operandOf(call.arg("value"), shape));
        k.compute = Compute::MaskedFill;
        break;
      }
      case OpKind::IndexPut:
      case OpKind::IndexTensor: return compileAdvancedIndex(call);
      case OpKind::IndexCopy:
      case OpKind::IndexAdd:
      case OpKind::IndexSelect: return compileIndexDim(call);
      case OpKind::Scatter:
      case OpKind::ScatterAdd: return compileScatter(call);
      case OpKind::SliceScatter:
      case OpKind::SelectScatter:
      case OpKind::Cat:
      case OpKind::Stack: return compileAssemble(call);
      default: fail("internal: kernel not handled");
    }
    return finishSingle(call, k, shape);
  }

  Operand factoryFill(const Call& call, const Shape& shape) {
    std::string_view name = call.info.schema->name;
    CValue value;
    value.kind = CValue::Kind::Int;
    if (name.starts_with("ones")) value.i = 1;
    else if (name.starts_with("full")) value = call.arg("fill_value");
    return operandOf(value, shape);
  }

  // Emits kernel `k` over scratch_->ins with a result of shape `shape`.
  CValue finishSingle(const Call& call, const Step& k, const Shape& shape) {
    Span dest{};
    CValue result = destinationFor(call, shape, dest);
    std::size_t n = static_cast<std::size_t>(numelOf(shape));
    emitKernel(k, dest, n);
    // F: an `out=` argument is rebound to the result (an in-place-kind op's self is not).
    const Schema& s = *call.info.schema;
    if (valueModel_ && !s.returns.empty())
      for (std::size_t a = 0; a < s.arguments.size(); ++a)
        if (s.arguments[a].type.isWrite() && sameAliasSet(s.returns[0].type, s.arguments[a].type) &&
            rebindsWrittenArgument(s, a))
          rebind(call, a, 0, false, result);
    shareAlloc(call, result);
    return result;
  }

  CValue compileReduction(const Call& call) {
    const Layout& self = tensorArg(call.arg("self"), "self");
    const std::size_t rank = self.sizes.size();
    std::vector<bool> reduce(rank, true);
    bool keepdim = false;
    if (call.has("dim")) {
      const CValue& dims = call.arg("dim");
      if (!dims.isNone() && !(dims.kind == CValue::Kind::List && dims.itemsCount == 0)) {
        reduce.assign(rank, false);
        for (std::int64_t d : asIntList(dims, "dim")) reduce[static_cast<std::size_t>(normDim(d, rank))] = true;
      }
      if (const CValue* keep = call.find("keepdim")) keepdim = asInt(*keep, "keepdim") != 0;
    }
    Shape shape;
    for (std::size_t d = 0; d < rank; ++d) {
      if (!reduce[d]) shape.push_back(self.sizes[d]);
      else if (keepdim) shape.push_back(1);
    }
    // Static map: input element (row-major) -> output element.
    Shape outStrides(rank, 0);
    {
      std::int64_t stride = 1;
      for (std::size_t d = rank; d-- > 0;)
        if (!reduce[d]) outStrides[d] = stride, stride *= self.sizes[d];
    }
    std::int64_t n = numelOf(self.sizes);
    charge(static_cast<std::size_t>(n));
    const std::uint32_t mapAt = newTable(static_cast<std::size_t>(n));
    Shape idx(rank, 0);
    for (std::int64_t e = 0; e < n; ++e) {
      std::int64_t o = 0;
      for (std::size_t d = 0; d < rank; ++d) o += idx[d] * outStrides[d];
      out_.offsets[mapAt + static_cast<std::size_t>(e)] = static_cast<std::uint32_t>(o);
      advanceRowMajor(idx, self.sizes);
    }
    std::int64_t outN = numelOf(shape);
    std::int64_t count = outN == 0 ? 0 : n / std::max<std::int64_t>(outN, 1);
    scratch_->ins.clear();
    scratch_->ins.push_back(operandOwnShape(call.arg("self"), "self"));
    Step k{};
    k.compute = Compute::Reduce;
    k.mapA = mapAt;
    k.mapCount = static_cast<std::uint32_t>(n);
    k.flag = call.info.kind == OpKind::Mean;
    k.a = static_cast<std::uint64_t>(count);
    return finishSingle(call, k, shape);
  }

  // index_put / index.Tensor: advanced indexing with a list of optional index tensors.
  CValue compileAdvancedIndex(const Call& call) {
    const Layout& self = tensorArg(call.arg("self"), "self");
    const Shape& S = self.sizes;
    const CValue& indices = call.arg("indices");
    if (indices.kind != CValue::Kind::List) fail("index: indices must be a list");
    // Read before finishSingle, the first step here that may make a list (shareAlloc).
    const std::span<const CValue> indexItems = itemsOf(indices);
    if (indexItems.size() > S.size()) fail("index: too many indices");
    // Per-dimension lists are held inline (at most a rank's worth: S and R are Shapes).
    std::array<std::size_t, Shape::kMaxRank> indexedDims{};  // the dims with an index tensor
    std::size_t indexedCount = 0;
    Shape I;
    for (std::size_t j = 0; j < indexItems.size(); ++j) {
      if (indexItems[j].isNone()) continue;
      const Layout& ix = tensorArg(indexItems[j], "index");
      indexedDims[indexedCount++] = j;
      I = indexedCount == 1 ? ix.sizes : broadcastShapes(I, ix.sizes);
    }
    if (indexedCount == 0) fail("index: no index tensors");
    const std::span<const std::size_t> indexed(indexedDims.data(), indexedCount);
    const bool adjacent = indexed.back() - indexed.front() + 1 == indexed.size();
    // Result shape R and, for each position of R, the static part of the self offset and the
    // position in I.
    Shape R;
    std::array<int, Shape::kMaxRank> dimRole{};  // per R dim: -1 I dims (placed once), else the self dim
    std::array<bool, Shape::kMaxRank> isIndexed{};
    for (std::size_t j : indexed) isIndexed[j] = true;
    auto pushI = [&] {
      for (std::int64_t s : I) R.push_back(s), dimRole[R.size() - 1] = -1;  // R throws past kMaxRank
    };
    if (!adjacent) pushI();
    for (std::size_t d = 0; d < S.size(); ++d) {
      if (isIndexed[d]) {
        if (adjacent && d == indexed.front()) pushI();
        continue;
      }
      R.push_back(S[d]);
      dimRole[R.size() - 1] = static_cast<int>(d);
    }
    Shape cs = contiguousStrides(S);
    std::int64_t nR = numelOf(R);
    // PyTorch raises on an index into an empty dimension; there is no element to take.
    for (std::size_t j : indexed)
      if (S[j] == 0 && nR > 0) fail("index: indexing a dimension of size 0");
    charge(static_cast<std::size_t>(2 * nR));
    const std::uint32_t baseAt = newTable(static_cast<std::size_t>(nR));
    const std::uint32_t iAt = newTable(static_cast<std::size_t>(nR));
    Shape Istrides = contiguousStrides(I);
    Shape idx(R.size(), 0);
    for (std::int64_t e = 0; e < nR; ++e) {
      std::int64_t base = 0, ip = 0;
      std::size_t iDim = 0;
      for (std::size_t r = 0; r < R.size(); ++r) {
        if (dimRole[r] < 0) ip += idx[r] * Istrides[iDim++];
        else base += idx[r] * cs[static_cast<std::size_t>(dimRole[r])];
      }
      out_.offsets[baseAt + static_cast<std::size_t>(e)] = static_cast<std::uint32_t>(base);
      out_.offsets[iAt + static_cast<std::size_t>(e)] = static_cast<std::uint32_t>(ip);
      advanceRowMajor(idx, R);
    }
    scratch_->ins.clear();
    scratch_->ins.push_back(operandOwnShape(call.arg("self"), "self"));
    Step k{};
    k.mapA = baseAt;
    k.mapB = iAt;
    k.mapCount = static_cast<std::uint32_t>(nR);
    k.listAt = static_cast<std::uint32_t>(out_.ints.size());  // (size, contiguous stride) per index
    k.listCount = static_cast<std::uint32_t>(indexed.size());
    for (std::size_t j : indexed) {
      scratch_->ins.push_back(operandOf(indexItems[j], I));
      out_.ints.push_back(S[j]);
      out_.ints.push_back(cs[j]);
    }
    if (call.info.kind == OpKind::IndexTensor) {
      k.compute = Compute::IndexTensor;
      return finishSingle(call, k, R);
    }
    scratch_->ins.push_back(operandOf(call.arg("values"), R));
    k.compute = Compute::IndexPut;
    k.flag = asInt(call.arg("accumulate"), "accumulate") != 0;
    k.valuesAt = static_cast<std::uint32_t>(scratch_->ins.size() - 1);
    return finishSingle(call, k, S);
  }

  // index_copy / index_add / index_select: an index along one dimension.
  CValue compileIndexDim(const Call& call) {
    const OpKind kind = call.info.kind;
    const Layout& self = tensorArg(call.arg("self"), "self");
    const Shape& S = self.sizes;
    const std::size_t d = static_cast<std::size_t>(normDim(asInt(call.arg("dim"), "dim"), S.size()));
    const Layout& index = tensorArg(call.arg("index"), "index");
    if (index.sizes.size() > 1) fail("index along a dim: index must be 0-d or 1-d");
    const std::int64_t L = numelOf(index.sizes);
    const std::int64_t dimSize = S.empty() ? 1 : S[d];
    Shape iterShape = S;  // the source (copy/add) or result (select) shape
    if (!S.empty()) iterShape[d] = L;
    Shape cs = contiguousStrides(S);
    const std::int64_t dimStride = S.empty() ? 1 : cs[d];
    std::int64_t n = numelOf(iterShape);
    if (dimSize == 0 && n > 0) fail("index along a dim: the dimension has size 0");
    charge(static_cast<std::size_t>(2 * n));
    const std::uint32_t baseAt = newTable(static_cast<std::size_t>(n));
    const std::uint32_t coordAt = newTable(static_cast<std::size_t>(n));
    Shape idx(iterShape.size(), 0);
    for (std::int64_t e = 0; e < n; ++e) {
      std::int64_t base = 0;
      for (std::size_t j = 0; j < iterShape.size(); ++j)
        if (j != d) base += idx[j] * cs[j];
      out_.offsets[baseAt + static_cast<std::size_t>(e)] = static_cast<std::uint32_t>(base);
      out_.offsets[coordAt + static_cast<std::size_t>(e)] = static_cast<std::uint32_t>(iterShape.empty() ? 0 : idx[d]);
      advanceRowMajor(idx, iterShape);
    }
    scratch_->ins.clear();
    scratch_->ins.push_back(operandOwnShape(call.arg("self"), "self"));
    scratch_->ins.push_back(operandOwnShape(call.arg("index"), "index"));
    Step k{};
    k.mapA = baseAt;
    k.mapB = coordAt;
    k.mapCount = static_cast<std::uint32_t>(n);
    k.dimSize = dimSize;
    k.dimStride = dimStride;
    if (kind == OpKind::IndexSelect) {
      k.compute = Compute::IndexSelect;
      return finishSingle(call, k, iterShape);
    }
    const CValue& source = call.arg("source");
    if (shapeOf(source) != iterShape) fail("index_copy/index_add: source shape mismatch");
    scratch_->ins.push_back(operandOf(source, iterShape));
    k.compute = Compute::IndexCopyAdd;
    k.flag = kind == OpKind::IndexAdd;
    k.a = k.flag && call.has("alpha") ? asScalar(call.arg("alpha")) : 1;
    return finishSingle(call, k, S);
  }

  CValue compileScatter(const Call& call) {
    const Layout& self = tensorArg(call.arg("self"), "self");
    const Shape& S = self.sizes;
    const std::size_t d = static_cast<std::size_t>(normDim(asInt(call.arg("dim"), "dim"), S.size()));
    const Layout& index = tensorArg(call.arg("index"), "index");
    const Shape& X = index.sizes;
    if (X.size() != S.size() && !(X.empty() && S.empty())) fail("scatter: index rank differs from self's");
    const CValue& src = call.has("src") ? call.arg("src") : call.arg("value");
    const Shape srcShape = shapeOf(src);
    for (std::size_t j = 0; j < X.size(); ++j) {
      if (j != d && X[j] > S[j]) fail("scatter: index larger than self");
      if (src.isTensor() && (srcShape.size() != X.size() || X[j] > srcShape[j])) fail("scatter: index larger than src");
    }
    Shape cs = contiguousStrides(S);
    Shape srcStrides = contiguousStrides(srcShape);
    const std::int64_t dimSize = S.empty() ? 1 : S[d], dimStride = S.empty() ? 1 : cs[d];
    std::int64_t n = numelOf(X);
    if (dimSize == 0 && n > 0) fail("scatter: the dimension has size 0");
    charge(static_cast<std::size_t>(2 * n));
    const std::uint32_t baseAt = newTable(static_cast<std::size_t>(n));
    const std::uint32_t srcAt = newTable(static_cast<std::size_t>(n));
    Shape idx(X.size(), 0);
    for (std::int64_t e = 0; e < n; ++e) {
      std::int64_t base = 0, sp = 0;
      for (std::size_t j = 0; j < X.size(); ++j) {
        if (j != d) base += idx[j] * cs[j];
        if (src.isTensor()) sp += idx[j] * srcStrides[j];
      }
      out_.offsets[baseAt + static_cast<std::size_t>(e)] = static_cast<std::uint32_t>(base);
      out_.offsets[srcAt + static_cast<std::size_t>(e)] = static_cast<std::uint32_t>(sp);
      advanceRowMajor(idx, X);
    }
    scratch_->ins.clear();
    scratch_->ins.push_back(operandOwnShape(call.arg("self"), "self"));
    scratch_->ins.push_back(operandOwnShape(call.arg("index"), "index"));
    const bool isConst = !src.isTensor();
    if (isConst) {
      Operand c{};
      c.isConstant = true;
      c.constant = asScalar(src);
      c.count = 1;
      scratch_->ins.push_back(c);
    } else {
      scratch_->ins.push_back(operandOwnShape(src, "src"));
    }
    Step k{};
    k.compute = Compute::Scatter;
    k.mapA = baseAt;
    k.mapB = srcAt;
    k.mapCount = static_cast<std::uint32_t>(n);
    k.dimSize = dimSize;
    k.dimStride = dimStride;
    k.flag = call.info.kind == OpKind::ScatterAdd;
    k.flag2 = isConst;
    return finishSingle(call, k, S);
  }

  // slice_scatter, select_scatter, cat, stack: the output assembled from pieces placed at
  // static positions.
  CValue compileAssemble(const Call& call) {
    const OpKind kind = call.info.kind;
    Shape shape;
    std::vector<const CValue*> pieces;
    std::vector<Layout> placements;  // where each piece goes, as a layout over a contiguous output
    bool startFromSelf = false;
    if (kind == OpKind::SliceScatter || kind == OpKind::SelectScatter) {
      const Layout& self = tensorArg(call.arg("self"), "self");
      shape = self.sizes;
      startFromSelf = true;
      Layout out;
      out.sizes = shape;
      out.strides = contiguousStrides(shape);
      // Reuse the view rules on a contiguous layout of the output.
      Call viewCall = call;
      viewCall.info.kind = kind == OpKind::SliceScatter ? OpKind::Slice : OpKind::Select;
      CValue outValue;
      outValue.kind = CValue::Kind::Tensor;
      outValue.t = out;
      std::size_t selfAt = *call.info.schema->argumentIndex("self");
      viewCall.args[selfAt] = &outValue;
      bool needsCopy = false;
      Layout place = viewLayout(viewCall, needsCopy);
      const CValue& src = call.arg("src");
      if (shapeOf(src) != place.sizes) fail(call.node.target + ": src shape differs from the slice");
      pieces.push_back(&src);
      placements.push_back(place);
    } else {
      const CValue& tensors = call.arg("tensors");
      if (tensors.kind != CValue::Kind::List || tensors.itemsCount == 0) fail("cat/stack: empty tensor list");
      std::vector<const CValue*> list;  // into lists_: read before finishSingle (see compileAdvancedIndex)
      for (const CValue& t : itemsOf(tensors)) {
        tensorArg(t, "tensors");
        // cat skips legacy empty 1-d tensors.
        if (kind == OpKind::Cat && t.t.sizes.size() == 1 && t.t.sizes[0] == 0 && tensors.itemsCount > 1) continue;
        list.push_back(&t);
      }
      if (list.empty()) list.push_back(&itemsOf(tensors)[0]);
      const Shape& first = list[0]->t.sizes;
      if (kind == OpKind::Stack) {
        std::size_t d = static_cast<std::size_t>(normDim(asInt(call.arg("dim"), "dim"), first.size() + 1));
        shape = first;
        shape.insert(shape.begin() + static_cast<std::ptrdiff_t>(d), static_cast<std::int64_t>(list.size()));
        Shape strides = contiguousStrides(shape);
        for (std::size_t i = 0; i < list.size(); ++i) {
          if (list[i]->t.sizes != first) fail("stack: shapes differ");
          Layout place;
          place.offset = static_cast<std::int64_t>(i) * strides[d];
          place.sizes = first;
          place.strides = strides;
          place.strides.erase(place.strides.begin() + static_cast<std::ptrdiff_t>(d));
          pieces.push_back(list[i]);
          placements.push_back(place);
        }
      } else {
        std::size_t d = static_cast<std::size_t>(normDim(asInt(call.arg("dim"), "dim"), first.size()));
        if (first.empty()) fail("cat of 0-d tensors");
        shape = first;
        shape[d] = 0;
        for (const CValue* t : list) {
          if (t->t.sizes.size() != first.size()) fail("cat: ranks differ");
          for (std::size_t j = 0; j < first.size(); ++j)
            if (j != d && t->t.sizes[j] != first[j]) fail("cat: shapes differ");
          shape[d] += t->t.sizes[d];
        }
        Shape strides = contiguousStrides(shape);
        std::int64_t at = 0;
        for (const CValue* t : list) {
          Layout place;
          place.offset = at * strides[d];
          place.sizes = t->t.sizes;
          place.strides = strides;
          pieces.push_back(t);
          placements.push_back(place);
          at += t->t.sizes[d];
        }
      }
    }
    // Piece positions relative to the output, as position lists in the offset pool.
    Step k{};
    k.compute = Compute::Assemble;
    k.flag = startFromSelf;
    std::vector<Span> maps;
    maps.reserve(placements.size());
    for (const Layout& place : placements) maps.push_back(relativeOffsets(place, numelOf(shape)));
    k.listAt = static_cast<std::uint32_t>(out_.spans.size());
    k.listCount = static_cast<std::uint32_t>(maps.size());
    out_.spans.insert(out_.spans.end(), maps.begin(), maps.end());
    scratch_->ins.clear();
    if (startFromSelf) scratch_->ins.push_back(operandOwnShape(call.arg("self"), "self"));
    for (const CValue* p : pieces) scratch_->ins.push_back(operandOwnShape(*p, "piece"));
    return finishSingle(call, k, shape);
  }

  // Positions of a layout over a contiguous buffer of `total` elements (not arena offsets),
  // listed in the offset pool.
  Span relativeOffsets(const Layout& l, std::int64_t total) {
    std::int64_t n = numelOf(l.sizes);
    charge(static_cast<std::size_t>(n));
    Span span{};
    span.listed = true;
    span.count = static_cast<std::uint32_t>(n);
    span.at = newTable(static_cast<std::size_t>(n));
    Shape idx(l.sizes.size(), 0);
    for (std::int64_t e = 0; e < n; ++e) {
      std::int64_t pos = l.offset;
      for (std::size_t d = 0; d < idx.size(); ++d) pos += idx[d] * l.strides[d];
      if (pos < 0 || pos >= total) fail("internal: piece outside the output");
      out_.offsets[span.at + static_cast<std::size_t>(e)] = static_cast<std::uint32_t>(pos);
      advanceRowMajor(idx, l.sizes);
    }
    return span;
  }

  CValue compileForeach(const Call& call) {
    const OpKind kind = call.info.kind;
    const CValue& self = call.arg("self");
    if (self.kind != CValue::Kind::List) fail("foreach: self must be a list");
    const bool hasList = call.has("other");
    const CValue* other = hasList ? &call.arg("other") : &call.arg("scalar");
    if (hasList && (other->kind != CValue::Kind::List || other->itemsCount != self.itemsCount))
      fail("foreach: list lengths differ");
    const CValue* alphaArg = call.find("alpha");
    const std::uint64_t alpha = alphaArg ? asScalar(*alphaArg) : 1;
    const bool writes = call.info.inplace;
    std::vector<CValue> results;  // made a list at the end: the loop reads lists
    for (std::size_t j = 0; j < self.itemsCount; ++j) {
      const CValue& item = itemsOf(self)[j];
      const CValue& otherItem = hasList ? itemsOf(*other)[j] : *other;
      const Layout& a = tensorArg(item, "self");
      Shape shape = writes ? a.sizes : broadcastShapes(a.sizes, shapeOf(otherItem));
      scratch_->ins.clear();
      scratch_->ins.push_back(operandOf(item, shape));
      scratch_->ins.push_back(operandOf(otherItem, shape));
      Span dest{};
      if (writes && !valueModel_) dest = spanOf(a);
      else {
        CValue v;
        v.kind = CValue::Kind::Tensor;
        fresh(shape, v.t);
        dest = spanOf(v.t);
        // `-> ()` under F: each element's new version replaces the list element's node.
        if (writes) rebind(call, *call.info.schema->argumentIndex("self"), j, true, v);
        else results.push_back(v);
      }
      Step k{};
      k.compute = kind == OpKind::ForeachAdd ? Compute::Add : kind == OpKind::ForeachSub ? Compute::Sub : Compute::Mul;
      k.a = alpha;
      emitKernel(k, dest, dest.count);
    }
    if (writes) return {};
    return makeList(results);
  }

  // --- the end: observations and end-of-run writes ---

  void compileEnd() {
    const Signature& sig = program_->signature;
    // Here, not in begin(): a fork's copies of these (empty) lists have no room.
    out_.outputs.reserve(analysis_->visibleOutputs.size());
    out_.endWrites.reserve(sig.outputs.size());
    // Placeholders: their whole storage. declaredValues_ holds them in graph order, as
    // out_.placeholders (compilePlaceholder appends to both).
    for (std::size_t p = 0; p < out_.placeholders.size(); ++p) {
      // sourceOf() of its whole storage, a contiguous range, made directly.
      const std::uint32_t storage = declaredValues_[p].t.storage;
      const std::int64_t n = sizeOf(storage);
      charge(static_cast<std::size_t>(n));
      Span whole{};
      if (n != 0) {
        whole.at = static_cast<std::uint32_t>(baseOf(storage));
        whole.count = static_cast<std::uint32_t>(n);
      }
      Source source{};
      source.kind = Source::Kind::Offsets;
      source.spansAt = static_cast<std::uint32_t>(out_.spans.size());
      source.spansCount = 1;
      out_.spans.push_back(whole);
      out_.placeholders[p].second = source;
    }
    std::span<const ArgRef> returned = analysis_->returned();
    CValue scratch;
    for (std::size_t pos : analysis_->visibleOutputs) {
      const CValue& v = resolveRef(returned[pos], scratch);
      ElementProgram::Output& o = out_.outputs.emplace_back();  // made in place (no move of the name)
      if (returned[pos].arg->isRef()) o.node = returned[pos].arg->text;
      o.reference = sourceOf(v);
      if (pos < sig.outputs.size() && sig.outputs[pos].kind == OutputKind::UserInputMutation)
        if (std::optional<std::size_t> target = analysis_->mutatedPlaceholder[pos])
          o.placed = std::exchange(o.reference, sourceOf(declared(*target)));
    }
    for (std::size_t pos = 0; pos < sig.outputs.size() && pos < returned.size(); ++pos) {
      const OutputSpec& spec = sig.outputs[pos];
      if (!isMutation(spec.kind) || options_.placedProgram) continue;
      std::optional<std::size_t> target = analysis_->mutatedPlaceholder[pos];
      if (!target) fail("mutation output " + spec.name + " has no target placeholder");
      const CValue& v = resolveRef(returned[pos], scratch);
      const Layout& t = declared(*target).t;
      if (!v.isTensor()) fail("mutation value of " + spec.target + " is not a tensor");
      EndWrite w{};
      w.target = spanOf(t);
      w.value = spanOf(expandTo(v.t, t.sizes));
      out_.endWrites.push_back(std::move(w));
    }
  }
};

}  // namespace

bool dependsOnViewMode(const ElementProgram& exe) { return exe.dependsOnViewMode; }
std::size_t replayedNodes(const ElementProgram& exe) { return exe.replayedNodes; }

Result<std::shared_ptr<const ElementProgram>> compileElement(const Analysis& analysis, const ExecOptions& options) {
  return ElementCompiler(analysis, options).compile();
}

ElementPrograms compileElementShared(const Analysis& analysis, const ExecOptions& options, bool value,
                                     const Analysis* placed, std::size_t placedFrom) {
  ExecOptions copyViews = options;
  copyViews.viewMode = ViewMode::CopyViews;
  copyViews.valueSemantics = false;
  copyViews.placedProgram = false;
  auto [copy, alias, valueModel, placedCopy, placedAlias] =
      ElementCompiler(analysis, copyViews).compileShared(value, placed, placedFrom);
  return {std::move(copy), std::move(alias), std::move(valueModel), std::move(placedCopy), std::move(placedAlias)};
}

namespace {

bool sameInputs(InputSet a, InputSet b) { return a.seed == b.seed && a.index == b.index; }

// The kept run state of `program` before step `step` for `inputs`, if any.
const ForkState* findForkState(const RunScratch& scratch, const ElementProgram* program, std::uint32_t step,
                               InputSet inputs) {
  for (const ForkState& f : scratch.forkStates)
    if (f.program.get() == program && f.step == step && sameInputs(f.inputs, inputs)) return &f;
  return nullptr;
}

// Keeps the run state before step `at.step` of `program` (see ElementProgram::forkPoints): in
// the entry already kept for that program and step, else in a new one up to kMaxForkStates,
// else in the oldest. A state that is replaced only makes a later run start from the
// beginning: it is a saving, never what a result depends on.
void keepForkState(RunState& st, const std::shared_ptr<const ElementProgram>& program,
                   const ElementProgram::ForkPoint& at, InputSet inputs) {
  std::vector<ForkState>& kept = st.forkStates;
  ForkState* into = nullptr;
  for (ForkState& f : kept)
    if (f.program == program && f.step == at.step) into = &f;
  for (ForkState& f : kept)  // one released by releaseForkStates()
    if (!into && !f.program) into = &f;
  if (!into) {
    if (kept.size() < RunScratch::kMaxForkStates) into = &kept.emplace_back();
    else into = &kept[st.nextForkState++ % kept.size()];
  }
  into->program = program;
  into->step = at.step;
  into->inputs = inputs;
  into->arena.assign(st.arena.begin(), st.arena.begin() + static_cast<std::ptrdiff_t>(at.arena));
  into->opaque.assign(st.opaque.begin(), st.opaque.begin() + static_cast<std::ptrdiff_t>(at.opaque));
}

// Runs once and fills out[k] with the observations after ending endings[k]; with
// `nodeHashes`, records every node's result hash too. Without, a forked program's run starts
// from the state its parent's run kept at the fork, if there is one for these inputs, and
// this run keeps its own state at its fork points.
void runObserved(const std::shared_ptr<const ElementProgram>& program, std::span<const Semantics> endings,
                 InputSet inputs, RunScratch& scratch, std::span<Observations> out,
                 std::vector<std::uint64_t>* nodeHashes) {
  const ElementProgram& exe = *program;
  RunState st;
  static_cast<RunScratch&>(st) = std::move(scratch);  // borrowed: handed back below
  st.seed = inputs.seed;
  st.inputSet = inputs.index;
  if (nodeHashes) nodeHashes->assign(exe.nodeStepEnd.size(), 0);
  std::size_t s = 0;
  const ForkState* from =
      !nodeHashes && exe.forkedFrom ? findForkState(st, exe.forkedFrom.get(), exe.forkedAt.step, inputs) : nullptr;
  // The arena and the opaque slots start as zeros, or as the fork state up to the fork point
  // and zeros after it (the state's part is not zeroed first).
  const std::size_t arenaKept = from ? from->arena.size() : 0, opaqueKept = from ? from->opaque.size() : 0;
  st.arena.resize(exe.arenaSize);
  st.opaque.resize(exe.opaqueSlots);
  if (from) {
    std::copy(from->arena.begin(), from->arena.end(), st.arena.begin());
    std::copy(from->opaque.begin(), from->opaque.end(), st.opaque.begin());
    s = exe.forkedAt.step;
    ++st.runsFromForkStates;
  }
  std::fill(st.arena.begin() + static_cast<std::ptrdiff_t>(arenaKept), st.arena.end(), 0);
  std::fill(st.opaque.begin() + static_cast<std::ptrdiff_t>(opaqueKept), st.opaque.end(), 0);
  const std::vector<ElementProgram::ForkPoint>& forkPoints = exe.forkPoints;
  std::size_t fork = 0;  // the next of forkPoints
  while (fork < forkPoints.size() && forkPoints[fork].step < s) ++fork;
  if (nodeHashes) {  // node by node; no fork states kept (see above: runElement's scratch is its own)
    for (std::size_t n = 0; n < exe.nodeStepEnd.size(); ++n) {
      for (; s < exe.nodeStepEnd[n]; ++s) runStep(exe, exe.steps[s], st);
      if (n < exe.nodeResults.size()) (*nodeHashes)[n] = readSourceHash(exe, st, exe.nodeResults[n]);
    }
  } else {
    // The steps in runs between fork points (most runs: one run, no per-node or per-step test).
    // Every step belongs to a node (nodeStepEnd is ascending; its last entry is the end).
    const std::size_t end = exe.nodeStepEnd.empty() ? 0 : exe.nodeStepEnd.back();
    for (;;) {
      for (; fork < forkPoints.size() && forkPoints[fork].step == s; ++fork)
        keepForkState(st, program, forkPoints[fork], inputs);
      if (s >= end) break;
      const std::size_t stop = fork < forkPoints.size() ? std::min<std::size_t>(forkPoints[fork].step, end) : end;
      for (; s < stop; ++s) runStep(exe, exe.steps[s], st);
    }
    for (; fork < forkPoints.size(); ++fork) keepForkState(st, program, forkPoints[fork], inputs);  // at the end
  }
  if (endings.size() > 1) st.snapshot.assign(st.arena.begin(), st.arena.end());
  std::vector<Buffer>& values = st.endValues;
  for (std::size_t k = 0; k < endings.size(); ++k) {
    if (k > 0) st.arena.assign(st.snapshot.begin(), st.snapshot.end());
    const Semantics sem = endings[k];
    if (sem == Semantics::Par || sem == Semantics::Value) {
      if (values.size() < exe.endWrites.size()) values.resize(exe.endWrites.size());
      for (std::size_t i = 0; i < exe.endWrites.size(); ++i) gather(exe, st, exe.endWrites[i].value, values[i]);
      for (std::size_t i = 0; i < exe.endWrites.size(); ++i) scatter(exe, st, exe.endWrites[i].target, values[i].data());
    } else if (sem == Semantics::Seq) {
      for (const EndWrite& w : exe.endWrites) {
        gather(exe, st, w.value, st.out);
        scatter(exe, st, w.target, st.out.data());
      }
    }
    Observations& r = out[k];
    r.clear();
    for (const auto& placeholder : exe.placeholders) readSource(exe, st, placeholder.second, r);
    r.placeholders = exe.placeholders.size();
    for (const ElementProgram::Output& o : exe.outputs)
      readSource(exe, st, sem == Semantics::Placed && o.placed ? *o.placed : o.reference, r);
  }
  scratch = std::move(static_cast<RunScratch&>(st));
}

}  // namespace

void observeElement(const std::shared_ptr<const ElementProgram>& exe, std::span<const Semantics> endings,
                    InputSet inputs, RunScratch& scratch, std::span<Observations> out) {
  runObserved(exe, endings, inputs, scratch, out, nullptr);
}

std::string observationLabel(const ElementProgram& exe, bool isOutput, std::size_t i) {
  if (!isOutput) return exe.placeholders[i].first;
  std::string label = "output " + std::to_string(i);
  if (const std::optional<std::string>& node = exe.outputs[i].node) label += " (%" + *node + ")";
  return label;
}

std::vector<RunResult> runElement(const std::shared_ptr<const ElementProgram>& program,
                                  std::span<const Semantics> endings, InputSet inputs, bool recordNodeHashes) {
  const ElementProgram& exe = *program;
  RunScratch scratch;
  std::vector<Observations> observed(endings.size());
  std::vector<std::uint64_t> nodeHashes;
  runObserved(program, endings, inputs, scratch, observed, recordNodeHashes ? &nodeHashes : nullptr);
  std::vector<RunResult> results;
  results.reserve(endings.size());
  for (const Observations& o : observed) {
    RunResult r;
    r.tier = Tier::Element;
    for (const bool isOutput : {false, true}) {
      std::vector<Observation>& into = isOutput ? r.outputs : r.placeholders;
      into.reserve(o.count(isOutput));
      for (std::size_t i = 0; i < o.count(isOutput); ++i) {
        const std::span<const std::uint64_t> v = o.of(isOutput, i);
        into.push_back({observationLabel(exe, isOutput, i), {v.begin(), v.end()}});
      }
    }
    r.nodeHashes = nodeHashes;
    results.push_back(std::move(r));
  }
  return results;
}

}  // namespace wb::oracle::detail
