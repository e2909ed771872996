// proofs/equivalence.h: translation validation (DESIGN §11, issue 17): is AFTER, run as it
// stands, equivalent to BEFORE under S_par, for all inputs and all interpretations of the ops?
//
// The two programs of a PreparedPair (proofs/match.h) are executed symbolically over one
// Vocabulary (proofs/symbolic.h): BEFORE under S_par (every mutation value read, then every
// target written), AFTER as a placed program (its copy_ nodes run where they stand, no end
// writes). Their observations are what the oracle compares (oracle/oracle.h): every
// placeholder's final storage and every visible output, element by element. One query per
// view mode (`*_copy` views as copies, then as aliases; one only when neither program has a
// `*_copy` view) asks the solver for inputs, op interpretations and behaviours of the
// schema-less ops under which some observed element differs.
//
// What the answers mean:
// - unsat in every mode: EQUIVALENT. For every input, every interpretation of the
//   uninterpreted ops (each op a function of exactly the arguments the oracle computes it
//   from), and every behaviour the contract allows an op without a schema (DESIGN §5), the two
//   programs leave every buffer and input with the same contents and return the same values.
//   This is a proof, not a sample, and it covers the oracle's own interpretation.
// - sat: a candidate counterexample. Its inputs are read from the model and replayed in the
//   oracle (oracle::run, with oracle::InputValues): BEFORE under S_par against AFTER placed,
//   in the view mode of the query. If the oracle finds a difference (on the model's inputs,
//   or on one of `replayInputSets` seeded input sets tried after them), the verdict is NOT
//   EQUIVALENT and the report gives the oracle's diverging buffer or output, element and both
//   values. The solver is asked first for a model in which every schema-less op behaves as
//   the oracle's behaviour draw 0 has it (no writes, fresh results), whose replay is the most
//   direct; the replay then tries the oracle's other draws (oracle.h: HavocBehaviour, the
//   same function the oracle's checks use), in which such ops write and alias their
//   arguments, until one shows the difference.
// - unsat, and yet the oracle, run on `confirmInputSets` seeded input sets as a cross-check of
//   every proof, shows a difference: DISAGREEMENT too (below), with the oracle's difference.
// - sat, but the oracle shows no difference: DISAGREEMENT, a bug of wbcheck itself, reported
//   as such (exit 1), never resolved silently either way. One cause: the refutation needs an
//   op without a schema to write or alias an argument in a way none of the oracle's
//   `replayBehaviours` draws picks; the report then names the behaviours. Any other
//   disagreement means the symbolic semantics and the oracle's differ somewhere, or the
//   counterexample holds only for interpretations of the ops the oracle never uses (say a
//   program that computes x + y where the other computes y + x: equal under the oracle's
//   exact arithmetic, different for an uninterpreted add), which the report cannot tell apart
//   and leaves to a human.
// - the solver gives up (rlimit, wall clock), or the symbolic encoding cannot express the
//   program in the oracle's tier: UNKNOWN, exit 3, never a pass.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/placement.h"
#include "oracle/oracle.h"
#include "proofs/match.h"
#include "proofs/smt.h"

namespace wb::proofs {

struct EquivalenceOptions {
  // Limits per query (rlimit, wall clock) and --smt-dump (proofs/smt.h); each query is dumped
  // as <dumpDir>/<dumpName>-<view mode>-<n>.smt2.
  SmtOptions smt;
  std::string dumpName = "equivalence";
  int replayInputSets = 8;   // seeded input sets tried after the model's inputs
  int confirmInputSets = 2;  // seeded input sets the oracle runs to cross-check a proof
  std::uint64_t replaySeed = 0;
  // Behaviour draws of the ops without a schema the replay tries (oracle.h: HavocBehaviour):
  // draw 0 first, then the others, for a refutation that needs such an op to write or alias.
  int replayBehaviours = 16;
};

enum class EquivalenceVerdict : std::uint8_t { Equivalent, NotEquivalent, Disagreement, Unknown };
std::string_view toString(EquivalenceVerdict verdict);  // "equivalent", "not-equivalent", "disagreement", "unknown"

struct Counterexample {
  oracle::ViewMode viewMode = oracle::ViewMode::CopyViews;
  // The solver's model: the first observed element that differs.
  std::string solverObservation;
  std::size_t solverElement = 0;
  // The model's inputs, by the name the oracle fills them under.
  std::map<std::string, std::vector<std::uint64_t>> inputs;
  // Behaviours of schema-less ops in the model other than the oracle's ("%d writes argument 0").
  std::vector<std::string> behaviours;
  // The oracle's replay: which inputs showed it ("the solver's model", "seed 0, input set 3"),
  // and its first difference (BEFORE's value is `expected`, AFTER's `actual`).
  bool confirmed = false;
  std::string replayedWith;
  int replayInputSet = -1;  // the seeded input set that showed it; -1: the model's inputs
  unsigned replayBehaviour = 0;  // the oracle's behaviour draw that showed it
  oracle::Difference difference;
};

struct ModeResult {
  oracle::ViewMode viewMode = oracle::ViewMode::CopyViews;
  EquivalenceVerdict verdict = EquivalenceVerdict::Equivalent;
  std::string detail;  // why unknown, what disagrees
  std::optional<Counterexample> counterexample;
  double solverMs = 0;
  std::size_t comparedElements = 0;   // element pairs compared
  std::size_t differentTerms = 0;     // of them, pairs whose terms are not identical
};

struct EquivalenceReport {
  EquivalenceVerdict verdict = EquivalenceVerdict::Equivalent;
  oracle::Tier tier = oracle::Tier::Element;
  std::string tierReason;  // why the storage tier
  std::vector<ModeResult> modes;
  std::vector<std::string> dumped;  // .smt2 files written
  double totalMs = 0;

  int exitCode() const;  // 0 equivalent, 1 not equivalent or disagreement, 3 unknown
  const Counterexample* counterexample() const;  // the first mode's that has one
};

EquivalenceReport checkEquivalence(const PreparedPair& pair, const EquivalenceOptions& options = {});

// Text for people: the verdict, and for a refutation the observation, element and both values
// the oracle found, the inputs that show it, and the behaviours of schema-less ops it needs.
std::string formatReport(const EquivalenceReport& report, const PreparedPair& pair);

// The equivalence proof of a placement's output, whoever placed it (one of core's placements,
// or an external pass: passcmd/): `placed.program` against `program` under S_par. A placement
// that failed, or a placed program that does not pair with the program (proofs/match.h: its
// inputs or outputs are not the program's), is refuted without a query, with the reason.
struct PlacedEquivalence {
  Verdict verdict = Verdict::Proved;
  std::string reason;  // why refuted without a query (empty when a query ran)
  std::optional<PreparedPair> pair;
  std::optional<EquivalenceReport> report;
};
PlacedEquivalence provePlacedEquivalent(const Program& program, const PlacedProgram& placed,
                                        const EquivalenceOptions& options = {});
// The report's text (formatReport), or the reason and the verdict.
std::string formatPlacedEquivalence(const PlacedEquivalence& proof);

}  // namespace wb::proofs
