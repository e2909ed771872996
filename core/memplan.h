// core/memplan.h: a model of ExecuTorch's memory planning of a placed program (DESIGN §8).
//
// Owns the measure of what a write-back placement saves (executorch-semantics §5.4): it
// rebuilds the TensorSpecs ExecuTorch would have after the passes that follow the write-back
// (ReplaceViewCopyWithViewPass, ToOutVarPass, in-place aliasing, `_share_alloc_with_arg_idx`),
// computes their lifetimes as `update_all_tensors_lifetime` does (§6.3), selects the planned
// specs as `collect_specs_from_nodes` does (§6.4) and runs the greedy algorithm exactly (§6.6).
// Two measures result: peak live bytes (monotone in lifetimes, so early <= end always) and the
// greedy arena size (not monotone). The SVG lifetime chart lives in core/memplan_svg.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/ir.h"
#include "core/schema.h"

namespace wb {

// ---------------------------------------------------------------------------------------------
// The allocator on its own: specs reduced to (bytes, lifetime, inplace base). Exposed so that
// tests and proofs can reason about greedy without building a program.

struct LifetimeSpec {
  std::int64_t allocatedBytes = 0;  // already aligned
  int start = 0;                    // inclusive node indices
  int end = 0;
  // `_share_alloc_with_arg_idx`: index (into the same vector) of the spec this one is placed at
  // (TensorSpec.inplace_base). Such a spec gets no storage of its own.
  std::optional<std::size_t> inplaceBase;
};

// Two inclusive intervals share an index (ExecuTorch's Verifier.has_overlap).
bool lifetimesOverlap(int startA, int endA, int startB, int endB);

struct SharedObjectLayout {
  int index = 0;              // creation order (SharedObject.idx)
  std::int64_t offset = 0;    // in the arena, after materialisation
  std::int64_t size = 0;
  int firstUsedIndex = 0;
  int lastUsedIndex = 0;
};

struct GreedySlot {
  int sharedObject = -1;           // -1: not placed (an inplace spec whose base never was)
  std::int64_t offsetInObject = 0;
  std::int64_t memOffset = 0;      // sharedObject offset + offsetInObject: the byte offset
};

struct GreedyLayout {
  std::vector<GreedySlot> slots;   // one per input spec, same order
  std::vector<SharedObjectLayout> objects;
  std::int64_t arenaBytes = 0;     // bufsizes[1]: the sum of the shared objects' sizes
  // Inplace specs left unplaced because their base chain never got placed (ExecuTorch raises
  // InternalError here; the model reports and continues).
  std::vector<std::size_t> unresolvedInplace;
};

// ExecuTorch's greedy (executorch-semantics §6.6), for one mem_id. `specs` is in collection
// order, which decides ties: equal sizes are visited in reverse collection order.
GreedyLayout greedyLayout(const std::vector<LifetimeSpec>& specs);

// Sum of allocated bytes of the allocations live at each node index 0..maxIndex. A spec with
// an inplace base is part of its base's allocation: the allocation is live where any of its
// members is, and is as large as its largest member.
std::vector<std::int64_t> liveBytesByIndex(const std::vector<LifetimeSpec>& specs, int maxIndex);

// ---------------------------------------------------------------------------------------------
// The planner model on a placed program.

struct PlanOptions {
  int alignment = 16;  // MemoryPlanningPass default; allocated = ceil(nbytes / alignment) * alignment
  // Which `*_copy` ops ReplaceViewCopyWithViewPass turns into `memory.view` (when none of their
  // users is the output node). ExecuTorch's `_is_view_copy` matches `view_copy` only (a
  // `_ViewSpec` must have its base's nbytes); `AllCopyViews` treats every `*_copy` view
  // variant so, as the alias analysis does (DESIGN §5); `None` models remove_view_copy=False.
  enum class ViewCopies { ViewCopyOnly, AllCopyViews, None };
  ViewCopies viewCopies = ViewCopies::ViewCopyOnly;
  // `update_all_tensors_lifetime` runs `collect_specs_from_nodes` over [node, *args], and that
  // skips every in-place node, arguments included: a later `add(y)` of `y = index_put_(t, ...)`
  // does not extend t's lifetime (the output node still does: its own spec tuple holds t's
  // spec). false reproduces that (and reports such late uses in `notes`); true counts them.
  bool inplaceArgumentsExtendLifetime = false;
};

// How a node came to share a spec it did not create.
enum class AliasKind {
  View,        // a view_copy replaced by memory.view (or a schema view `Tensor(a)`)
  InPlace,     // an in-place op (or out variant) whose result is its mutated argument
  GetItem,     // operator.getitem: the element spec of its producer
};
std::string_view toString(AliasKind kind);  // "view", "inplace", "getitem"

struct SpecAlias {
  std::string node;
  AliasKind kind = AliasKind::View;
};

// One planned TensorSpec (one allocation unless it has an inplace base).
struct PlannedTensor {
  std::string node;          // the node that created the spec
  int element = -1;          // element index of a multi-output producer; -1 for a single result
  std::string type;          // "f32[4, 4]"
  std::int64_t nbytes = 0;
  std::int64_t allocatedBytes = 0;  // aligned
  int start = 0;             // lifetime, inclusive node indices (§6.3)
  int end = 0;
  bool mutableBuffer = false;   // a BUFFER placeholder some BUFFER_MUTATION targets: [0, max]
  bool graphInput = false;      // any other placeholder (alloc_graph_input=True plans it)
  bool graphOutput = false;     // returned by the output node (alloc_graph_output=True)
  bool writeBackValue = false;  // read by a write-back copy_: the lifetime early placement cuts
  std::vector<SpecAlias> aliases;  // nodes sharing this spec, in graph order
  // `_share_alloc_with_arg_idx`: index into MemoryPlan::tensors of the spec this one is placed
  // at (TensorSpec.inplace_base); it shares that spec's bytes but keeps its own lifetime.
  std::optional<std::size_t> inplaceBase;
  // Greedy's placement.
  int sharedObject = -1;
  std::int64_t offsetInObject = 0;
  std::int64_t memOffset = 0;
};

// A write-back copy_ of the placed program (its name is a mutation output's name).
struct WriteBackCopy {
  std::string copyNode;
  int index = 0;        // node index of the copy
  std::string buffer;   // args[0]
  std::string value;    // args[1]
};

// A node whose tensors could not be planned: no static type, symbolic shape, unknown dtype.
// Reported, never guessed; its specs are left out of both measures.
struct UnplannedNode {
  std::string node;
  std::string reason;
};

// Two planned tensors that share bytes while both are live: the `_resolve_inplace_specs` hazard
// (executorch-semantics §6.6). Pairs of an inplace spec and its own base chain are exempt, as in
// ExecuTorch's Verifier.
struct StorageOverlap {
  std::size_t first = 0;   // indices into MemoryPlan::tensors
  std::size_t second = 0;
  std::string text;        // "%y [4, 12] and %c [7, 9] share bytes 0..63 of shared object 0"
};

struct MemoryPlan {
  std::vector<std::string> nodeNames;     // index -> node name (the time axis)
  int maxIndex = 0;                       // index of the output node
  std::vector<PlannedTensor> tensors;     // planned specs in collection order (§6.4)
  std::vector<WriteBackCopy> writeBacks;  // in graph order
  std::vector<UnplannedNode> unplanned;
  std::size_t constantSpecs = 0;          // const specs (parameters, constants, unmutated buffers)

  std::vector<std::int64_t> liveBytes;    // per node index
  std::int64_t peakLiveBytes = 0;
  int peakIndex = 0;                      // first index where the peak is reached

  std::vector<SharedObjectLayout> sharedObjects;
  std::int64_t arenaBytes = 0;            // greedy total of mem_id 1
  std::vector<StorageOverlap> overlaps;
  std::vector<std::string> notes;         // anything else the model had to decide, in words
};

// Models ExecuTorch's planning of `placed` (a valid program whose write-backs are already
// `aten::copy_` nodes). `schemas` are looked up for every call_function target; schema-less
// targets produce fresh specs for their results.
MemoryPlan planMemory(const Program& placed, const SchemaTable& schemas, const PlanOptions& options = {});

// Bytes of the `aten::clone` nodes `placed` has and `original` has not (the clones `early`
// inserts to break a cycle of copies), aligned as planned. Peak live bytes are monotone in
// lifetimes, so early's peak never exceeds end's by more than this: a clone is an allocation
// end does not make (and end is wrong on such programs: S_seq != S_par).
std::int64_t insertedCloneBytes(const Program& original, const Program& placed, const PlanOptions& options = {});

// The two placements side by side: what `wbcheck plan` reports.
struct PlanComparison {
  std::int64_t peakSavedBytes = 0;    // end.peakLiveBytes - early.peakLiveBytes (>= 0)
  double peakSavedPercent = 0.0;      // of end's peak; 0 when end's peak is 0
  std::int64_t arenaSavedBytes = 0;   // end.arenaBytes - early.arenaBytes (may be negative)
  double arenaSavedPercent = 0.0;
};
PlanComparison comparePlans(const MemoryPlan& end, const MemoryPlan& early);

// An SVG chart of both plans' lifetimes: node index across, one bar per planned tensor, `end`
// above `early`, write-back copies marked, a legend and a title with both measures and the
// saving. Standalone SVG 1.1 text.
std::string renderLifetimeChartSvg(const MemoryPlan& end, const MemoryPlan& early);
// One plan alone (e.g. for a program that has no write-backs to compare).
std::string renderLifetimeChartSvg(const MemoryPlan& plan, std::string_view title);

}  // namespace wb
