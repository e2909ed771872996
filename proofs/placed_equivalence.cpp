// proofs/placed_equivalence.cpp: the equivalence proof of a placement's output (equivalence.h),
// shared by `wbcheck prove` (a placement or --pass-cmd) and `wbcheck check --validate`.
#include "proofs/equivalence.h"

namespace wb::proofs {

PlacedEquivalence provePlacedEquivalent(const Program& program, const PlacedProgram& placed,
                                        const EquivalenceOptions& options) {
  PlacedEquivalence proof;
  if (placed.failure) {
    proof.verdict = Verdict::Refuted;
    proof.reason = "the placement failed: " + *placed.failure;
    return proof;
  }
  Result<PreparedPair> pair = prepare(program, placed.program, "the program", "the placed program");
  if (!pair) {
    proof.verdict = Verdict::Refuted;
    proof.reason = "the placed program does not pair with the program: " + formatAll(pair.errors);
    return proof;
  }
  proof.report = checkEquivalence(*pair, options);
  proof.pair = std::move(*pair);
  switch (proof.report->verdict) {
    case EquivalenceVerdict::Equivalent: proof.verdict = Verdict::Proved; break;
    case EquivalenceVerdict::Unknown: proof.verdict = Verdict::Unknown; break;
    case EquivalenceVerdict::NotEquivalent:
    case EquivalenceVerdict::Disagreement: proof.verdict = Verdict::Refuted; break;
  }
  return proof;
}

std::string formatPlacedEquivalence(const PlacedEquivalence& proof) {
  if (proof.report) return formatReport(*proof.report, *proof.pair);
  return proof.reason + "\nverdict: " + std::string(toString(proof.verdict)) + "\n";
}

}  // namespace wb::proofs
