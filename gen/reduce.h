// gen/reduce.h: the graph reducer behind `wbcheck shrink` (DESIGN §9, verification-anchors §8).
//
// Given a valid program and an interestingness predicate (e.g. "the oracle still reports
// placement P != S_par on the same target"; the campaign's, for any P including `early`, is
// campaign/campaign.h's reproducesFinding), applies validity-preserving steps until none
// applies any more (a fixpoint), in the manner of C-Reduce and PyTorch's fx_minifier:
//   drop-output      drop one returned value with its output spec (mutation specs included)
//   truncate-tail    drop the last nodes (and the outputs that return them)
//   remove-node      remove one node nothing uses (placeholders with their input spec)
//   bypass           replace every use of a node by one of its arguments of the same type
//   to-input         replace a node by a new USER_INPUT placeholder of the same type and name
//   simplify-op      replace an op by a simpler one of the same signature (mul -> add, ...)
//   drop-meta        remove a node's `# meta` annotations
//   shrink-constant  move an integer argument towards 0
//   rename           give every node the short FX name of its target (add, add_1, ...)
// Every candidate must pass validate() and the predicate to be kept, so the result is valid
// and interesting, and 1-minimal for these steps: no single step applied to it is both.
// Deterministic: the same input and predicate give the same result.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/ir.h"

namespace wb::gen {

using Interestingness = std::function<bool(const Program&)>;

struct ReduceOptions {
  std::size_t maxTests = 200'000;  // predicate calls; stops early (then not 1-minimal)
};

struct ReduceResult {
  Program program;
  std::size_t tests = 0;         // predicate calls
  std::size_t accepted = 0;      // steps kept
  bool fixpoint = false;         // false if maxTests stopped it or the input was not interesting
  std::vector<std::string> log;  // one line per kept step: "drop-output 3", ...
};

ReduceResult reduce(const Program& program, const Interestingness& interesting, const ReduceOptions& options = {});

// Every single-step candidate of `program` that is valid (validate() holds), in the order the
// reducer tries them. For tests of 1-minimality and for tools; materialises all candidates.
std::vector<Program> reductionCandidates(const Program& program);

// The steps one at a time, for a mutator that must shrink programs as well as grow them
// (fuzz/mutator.cpp): step s (0 <= s < kReductionSteps, in the order listed above) has
// reductionCandidateCount(program, s) candidates; reductionCandidate(program, s, i) is the i-th,
// or nullopt where it does not apply. Neither validates the candidate.
inline constexpr std::size_t kReductionSteps = 9;
std::size_t reductionCandidateCount(const Program& program, std::size_t step);
std::optional<Program> reductionCandidate(const Program& program, std::size_t step, std::size_t i);

}  // namespace wb::gen
