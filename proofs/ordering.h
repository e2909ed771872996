// proofs/ordering.h: Z3 proofs that a placement orders its write-back copies correctly, and,
// for `early`, as early as the storage semantics allows (DESIGN §11, issue 16).
//
// A placed program is the program with nodes inserted: `copy_(B, V)` write-backs and
// `clone(V)`s that break cycles of copies. The original nodes keep their relative order, so
// each gets a constant position; each inserted node an integer variable. Every dependence the
// storage semantics imposes (proofs/effects.h, both view modes, their union) is one named,
// tracked difference constraint (verification-anchors §7: pure difference logic, linear in
// the program; only each inserted node's own constraints, no pairs of original nodes):
//   R0     an inserted node goes after the last placeholder (placeholders come first);
//   R1     after the definition of the value it reads (a copy of a clone: after the clone);
//   R2     a copy goes after every node that reads or writes its target's storage, through
//          any alias: they must see the old contents, and no write may land after the copy;
//   R3     a copy (or clone) goes after every node that writes any storage of its value: it
//          must read the final contents, as S_par's end does;
//   C      a copy or clone that reads storage another copy writes goes before that copy
//          (S_par reads every value before it writes any target);
//   C      copies of one target keep output-spec order (the last write wins in S_par);
//   END    inserted nodes go before the output node.
// A copy whose value is its target's whole storage changes nothing wherever it runs: it gets
// R0, R1 and END only, and nothing needs to precede it.
// These are the conditions under which the placed program, run node by node, equals S_par:
// every original node sees and leaves the same storage contents, every copy reads what S_par's
// end reads and writes what S_par's end leaves. What a placement does besides ordering (a
// missing write-back, a dropped node, a changed output layout, a failure) is checked apart,
// as a structural fault, and refutes too: the oracle sees those divergences as well, and they
// are not ordering faults.
//
// Queries (proofs/smt.h; each an answer with an unsat core of dependence names):
// - satisfied: the placed positions meet every dependence, or the minimised cores name the
//   violated ones, one at a time, in graph words ("copy_(b_s) at 4 precedes %_foreach_add_ at
//   6, which writes b_s's storage through list argument 0"). A violated dependence on a node
//   that is not live (effects.h: no run can observe its result) is listed but refutes nothing.
// - minimal: for each inserted node u placed right after original node a, "u before a" (one
//   slot earlier at the granularity of original nodes) is unsat. Only u and the inserted nodes
//   that must precede it, with their own constraints, take part (the least solution of a
//   difference system depends on nothing else). The core, mapped back to graph facts, is the
//   proof's explanation of u's position, in the words of `place --explain`; it is compared with
//   core's explanation (core/placement.h CopyExplanation), whose claimed reason must itself
//   force the position. A sat answer says how far earlier u could go.
// Every fact is asserted once per proof (one solver scope) and each query assumes the ones it
// asks about. Cores are minimal: Z3's conflict is used as it comes when its facts form one
// cycle of the difference graph (then no proper subset is unsat), else minimised by deletion.
// Ops without a schema are havoc (effects.h): never pure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/ir.h"
#include "core/placement.h"
#include "core/schema.h"
#include "proofs/effects.h"
#include "proofs/smt.h"

namespace wb::proofs {

enum class DepKind : std::uint8_t {
  AfterPlaceholders,  // R0
  AfterValue,         // R1
  AfterTargetAccess,  // R2
  AfterValueWrite,    // R3
  BeforeOverwrite,    // C: reads storage that a copy overwrites
  TargetOrder,        // C: copies of one target, in output-spec order
  BeforeOutput,       // END
};
inline constexpr int kDepKinds = 7;
std::string_view toString(DepKind kind);  // "R0", "R1", "R2", "R3", "C", "C-order", "END"

// A node the placement inserted.
struct InsertedNode {
  enum class Kind : std::uint8_t { Copy, Clone };
  Kind kind = Kind::Copy;
  std::string name;              // in the placed program
  NodeId target = kNoNode;    // Copy: the placeholder written (original index)
  NodeId value = kNoNode;     // the original node whose contents it reads (through its clone)
  std::optional<std::size_t> clone;  // Copy of a clone: the clone (index into inserted)
  std::size_t outputIndex = 0;   // Copy: the mutation output it writes back
  std::int64_t anchor = -1;      // placed right after this original node (-1: before all)
  std::uint32_t rank = 0;        // 1 + inserted nodes between the anchor and it
  std::size_t placedIndex = 0;   // its index in the placed graph
  std::string text;              // "copy_(b_s, %mul)", "clone(%mul)"
  // A copy of a value that is its target's whole storage (`add.out(..., out=b)` written back
  // into b): it copies the storage onto itself wherever it goes, so only its definition binds
  // it (R0, R1, END), no copy has to precede it, and minimality is not asked of it.
  bool noOp = false;
};

// A dependence: inserted node `inserted` must go after (or before) `node` (an original node)
// or `other` (another inserted node).
struct Dependence {
  DepKind kind = DepKind::AfterValue;
  std::size_t inserted = 0;
  bool before = false;                 // inserted precedes the other end (else follows it)
  NodeId node = kNoNode;            // the other end, an original node ...
  std::optional<std::size_t> other;    // ... or an inserted node
  NodeId root = kNoNode;            // the storage concerned (R2, R3, C)
  Access access;                       // how `node` (R2, R3) or the reader (C) touches it
  bool writes = false;                 // R2: the node writes the target (else reads it)
  bool live = true;                    // the original node may influence an observation
  // It holds only because an op without a schema may do what its contract allows (read or
  // write an argument, return a view of one): havoc, never pure (issue 20).
  bool havoc = false;
  std::uint8_t modes = 0;              // bit 0: copy-views, bit 1: alias-views
};

enum class FaultKind : std::uint8_t {
  PlacementFailed,   // the placement itself failed (e.g. pr20744's IndexError, H7)
  PlacedInvalid,     // the placed program does not validate
  MissingWriteBack,  // a mutation output that changes its target got no copy (B1)
  UnexpectedCopy,    // a copy that writes back no mutation output (wrong target or value)
  DuplicateCopy,     // two copies for one mutation output
  DroppedNode,       // an original node that may influence an observation is gone (DCE)
  OutputLayout,      // the visible outputs differ from the program's (B2)
};
std::string_view toString(FaultKind kind);  // "missing-write-back", ...

struct StructuralFault {
  FaultKind kind = FaultKind::MissingWriteBack;
  std::string text;
  // The node of the program it is about: the target of a missing write-back or of an
  // unexpected or duplicate copy, the dropped node; kNoNode for the others.
  NodeId node = kNoNode;
  // It holds only because an op without a schema may write (a dropped delegate): havoc.
  bool havoc = false;
};

struct Violation {
  std::size_t dependence = 0;  // index into OrderingReport::dependences
  std::string text;            // "copy_(b_s) at 4 precedes %add at 6, which reads b_s"
  bool live = true;            // false: violated, but no run can observe it
};

struct InsertedVerdict {
  std::size_t inserted = 0;              // index into OrderingReport::inserted
  std::optional<bool> minimal;           // nullopt: not asked (unsatisfied, or unknown)
  std::string explanation;               // the proof's, from the core ("after %add: reads b_s")
  std::string rule;                      // its rule (R0 R1 R2 R3 C CLONE), as core names them
  std::string bindingNode;               // the node the core binds it after
  std::vector<std::size_t> core;         // dependence indices of the minimality core
  std::string earliestAfter;             // not minimal: the earliest original node it could follow
  std::int64_t earliestAfterNode = -1;   // ... as an index of the program (-1: before every node)
  // Core's explanation of the same copy, when the placement gives one (early), and whether
  // its claimed reason (rule and binding node) is a dependence that forces the position.
  std::optional<CopyExplanation> coreExplanation;
  std::optional<bool> agreesWithCore;
  std::string disagreement;              // why not, in words
};

struct OrderingOptions {
  // Limits and dumps (smt.logic is set to QF_IDL by the proof: its constraints are difference
  // logic).
  SmtOptions smt;
  // Ask the minimality queries (for every placement; `early` must be minimal to be proved).
  bool minimality = true;
  // Violations listed at most (each costs a query); the verdict does not depend on it.
  std::size_t maxViolations = 64;
  // A proof that tracked more facts than this (dependences, placed positions, questions) is
  // followed by a fresh solver: Z3 4.8.12 keeps a large proof's structures after the scope is
  // popped, and every later query pays for them (see OrderingProver). A prover that dumps
  // its queries keeps one solver, whose numbering the dump files follow.
  std::size_t freshSolverAfterFacts = 4096;
  // Tests only: leave out every dependence of this kind, to show the encoding needs it
  // (a mutation check of the encoding; no CLI flag sets it).
  std::optional<DepKind> dropKind;
};

struct OrderingReport {
  Verdict verdict = Verdict::Unknown;
  std::string reason;                        // Unknown: why (solver limit, outside the model)
  std::vector<StructuralFault> faults;
  std::vector<InsertedNode> inserted;
  std::vector<Dependence> dependences;
  std::vector<std::string> dependenceNames;  // per dependence: its tracked name
  std::optional<bool> satisfied;             // nullopt: not decided
  std::vector<Violation> violations;         // live ones first, each once
  bool moreViolations = false;               // maxViolations reached
  std::optional<bool> minimal;               // every inserted node minimal
  bool minimalityRequired = false;           // `early`: not minimal refutes
  std::vector<InsertedVerdict> verdicts;     // per inserted node
  std::size_t disagreements = 0;             // with core's explanations
  std::size_t queries = 0;
  std::uint64_t rlimitUsed = 0;
  double seconds = 0.0;                      // solver time
  double totalSeconds = 0.0;                 // everything (effects, matching, queries)
  std::size_t liveViolations() const;
};

// Proves program after program with one Z3 context and solver, which cost more to set up than
// the queries of a small program (a campaign, a benchmark, a test over a corpus). Every proof
// runs in a solver scope of its own, so nothing of one proof is left for the next; the reports
// are those of separate proofs. After a large proof (OrderingOptions::freshSolverAfterFacts)
// the solver is made anew. Not for concurrent use: one per thread.
class OrderingProver {
 public:
  explicit OrderingProver(OrderingOptions options = {});
  ~OrderingProver();
  OrderingProver(OrderingProver&&) noexcept;
  OrderingProver& operator=(OrderingProver&&) noexcept;

  // Places `program` with `placement` (core/placement.h) and proves the result; `early` must
  // be minimal too. `program` must be valid; `schemas` is schemasFor(program, builtinSchemas()).
  OrderingReport prove(const Program& program, Placement placement, const SchemaTable& schemas);
  // The same for a placed program from anywhere (another implementation of the pass): its
  // program, its copies' explanations (may be empty) and its failure. `requireMinimal` makes
  // a placement that is valid but not minimal a refutation.
  OrderingReport prove(const Program& program, const PlacedProgram& placed, const SchemaTable& schemas,
                       bool requireMinimal);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// One proof with a fresh prover.
OrderingReport proveOrdering(const Program& program, Placement placement, const SchemaTable& schemas,
                             const OrderingOptions& options = {});
OrderingReport proveOrdering(const Program& program, const PlacedProgram& placed, const SchemaTable& schemas,
                             bool requireMinimal, const OrderingOptions& options = {});

// A report in words, for `wbcheck prove` (and `check`'s broken constraints).
std::string formatOrderingReport(const OrderingReport& report, std::string_view placementName);

}  // namespace wb::proofs
