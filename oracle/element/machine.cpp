// oracle/element/machine.cpp: the element tier's run-time machine: runs a compiled
// ElementProgram (program.h) step by step over one arena of 64-bit elements, applies the
// endings (S_par's parallel end writes, S_seq's sequential ones, none for a placed program)
// and reads the observations. A run of a program forked from another may start from the state
// the other's run kept at the fork (RunScratch::forkStates).
#include <algorithm>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "oracle/element/program.h"
#include "oracle/ops.h"

namespace wb::oracle::detail {

namespace {

using Buffer = std::vector<std::uint64_t>;

// A run's state: its buffers (borrowed from the caller's RunScratch for the run, so a warm
// run allocates nothing) and its inputs.
struct RunState : RunScratch {
  std::uint64_t seed = 0;
  int inputSet = 0;
  // Explicit input contents (InputValues), by the name hash FillSeed steps carry; null when
  // every input comes from the seed.
  const std::vector<std::pair<std::uint64_t, const std::vector<std::uint64_t>*>>* explicitInputs = nullptr;
};

// The explicit contents of the input `nameHash` fills, or null.
const std::vector<std::uint64_t>* explicitInput(const RunState& st, std::uint64_t nameHash) {
  if (!st.explicitInputs) return nullptr;
  for (const auto& [hash, values] : *st.explicitInputs)
    if (hash == nameHash) return values;
  return nullptr;
}

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
      std::uint64_t h = traceHashStart(sourceCount(p, s));
      for (std::uint32_t k = 0; k < s.spansCount; ++k)
        forEachOffset(p, p.spans[s.spansAt + k], [&](std::uint32_t, std::uint32_t o) { h = combine(h, st.arena[o]); });
      return h;
    }
  }
  return 0;
}

// The number of values readSource appends for `s`.
std::size_t sourceValues(const ElementProgram& p, const Source& s) {
  return s.kind == Source::Kind::Offsets ? sourceCount(p, s) : 1;
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
  // other one writes all outSize elements, so a fill per kernel per run would be wasted.
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
      if (const std::vector<std::uint64_t>* given = explicitInput(st, s.a)) {
        forEachOffset(p, s.dest, [&](std::uint32_t i, std::uint32_t o) { arena[o] = i < given->size() ? (*given)[i] : combine(h, i); });
        break;
      }
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
  std::vector<std::pair<std::uint64_t, const std::vector<std::uint64_t>*>> explicitInputs;
  if (inputs.values) {
    for (const auto& [name, values] : inputs.values->byName) explicitInputs.emplace_back(hashText(name), &values);
    st.explicitInputs = &explicitInputs;
  }
  if (nodeHashes) nodeHashes->assign(exe.nodeStepEnd.size(), 0);
  std::size_t s = 0;
  // Fork states are of seeded inputs only (an InputValues is compared by address, which a
  // later one may reuse).
  const bool forkStates = !nodeHashes && !inputs.values;
  const ForkState* from =
      forkStates && exe.forkedFrom ? findForkState(st, exe.forkedFrom.get(), exe.forkedAt.step, inputs) : nullptr;
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
        if (forkStates) keepForkState(st, program, forkPoints[fork], inputs);
      if (s >= end) break;
      const std::size_t stop = fork < forkPoints.size() ? std::min<std::size_t>(forkPoints[fork].step, end) : end;
      for (; s < stop; ++s) runStep(exe, exe.steps[s], st);
    }
    for (; fork < forkPoints.size(); ++fork)  // at the end
      if (forkStates) keepForkState(st, program, forkPoints[fork], inputs);
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
    // Sized once: the buffers are kept from run to run, and growing them value by value was a
    // tenth of a check's allocations.
    std::size_t size = 0;
    for (const auto& placeholder : exe.placeholders) size += sourceValues(exe, placeholder.second);
    for (const ElementProgram::Output& o : exe.outputs)
      size += sourceValues(exe, sem == Semantics::Placed && o.placed ? *o.placed : o.reference);
    r.values.reserve(size);
    r.ends.reserve(exe.placeholders.size() + exe.outputs.size());
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


bool dependsOnViewMode(const ElementProgram& exe) { return exe.dependsOnViewMode; }

}  // namespace wb::oracle::detail
