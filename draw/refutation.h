// draw/refutation.h: what a picture marks when a placement is refuted (issue 22): the offending
// copies, the dependences they break, the write-backs they lose, the outputs whose layout they
// change, and what the oracle saw diverge.
//
// Two sources fill it. refute() reads the oracle's check (what diverged) and derives the broken
// dependences from `early`'s explanation of the same write-back: a refuted copy that sits
// before early's binding node, or before the copy early's ordering of copies says must come
// first. useProofViolations() then puts the Z3 ordering proof's violated constraints
// (proofs/ordering.h) in their place when the proof decided: the proof derives every
// dependence afresh from the storage semantics, names each in graph words, and sees
// violations whose values happen to coincide in the oracle's runs.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "core/ir.h"
#include "core/placement.h"
#include "core/schema.h"
#include "oracle/oracle.h"
#include "proofs/ordering.h"

namespace wb::draw {

// A dependence the placed program breaks: node `first` must run before the copy `offending`,
// and the placement put the copy before it. Both are node names of the placed program.
struct BrokenDependence {
  std::string first;
  std::string offending;
  std::string reason;  // "must follow %sum_1, which reads b_s through %view_copy (early, R2)"
};

// A write-back early makes and the placement does not (bug B1 and its kin).
struct MissingWriteBack {
  std::string buffer;  // the placeholder early writes back
  std::string value;   // the value early copies into it
  // The node of the placed program after which early puts the copy ("" when that node is a
  // placeholder, is not in the placed program, or is a copy).
  std::string after;
  std::string reason;  // early's explanation, with its rule
  // The output of the placed program that names this write-back (its mutation spec), if any.
  std::optional<std::size_t> outputPosition;
};

// An output whose meaning the placement changed (bug B2: upstream's positional renaming).
struct ChangedOutput {
  std::size_t position = 0;  // in the placed program's output tuple
  std::string reason;        // "user output 0 returns %copy_, not %b_count"
};

// What the oracle saw differ: one per observation that differs, in the view modes it differs in
// (the oracle reports at most one mismatch per view mode).
struct Divergence {
  oracle::ViewModeSet viewModes = oracle::ViewModeSet::None;
  bool isOutput = false;
  std::string label;                   // the oracle's name of the observation
  std::string placeholder;             // the diverging placeholder (when !isOutput)
  std::optional<std::size_t> position; // the diverging output's position in the output tuple
  std::string text;                    // "user output %sum_1 (position 1) differs [alias-views]"
  std::string firstDivergingNode;      // "" if no node's result differs (the first mismatch's)
};

struct Refutation {
  std::optional<std::string> placementFailure;  // the placement itself failed
  std::vector<std::string> offendingCopies;     // copy nodes of the placed program, in order
  std::vector<BrokenDependence> broken;
  std::vector<MissingWriteBack> missing;
  std::vector<ChangedOutput> changedOutputs;
  std::vector<Divergence> divergences;

  // The broken dependences are the ordering proof's (useProofViolations), not early's.
  bool fromProof = false;

  bool refuted() const { return placementFailure.has_value() || !divergences.empty() || !broken.empty(); }
};

// The marks of `placed` (a placement of `input`) refuted by `report` (the oracle's check of
// `input` with that placement), derived from `early` (place(input, Early)). `schemas` is the
// table `placed` was made with. With a report that holds, the result is empty.
Refutation refute(const Program& input, const PlacedProgram& placed, const PlacedProgram& early,
                  const oracle::CheckReport& report, const SchemaTable& schemas);

// Replaces r's broken dependences and offending copies with the live violations of `proof`, the
// ordering proof of the same placed program (proofs::proveOrdering of `input` and it), when
// the proof decided; an undecided proof (a solver limit) leaves r as it is. A violation whose
// inserted node must precede another inserted node marks that other node as the offending one
// (it runs too early: it must follow the first).
void useProofViolations(const proofs::OrderingReport& proof, const Program& input, Refutation& r);

}  // namespace wb::draw
