// oracle/oracle.h: the interpreter oracle (DESIGN §7, executorch-semantics §5.2).
//
// Runs a Program under one of the reference semantics and compares final states:
//   S_par  storage semantics; at the end read every mutation value, then write every target
//          (parallel assignment). The reference.
//   S_seq  the same, but the end writes happen one by one in output-spec order (upstream's end).
//   F      value semantics: every node yields a fresh value; at the end B_i := the value of V_i.
//          Writes make new versions, in two ways:
//          - an op of in-place kind writing an argument it returns (`add_`, `index_put_`,
//            `relu_`, `copy_`) yields the new version as its own result; references to the old
//            node keep the old value (so H3 and reinplace's R-a are ill-formed under F);
//          - every other written argument (mutable custom ops such as
//            `llama::update_cache(Tensor value, Tensor(a!) cache, SymInt start_pos) -> Tensor`,
//            the `out` argument of `out=` variants, `Tensor(a!)[]` lists, the running
//            statistics of `_native_batch_norm_legit`) rebinds the argument node to its new
//            version for every later reference, the output included: after
//            unsafe_remove_auto_functionalized_pass export names the argument node itself
//            (often the buffer placeholder) as the mutation value.
//          Only a node an argument names is rebound (`%x` or an element of `[%x, %y]`); a
//          write through a view node does not reach the view's base under F.
//   Placed a program that already contains its copy_ nodes, run as it stands (no end writes).
// Each storage-semantics run is done in one of two view modes: the `*_copy` view variants as
// copies (before ExecuTorch's ReplaceViewCopyWithViewPass) or as aliases (after it).
//
// Two tiers with one interface: the element tier (shapes known: real strided tensors of 64-bit
// integers) and the storage tier (shapes unknown: one 64-bit digest per storage root).
//
// Usage: check() for verdicts (the CLI's `wbcheck check`), a Checker for verdicts on one
// program after another (a campaign worker); compile() once + run() many times for the fuzzer
// and tests. Everything here is a value type; no global state.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/diagnostics.h"
#include "core/ir.h"
#include "core/placement.h"
#include "core/schema.h"

namespace wb::oracle {

enum class ViewMode : std::uint8_t { CopyViews, AliasViews };
enum class Semantics : std::uint8_t { Par, Seq, Value, Placed };
enum class Tier : std::uint8_t { Element, Storage };

std::string_view toString(ViewMode mode);    // "copy-views", "alias-views"
std::string_view toString(Semantics sem);    // "S_par", "S_seq", "F", "placed"
std::string_view toString(Tier tier);        // "element", "storage"

// What is compared after a run: one observation per placeholder (its final storage) and one
// per visible output (a returned value whose output spec is not BUFFER_MUTATION, in order).
struct Observation {
  std::string label;                  // "b_cache", "output 1 (%add)"
  std::vector<std::uint64_t> values;  // element tier: row-major elements; storage tier: one
                                      // digest; a non-tensor value: one digest
  friend bool operator==(const Observation&, const Observation&) = default;
};

struct RunResult {
  Tier tier = Tier::Element;
  std::vector<Observation> placeholders;  // every placeholder, in graph order
  std::vector<Observation> outputs;       // visible outputs, in order
  // Per node of the graph (graph order): a hash of its result right after it ran, if
  // requested; 0 for nodes without a tensor result.
  std::vector<std::uint64_t> nodeHashes;
};

struct ExecOptions {
  Tier tier = Tier::Element;
  ViewMode viewMode = ViewMode::CopyViews;
  // The value model (F, see above) gives every node fresh storage; otherwise storage
  // semantics (S_par, S_seq, Placed; the semantics is chosen per run).
  bool valueSemantics = false;
  // Element tier: maximum number of 64-bit elements one run may hold (all storages and
  // precomputed index tables together). Exceeding it is a compile error, not a crash.
  std::size_t maxElements = std::size_t{1} << 22;
  // Keep what is needed to hash every node's result after it runs (RunResult::nodeHashes);
  // off by default because it costs compile time and memory.
  bool traceNodes = false;
  // A placed program (its copies already inserted) runs only as Semantics::Placed: its
  // mutation specs need not make sense as end-of-run writes (upstream renames them by
  // position), so none are compiled; Par and Seq then write nothing at the end.
  bool placedProgram = false;
  // The behaviour draw of the ops without a schema (see HavocBehaviour): 0 reads every tensor
  // argument, writes none and makes fresh results. The value model (F) always runs draw 0: it
  // cannot model the writes of an op it knows nothing about (a write through a view does not
  // reach the view's base under F, and the contract lets such an op write anywhere).
  unsigned behaviour = 0;
};

// ---------------------------------------------------------------------------------------------
// Behaviours of the ops without a schema.
//
// An op with no schema (executorch_call_delegate, a custom op nobody declared, call_module, a
// higher-order op) may, by the contract of DESIGN §5, read every tensor argument, write any of
// them (each element of a list argument too) and return a view of any of them: a real delegate
// updates a KV cache in place and may return a view of it. The alias analysis of core/ assumes
// all of it (hazards H2, H9); an oracle that ran such an op as pure would pass a placement that
// wrongly assumes purity too. So the oracle runs each such node in one behaviour per draw:
// - draw 0: reads every tensor argument, writes none, fresh results (the behaviour every verdict
//   of the suite was first made with; ExecOptions::behaviour's default);
// - draw d > 0: picked from a hash of d and the node's *name* over the whole space: no write,
//   a write into one argument, into every one, or into each by a coin flip; each write through
//   the argument's view or into its whole storage; each result fresh or a view of one argument
//   (shape permitting: a result whose shape fits in no argument stays fresh).
// The name, not the node's index: a node keeps its name in the placed program, so S_par, S_seq
// and the placed program of one draw give it the same behaviour. Values written are hashes of
// what the op read, as for every uninterpreted op. An op with a schema (from the file or
// --schemas) is never drawn: its schema says exactly what it does.
// Tensor arguments are numbered in the order the node lists them, positional then keyword
// arguments, the items of a list argument in order, non-tensor values skipped.
// The proofs (proofs/equivalence.cpp) replay their counterexamples through the same draws.
class HavocBehaviour {
 public:
  HavocBehaviour(unsigned draw, std::string_view nodeName);
  unsigned draw() const { return draw_; }
  // Draw 0: reads only, fresh results.
  bool readsOnly() const { return draw_ == 0; }
  // Whether tensor argument k of `tensorArguments` is written, and if so whether its whole
  // storage is (else through the argument's view).
  bool writes(std::size_t k, std::size_t tensorArguments) const;
  bool writesWholeStorage(std::size_t k) const;
  // The tensor argument result element `element` (0 for a single result, r for element r of a
  // tuple) is a view of, if the draw makes it one; nullopt: a fresh result.
  std::optional<std::size_t> resultViewOf(std::size_t element, std::size_t tensorArguments) const;

 private:
  unsigned draw_ = 0;
  std::uint64_t hash_ = 0;
};

// Behaviour draws a check tries by default (`--behaviours`).
constexpr int kDefaultBehaviours = 4;

namespace detail {
struct Compiled;
}

// A program compiled for one tier and one execution model: node indices resolved, schemas
// bound, every storage and view layout precomputed. Cheap to copy (shared, immutable).
class Executable {
 public:
  const ExecOptions& options() const;
  // False when the program has no `*_copy` view variant: both view modes then compile to the
  // same executable and give the same results.
  bool dependsOnViewMode() const;
  std::shared_ptr<const detail::Compiled> impl;
};

// Compiles a valid program (see validate()). Fails with the reason when the program cannot be
// interpreted in this tier (a shape is unknown, an op's arguments do not fit, memory cap).
// The storage tier accepts every valid program.
Result<Executable> compile(const Program& program, const SchemaTable& schemas, const ExecOptions& options);

// Explicit contents for some inputs, by the name the oracle fills an input under: a
// placeholder's name, or "get_attr:" + target for a tensor constant read with get_attr (the
// element tier; the storage tier's get_attr digests are constants). Element i of a named input
// is values[i] where i < values.size(); every other element, and every input not named, comes
// from the seed as usual. The storage tier takes element 0 as the placeholder's digest. Used
// to replay a counterexample found by the proofs (proofs/equivalence.h).
struct InputValues {
  std::map<std::string, std::vector<std::uint64_t>, std::less<>> byName;
};

// Which inputs: every placeholder is filled from (seed, inputSet, placeholder name), except
// where `values` (if set; the caller keeps it alive during the run) names it. A run with
// explicit values neither takes nor keeps fork states (ops.h: ForkState).
struct InputSet {
  std::uint64_t seed = 0;
  int index = 0;
  const InputValues* values = nullptr;
};

// Runs once. `semantics` must be Value for a value-model executable, and Par, Seq or Placed
// otherwise. `recordNodeHashes` needs an executable compiled with traceNodes.
RunResult run(const Executable& exe, Semantics semantics, InputSet inputs, bool recordNodeHashes = false);
// Runs the nodes once and applies each of `endings` (Par, Seq, Placed) to a copy of the final
// state: S_par and S_seq for the price of one run.
std::vector<RunResult> runEndings(const Executable& exe, std::span<const Semantics> endings, InputSet inputs,
                                  bool recordNodeHashes = false);

// The first difference between two runs: which observation, which element, both values.
struct Difference {
  bool isOutput = false;       // a visible output (else a placeholder)
  std::size_t index = 0;       // into placeholders / outputs
  std::string label;
  std::size_t element = 0;     // element index (row-major); 0 in the storage tier
  std::optional<std::uint64_t> expected, actual;  // nullopt: the observation is missing
};
std::optional<Difference> firstDifference(const RunResult& expected, const RunResult& actual);

// `base` plus schemas of ops the oracle interprets that `base` lacks (neg, mean, t, reshape,
// zeros, ...), so they are interpreted rather than treated as schema-less. Schemas in `base`
// win.
SchemaTable withOracleSchemas(const SchemaTable& base);

// ---------------------------------------------------------------------------------------------
// Verdicts.

// Places a program instead of place(program, CheckOptions::placement, schemas): a placement
// that is not one of Placement's. Tests pass deliberately broken variants of a placement
// through it (they are not shipped); reports still name CheckOptions::placement.
using PlaceFunction = std::function<PlacedProgram(const Program&, const SchemaTable&)>;

struct CheckOptions {
  Placement placement = Placement::Early;
  PlaceFunction placeWith;  // empty: place() with `placement`
  // With placeWith: what reports and the replay line call it instead of `placement`, as the
  // command-line words that select it (`--pass-cmd 'python3 end.py'`). Empty: the placement.
  std::string placedBy;
  int inputs = 3;          // input sets per check
  std::uint64_t seed = 0;
  bool strict = false;     // findings about the program (S_seq != S_par, S_par != F) fail too
  std::string fileName;    // for the replay command line; "FILE" if empty
  // Look for findings about the program (S_seq != S_par, S_par != F). Off: only the placement
  // is compared with S_par; F is neither compiled nor run and `findings` stays empty (what a
  // fuzzer of the placement needs). Where F compiles, the report is otherwise the same; where
  // F alone does not, the program is checked in the element tier instead of the storage tier
  // (or at all, instead of an Error).
  bool programFindings = true;
  // Behaviour draws of the ops without a schema to try (draws 0 .. behaviours - 1; see
  // HavocBehaviour). Findings about the program come from draw 0 only: F runs every op
  // without a schema as draw 0 does (see ExecOptions::behaviour). The other draws compare the
  // placed program with S_par, and are run only for a program that calls such an op.
  int behaviours = kDefaultBehaviours;
};

enum class Verdict : std::uint8_t { Holds, PlacementBug, Error };

// Which two runs a mismatch compares: the placed program against S_par (a placement bug), or
// the program's own semantics against each other (findings about the program). One finding
// about the program compares no runs: a `_share_alloc_with_arg_idx` outside the domain
// reinplace produces (core/reinplace_domain.h). ExecuTorch makes no such program, so no
// placement is judged on it: the placed program is not compared (a placement that fails is
// still a bug).
enum class MismatchKind : std::uint8_t {
  PlacementDiffersFromPar,
  SeqDiffersFromPar,
  ParDiffersFromValue,
  AnnotationOutsideDomain,
};
// "placement != S_par", "S_seq != S_par", "S_par != F", "annotation outside reinplace's
// domain" (reports, JSON).
constexpr std::string_view toString(MismatchKind kind) {
  switch (kind) {
    case MismatchKind::PlacementDiffersFromPar: return "placement != S_par";
    case MismatchKind::SeqDiffersFromPar: return "S_seq != S_par";
    case MismatchKind::ParDiffersFromValue: return "S_par != F";
    case MismatchKind::AnnotationOutsideDomain: return "annotation outside reinplace's domain";
  }
  return "?";
}
// Whether a kind compares two runs (every kind but AnnotationOutsideDomain): then its
// Mismatch has a view mode, an input set and a difference.
constexpr bool comparesRuns(MismatchKind kind) { return kind != MismatchKind::AnnotationOutsideDomain; }

struct Mismatch {
  MismatchKind kind = MismatchKind::PlacementDiffersFromPar;
  ViewMode viewMode = ViewMode::CopyViews;
  int inputSet = 0;
  unsigned behaviour = 0;  // the behaviour draw it shows in (always 0 for findings)
  Difference difference;
  std::string firstDivergingNode;  // placement bugs: first node (by name) whose result differs
                                   // from the reference run; empty if none does
  std::string replay;              // command line that reproduces it
  // AnnotationOutsideDomain: the annotated node (difference.label holds "%name") and why it is
  // outside the domain; empty for the other kinds.
  std::string note;
};

struct CheckReport {
  Verdict verdict = Verdict::Holds;
  std::string error;                   // Verdict::Error: why the program is not interpretable
  Tier tier = Tier::Element;
  std::string tierReason;              // why the storage tier was used
  Placement placement = Placement::Early;
  std::string placedBy;                // CheckOptions::placedBy
  std::optional<std::string> placementFailure;  // the placement itself failed (a bug)
  std::vector<Mismatch> bugs;          // placement != S_par (at most one per view mode)
  std::vector<Mismatch> findings;      // about the program (at most one per kind and mode; one
                                       // per annotated node outside reinplace's domain)
  std::uint64_t seed = 0;
  int inputs = 0;
  int behaviours = kDefaultBehaviours;
  bool strict = false;

  // 0 holds, 1 placement bug (or a finding under strict), 2 error.
  int exitCode() const;
};

// A set of view modes: those in which a report's placement bugs show (a campaign's findings
// are told apart by it).
enum class ViewModeSet : std::uint8_t { None, CopyViews, AliasViews, Both };
std::string_view toString(ViewModeSet modes);  // "", "copy-views", "alias-views", "both"
std::optional<ViewModeSet> viewModeSetFromString(std::string_view text);  // toString's inverse
ViewModeSet bugViewModes(const CheckReport& report);  // the modes of report.bugs

// Places the program with options.placement, then, for each input set and both view modes,
// runs S_par, S_seq, F and the placed program and compares them. `schemas` is used as given
// for both the placement and the interpreters: pass schemasFor(program, builtinSchemas()).
CheckReport check(const Program& program, const CheckOptions& options, const SchemaTable& schemas);

// check() for one program after another (a campaign worker, a fuzzer): keeps what a check can
// leave to the next, the classification of the ops the programs call (looked up again in each
// check's schema table, and redone for a target that now finds another schema) and the run
// buffers. Gives exactly check()'s reports (check() is a fresh Checker's first check). Not
// for concurrent use: one per thread. A moved-from Checker can only be assigned or destroyed.
class Checker {
 public:
  Checker();
  ~Checker();
  Checker(Checker&&) noexcept;
  Checker& operator=(Checker&&) noexcept;

  CheckReport check(const Program& program, const CheckOptions& options, const SchemaTable& schemas);

 private:
  struct Reused;
  std::unique_ptr<Reused> reused_;
};

std::string formatReport(const CheckReport& report);

}  // namespace wb::oracle
