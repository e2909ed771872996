// oracle/element/program.h: a compiled element-tier program (internal to oracle/).
//
// What compiling makes and running reads: every storage of the program is a fixed range of one
// arena, every read or write a precomputed run of arena offsets (a Span), and the program a
// sequence of steps, plain records in one vector, interpreted by one switch (machine.cpp).
// The steps point into a few pools of the program (offsets, spans, operands, ints).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "oracle/ops.h"

namespace wb::oracle::detail {

// The records a program is made of (Span, Operand, Source, EndWrite, Step) are trivial types:
// no default member initialisers, so that the pools holding them are copied (forks, replay())
// with one memmove rather than element by element. Every one is made value-initialised
// (`Step k{}`: all fields zero, which is what each field's default is).

// A run of arena elements, in order: arena[at + i] when contiguous (most layouts: every fresh
// tensor), else arena[offsets[at + i]] (the program's offset pool). Contiguous runs are never
// materialised as offset lists.
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

struct ElementProgram {
  bool valueModel = false;
  bool dependsOnViewMode = false;  // some `*_copy` view variant was compiled
  bool forked = false;              // made by a fork (ElementCompiler::forkAt), not a plain compile
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
    // made here, it would be an allocation per output in every compile and every fork.
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

}  // namespace wb::oracle::detail
