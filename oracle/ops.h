// oracle/ops.h: what the two interpreter tiers share (internal to oracle/).
//
// The hash used for every uninterpreted value, the classification of a node's target into the
// op kinds the interpreters know, argument binding against a schema (defaults filled in), and
// the compiled-program record behind oracle::Executable.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/ir.h"
#include "core/schema.h"
#include "oracle/oracle.h"

namespace wb::oracle::detail {

// ---------------------------------------------------------------------------------------------
// Hashing: splitmix64's finaliser and a boost-style combine. Deterministic across platforms.

constexpr std::uint64_t mix64(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}
constexpr std::uint64_t combine(std::uint64_t h, std::uint64_t v) {
  return mix64(h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2)));
}
constexpr std::uint64_t hashText(std::string_view text) {
  std::uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a, then mixed
  for (char c : text) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
  return mix64(h);
}
// The part of inputElement() that does not depend on the element: a fill computes it once.
constexpr std::uint64_t inputElementPrefix(std::uint64_t seed, int inputSet, std::uint64_t nameHash) {
  return combine(combine(mix64(seed), static_cast<std::uint64_t>(inputSet)), nameHash);
}
// The initial contents of element `i` of placeholder (or get_attr constant) `nameHash`.
constexpr std::uint64_t inputElement(std::uint64_t seed, int inputSet, std::uint64_t nameHash, std::uint64_t i) {
  return combine(inputElementPrefix(seed, inputSet, nameHash), i);
}

// The hash of a node's result in a traced run (RunResult::nodeHashes) in the element tier: its
// elements folded in row-major order after a start that depends on their count. check() folds
// a placeholder's final observation the same way, to compare a copy_ of it with S_par's end.
constexpr std::uint64_t traceHashStart(std::uint64_t count) { return 0x51ed270b27a5d1c3ULL ^ count; }

// ---------------------------------------------------------------------------------------------
// Op classification.

enum class OpKind : std::uint8_t {
  Hash,  // uninterpreted: deterministic hash semantics
  // arithmetic (exact, wrap-around)
  Add, Sub, Rsub, Mul, Neg, Sum, Mean,
  // indexing and assembling
  IndexPut, IndexCopy, IndexAdd, IndexSelect, IndexTensor, SliceScatter, SelectScatter, Scatter,
  ScatterAdd, Cat, Stack, Copy, Clone, Where, Fill, Zero, MaskedFill, Factory, FactoryLike, Arange,
  ForeachAdd, ForeachSub, ForeachMul,
  SymSize,
  // views
  Select, Slice, Narrow, Expand, ExpandAs, Transpose, T, Permute, Unsqueeze, Squeeze, View,
  ViewAs, Diagonal, AsStrided, Alias, Contiguous, Split, SplitWithSizes, Chunk, Unbind,
};

// Inline: the compilers ask for every call they compile.
inline bool isViewKind(OpKind kind) { return kind >= OpKind::Select; }
inline bool isListViewKind(OpKind kind) {  // split, split_with_sizes, chunk, unbind
  return kind == OpKind::Split || kind == OpKind::SplitWithSizes || kind == OpKind::Chunk || kind == OpKind::Unbind;
}

struct OpInfo {
  const Schema* schema = nullptr;  // nullptr: schema-less (custom, delegate, HOP, call_module)
  OpKind kind = OpKind::Hash;
  bool inplace = false;      // torchgen in-place kind (add_, index_put_, ...)
  bool copyVariant = false;  // one of the `*_copy` view variants (or _unsafe_view)
  bool outVariant = false;   // a return aliases a written keyword-only argument (`out=`)
  bool getitem = false;      // operator.getitem
  bool annotated = false;    // some argument or return of the schema has an alias annotation
  // The first argument written in the alias set of the first return (`add_`'s self, an
  // `out=` argument), or -1: where the storage model puts the result.
  std::int32_t resultWrites = -1;
  std::uint64_t opId = 0;    // hash of the target
};

OpInfo classify(const Node& node, const SchemaTable& schemas);

// A schema default as an Arg: None, True, 3, 1.5, [0, 1], 'none', contiguous_format (token).
Arg parseDefault(std::string_view text);

// A float scalar as an integer element: integral values exactly, others by their bits (hashed).
std::uint64_t scalarElement(double value);

// Positions of the output whose spec is not BUFFER_MUTATION (what ExecuTorch's emitter keeps).
std::vector<std::size_t> visibleOutputPositions(const Program& program);

// Per node: the output node returns it at a position whose spec is not a mutation. ExecuTorch's
// ReplaceViewCopyWithViewPass keeps such a view_copy a copy; after write-back the mutation
// positions hold copy_ nodes, so they do not count (this is what makes B3 visible in S_seq).
std::vector<bool> returnedAtVisiblePositions(const Program& program);

// ---------------------------------------------------------------------------------------------
// The per-program analysis every compile of one program shares (check() compiles the reference
// program three times and the placed program twice): everything that depends on the program and
// the schemas but not on the tier, view mode or semantics. Computed once, so the compilers do
// no name lookups in the schema table, no argument binding and no annotation parsing.

// An argument as written: `node` is the node a Ref refers to (Arg::node; kNoNode if it is out of
// the graph), and a List or Tuple has its items' ArgRefs at
// Analysis::argRefs[itemsAt, itemsAt + arg->items.size()).
struct ArgRef {
  static constexpr std::uint32_t kNoNode = 0xffffffffu;
  const Arg* arg = nullptr;
  std::uint32_t node = kNoNode;
  std::uint32_t itemsAt = 0;
};

// Per op target (and positional arity): its classification and its schema's parsed defaults.
// Shared by the analyses of one check (the program and the placed program name the same ops),
// and by the checks of one Checker (whose programs mostly name the same few dozen ops).
class OpCache {
 public:
  struct Entry {
    // Shares the node's text block: producers intern targets, so a later node's target is
    // usually the same block and compares equal without reading characters.
    SharedString target;
    std::uint64_t targetHash = 0;  // hashName(target): each use looks the target up again
    std::size_t positional = 0;
    NodeOp op = NodeOp::CallFunction;
    OpInfo info;
    std::vector<Arg> defaults;  // per schema argument: the parsed default (None if it has none)
    // For argument binding, derived from the schema once: the schema positions that take
    // positional arguments (those not keyword-only), in order.
    std::vector<std::uint32_t> positionalParams;
    // The table info.schema was found in, held so that the schema outlives the entry: while it
    // lives no other schema can take its address, so a later lookup that finds the same
    // pointer has found the same schema, and the classification still holds.
    SchemaTable table;
    // Other schemas found equal to info.schema before (in the tables of earlier uses), each
    // with the table that keeps it alive (so, as above, its address is its identity): when a
    // use's table gives the target one of them, it is known equal without comparing them.
    // A few only (kMaxEqualSchemas): a Checker's checks cycle through a few tables.
    std::vector<std::pair<const Schema*, SchemaTable>> equalSchemas;
    std::uint64_t validIn = 0;  // the use (see newUse) in which it was last found to hold
  };
  // Every get() between two newUse() calls must pass the same schema table.
  const Entry& get(const Node& node, const SchemaTable& schemas);
  // Starts a use with a schema table that may differ from the last one (a Checker's next
  // check): each entry is looked up again, once, on its next get(), and classified again if
  // the table now gives its target another schema. Analyses made before are then stale.
  void newUse() { ++use_; }

 private:
  static constexpr std::size_t kMaxEqualSchemas = 8;
  // Open addressing on the lookup key; capacity a power of two, at least twice the entries.
  struct Slot {
    std::uint64_t key = 0;
    std::uint32_t entry = 0;  // entry index + 1 (0: empty)
  };
  std::vector<std::unique_ptr<Entry>> entries_;  // stable addresses: NodeFacts point into `defaults`
  std::vector<Slot> slots_;
  std::uint64_t use_ = 1;
  Entry classified(const Node& node, const SchemaTable& schemas) const;
  void revalidate(Entry& e, const Node& node, const SchemaTable& schemas);
};

struct NodeFacts {
  OpInfo info;                            // classify(); default for non-calls
  bool bound = false;                     // schema op whose arguments fit its schema
  std::uint32_t argsAt = 0, argsCount = 0;  // bound arguments (schema positions, defaults
                                            // filled) at Analysis::boundArgs
  std::uint32_t rawAt = 0, rawCount = 0;    // node.args as written, at Analysis::argRefs
  std::uint32_t kwAt = 0;                   // node.kwargs values, in order, at Analysis::argRefs
  std::string bindError;                  // why they do not fit (schema ops only)
  bool hasShape = false;                  // the annotation is a static shape:
  std::uint32_t shapeAt = 0, rank = 0;    //   its sizes at Analysis::shapes
  std::vector<std::size_t> getitemUsers;  // nodes `operator.getitem(this, k)`
  bool keptViewCopy = false;              // see returnedAtVisiblePositions()
  std::optional<int> shareAllocArgIndex;  // meta _share_alloc_with_arg_idx
};

struct Analysis {
  const Program* program = nullptr;  // not owned: compile() callers keep the program alive
  std::shared_ptr<OpCache> ops;      // owns the parsed defaults bound arguments point to
  std::vector<NodeFacts> nodes;                               // per node, graph order
  std::vector<ArgRef> argRefs;                                // pool (see ArgRef, NodeFacts)
  std::vector<ArgRef> boundArgs;                              // pool (see NodeFacts)
  std::vector<std::int64_t> shapes;                           // pool (see NodeFacts)
  std::uint32_t returnedAt = 0, returnedCount = 0;            // Graph::returnedValues() at argRefs
  std::vector<std::size_t> visibleOutputs;                    // visibleOutputPositions()
  // Per output spec: the node index of the placeholder a mutation spec writes, if any.
  std::vector<std::optional<std::size_t>> mutatedPlaceholder;
  // Made `like` another program's analysis (see analyse()): that program, and how many
  // leading nodes the two have equal (what sharedPrefix() would count again).
  const Program* likeProgram = nullptr;
  std::size_t equalLeadingNodes = 0;
  // Per node (when made `like`): the node of likeProgram it was matched to, node for node in
  // the equal leading ones and then each equal to like's next unmatched one; ArgRef::kNoNode
  // for the nodes matched to none (a placed program's copies).
  std::vector<std::uint32_t> likeNodes;

  std::span<const ArgRef> args(const NodeFacts& f) const { return {boundArgs.data() + f.argsAt, f.argsCount}; }
  std::span<const ArgRef> raw(const NodeFacts& f) const { return {argRefs.data() + f.rawAt, f.rawCount}; }
  std::span<const ArgRef> returned() const { return {argRefs.data() + returnedAt, returnedCount}; }
  std::span<const ArgRef> items(const ArgRef& a) const { return {argRefs.data() + a.itemsAt, a.arg->items.size()}; }
};

// `cache` may be shared by several analyses (check() analyses the program and the placed
// program); a fresh one is made if null. `like`, if given, is an analysis made with the same
// schemas and cache in the same use (OpCache::newUse) of a program that `program` may begin
// like (a program, for its placed version): the facts of the leading nodes the two programs
// have equal, and after them of each node equal to the next node of `like` not yet matched
// (a placed program is its program with copies inserted), are taken from it (pointed at
// `program`'s own arguments and nodes) instead of being derived again; what later nodes
// decide about them (getitem users, keptViewCopy) is not. The result is the analysis made
// without `like`.
Analysis analyse(const Program& program, const SchemaTable& schemas, std::shared_ptr<OpCache> cache = nullptr,
                 const Analysis* like = nullptr);



// F (value semantics) for a written argument: whether the op's new version of argument k
// replaces the argument node for every later reference. True for every write except that of
// an in-place-kind op (`add_`, `index_put_`, `relu_`) to an argument it returns as its result:
// such an op yields the new version as its own result and the old node keeps the old value
// (which is what makes H3 and reinplace's R-a ill-formed under F). Mutable custom ops
// (`llama::update_cache(..., Tensor(a!) cache, ...)`), `out=` arguments, `Tensor(a!)[]` lists
// and `_native_batch_norm_legit`'s running statistics rebind their arguments: export names the
// argument node itself as the mutation value after them.
bool rebindsWrittenArgument(const Schema& schema, std::size_t k);

// ---------------------------------------------------------------------------------------------
// Compiled programs.

struct ElementProgram;
struct StorageProgram;

struct Compiled {
  ExecOptions options;
  std::shared_ptr<const ElementProgram> element;  // exactly one of these is set
  std::shared_ptr<const StorageProgram> storage;
};

Result<std::shared_ptr<const ElementProgram>> compileElement(const Analysis& analysis, const ExecOptions& options);
Result<std::shared_ptr<const StorageProgram>> compileStorage(const Analysis& analysis, const ExecOptions& options);
// How many leading nodes two analysed programs (a program and its placed version) compile
// alike in: equal nodes whose facts that depend on later nodes (getitem users, whether the
// output keeps a view_copy) agree too.
std::size_t sharedPrefix(const Analysis& a, const Analysis& b);

// The element tier's compiles for check(), sharing work (see ElementCompiler::compileShared):
// storage semantics in both view modes (options.viewMode, valueSemantics and placedProgram are
// ignored), with `value` the value model too, and with `placed` the placed program in both
// view modes, sharing the first `placedFrom` nodes (at most sharedPrefix()). aliasViews and
// placedAlias: nullopt when the copy-views program does not depend on the view mode (or its
// compile failed); value and placed: nullopt when not made. Each program is what its plain
// compileElement gives (tests/oracle_element_test.cpp, ForkedCompilesMatchPlainCompiles).
struct ElementPrograms {
  Result<std::shared_ptr<const ElementProgram>> copyViews;
  std::optional<Result<std::shared_ptr<const ElementProgram>>> aliasViews, value, placed, placedAlias;
};
ElementPrograms compileElementShared(const Analysis& analysis, const ExecOptions& options, bool value,
                                     const Analysis* placed, std::size_t placedFrom);
// compile() on an analysis shared by several compiles of one program.
Result<Executable> compileAnalysed(const Analysis& analysis, const ExecOptions& options);
// What check() compiles, as executables: storage semantics in both view modes, with `value`
// the value model (F), with `placed` the placed program in both view modes (options.viewMode,
// valueSemantics and placedProgram are ignored). aliasViews, placedAlias: nullopt when the
// copy-views executable does not depend on the view mode (the alias-views one would behave
// the same) or its compile failed; value and placed are set when asked for. The element tier
// shares work between them (compileElementShared); results are those of separate compiles.
struct SharedExecutables {
  Result<Executable> copyViews;
  std::optional<Result<Executable>> aliasViews, value, placed, placedAlias;
};
SharedExecutables compileAnalysedShared(const Analysis& analysis, const ExecOptions& options, bool value = false,
                                        const Analysis* placed = nullptr);
bool dependsOnViewMode(const ElementProgram& exe);
// How many of its nodes a forked compile copied from its parent's instead of compiling them
// (ElementCompiler::replay; for tests).
std::size_t replayedNodes(const ElementProgram& exe);
// How a program was made (for tests): by a fork (ElementCompiler::forkAt) or by a plain
// compile; and the program it was forked from, if that one compiled (else null).
struct ElementOrigin {
  bool forked = false;
  const ElementProgram* parent = nullptr;
};
ElementOrigin originOf(const ElementProgram& exe);
bool dependsOnViewMode(const StorageProgram& exe);
std::vector<RunResult> runElement(const std::shared_ptr<const ElementProgram>& exe, std::span<const Semantics> endings,
                                  InputSet inputs, bool recordNodeHashes);
std::vector<RunResult> runStorage(const StorageProgram& exe, std::span<const Semantics> endings, InputSet inputs,
                                  bool recordNodeHashes);

// ---------------------------------------------------------------------------------------------
// Runs for verdicts, without a RunResult: check() compares five runs per input set and reads
// a label only on a difference, so a run writes its observations into one flat, reused buffer
// instead of a vector and a label per observation.

// The observations of one run (RunResult's placeholders, then its outputs), flat: observation
// i's values are values[i == 0 ? 0 : ends[i - 1], ends[i]).
struct Observations {
  std::vector<std::uint64_t> values;
  std::vector<std::uint32_t> ends;
  std::size_t placeholders = 0;  // the first `placeholders` observations; the rest are outputs

  void clear() {
    values.clear();
    ends.clear();
    placeholders = 0;
  }
  void endObservation() { ends.push_back(static_cast<std::uint32_t>(values.size())); }
  std::size_t count(bool isOutput) const { return isOutput ? ends.size() - placeholders : placeholders; }
  std::span<const std::uint64_t> of(bool isOutput, std::size_t i) const {
    const std::size_t k = isOutput ? placeholders + i : i;
    const std::size_t begin = k == 0 ? 0 : ends[k - 1];
    return {values.data() + begin, ends[k] - begin};
  }
};

// The state of one element-tier run before one of its program's fork points (see
// ElementProgram::forkPoints in element.cpp), kept so that the runs of the programs forked
// there, for the same inputs, start from it instead of repeating the steps before it (the
// placed, F and alias-views executables of check() fork from the copy-views one). The state is
// a function of (program, step, inputs) only. Holding the program keeps its address from
// being taken by another program while the state is kept.
struct ForkState {
  std::shared_ptr<const ElementProgram> program;
  std::uint32_t step = 0;
  InputSet inputs;
  std::vector<std::uint64_t> arena, opaque;  // their prefixes the steps before `step` touch
};

// Buffers a run needs, kept across runs (check() makes five per input set, a Checker keeps
// them across checks), so a warm run allocates nothing; and the fork states of recent runs.
struct RunScratch {
  static constexpr std::size_t kMaxForkStates = 8;  // more than one check's fork points
  std::vector<std::uint64_t> arena, snapshot, opaque, out;
  std::vector<std::vector<std::uint64_t>> in, endValues;
  std::vector<const std::uint64_t*> inputs;
  std::vector<ForkState> forkStates;
  std::size_t nextForkState = 0;       // the one replaced next once there are kMaxForkStates
  std::size_t runsFromForkStates = 0;  // runs that started from a kept state (for tests)

  // Lets go of the kept states' programs (a Checker, before its next check); keeps the buffers.
  void releaseForkStates() {
    for (ForkState& f : forkStates) f.program.reset();
  }
};

// Runs once and fills out[k] with the observations after ending endings[k] (as runEndings).
// The run of a forked program starts from a fork state in `scratch` when one fits.
void observeElement(const std::shared_ptr<const ElementProgram>& exe, std::span<const Semantics> endings,
                    InputSet inputs, RunScratch& scratch, std::span<Observations> out);
// The storage tier's: runs once and fills out[k] as runStorage's results, flattened (one value
// an observation), with the run's state in `scratch`.
void observeStorage(const StorageProgram& exe, std::span<const Semantics> endings, InputSet inputs,
                    RunScratch& scratch, std::span<Observations> out);
void observe(const Executable& exe, std::span<const Semantics> endings, InputSet inputs, RunScratch& scratch,
             std::span<Observations> out);
// The label of observation i (a placeholder's name, "output 1 (%add)").
std::string observationLabel(const Executable& exe, bool isOutput, std::size_t i);
std::string observationLabel(const ElementProgram& exe, bool isOutput, std::size_t i);
std::string storageObservationLabel(const StorageProgram& exe, bool isOutput, std::size_t i);

// One run's observations as firstDifferenceOf reads runs: labels come from the executable,
// read only when there is a difference.
struct ObservedRun {
  const Observations& observed;
  const Executable& exe;
  std::size_t count(bool isOutput) const { return observed.count(isOutput); }
  std::span<const std::uint64_t> of(bool isOutput, std::size_t i) const { return observed.of(isOutput, i); }
  std::string label(bool isOutput, std::size_t i) const { return observationLabel(exe, isOutput, i); }
};

// The first difference between two runs, placeholders first, then outputs. `Run` gives
// count(isOutput), of(isOutput, i) (the values, a span) and label(isOutput, i). One definition
// for RunResults (firstDifference) and flat observations (check()), so both report alike.
template <typename RunA, typename RunB>
std::optional<Difference> firstDifferenceOf(const RunA& a, const RunB& b) {
  for (const bool isOutput : {false, true}) {
    const std::size_t na = a.count(isOutput), nb = b.count(isOutput);
    for (std::size_t i = 0; i < std::max(na, nb); ++i) {
      if (i < na && i < nb) {
        const auto x = a.of(isOutput, i);
        const auto y = b.of(isOutput, i);
        if (std::equal(x.begin(), x.end(), y.begin(), y.end())) continue;
        Difference d;
        d.isOutput = isOutput;
        d.index = i;
        d.label = a.label(isOutput, i);
        std::size_t e = 0;
        while (e < x.size() && e < y.size() && x[e] == y[e]) ++e;
        d.element = e;
        if (e < x.size()) d.expected = x[e];
        if (e < y.size()) d.actual = y[e];
        return d;
      }
      Difference d;  // one side has fewer observations
      d.isOutput = isOutput;
      d.index = i;
      d.label = i < na ? a.label(isOutput, i) : b.label(isOutput, i);
      if (i < na && !a.of(isOutput, i).empty()) d.expected = a.of(isOutput, i)[0];
      if (i < nb && !b.of(isOutput, i).empty()) d.actual = b.of(isOutput, i)[0];
      return d;
    }
  }
  return std::nullopt;
}

// The same for two flat runs, which are most often equal (check() compares five runs per input
// set): equal buffers (the same observations, value for value) have no difference, found with
// one comparison of each buffer rather than one per observation.
inline std::optional<Difference> firstDifferenceOf(const ObservedRun& a, const ObservedRun& b) {
  if (a.observed.placeholders == b.observed.placeholders && a.observed.ends == b.observed.ends &&
      a.observed.values == b.observed.values)
    return std::nullopt;
  return firstDifferenceOf<ObservedRun, ObservedRun>(a, b);
}

}  // namespace wb::oracle::detail
