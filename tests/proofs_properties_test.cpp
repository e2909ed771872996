// tests/proofs_properties_test.cpp: translation validation on generated programs, RapidCheck
// in GoogleTest.
//
// Properties:
// - `early` is proved equivalent to S_par on every generated program (no unknown, no
//   refutation, no disagreement with the oracle);
// - for `upstream`, `pr20744` and `draft13857`, the proof and the oracle agree: every
//   refutation replays in the oracle (checkEquivalence confirms it there, and the oracle's own
//   check finds a bug in that view mode), and every divergence the oracle's check finds is
//   refuted. The one allowed difference: a refutation that needs an op without a schema to
//   write or alias an argument, which the oracle does not model yet (issue 20); its check then
//   finds nothing.
//
// Determinism: main() sets RC_PARAMS to a fixed seed and bounded case counts unless the caller
// set it ("seed=7 max_success=2000" searches longer or elsewhere).
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cstdlib>
#include <set>

#include "core/placement.h"
#include "gen/generator.h"
#include "gen/rapidcheck_choices.h"
#include "oracle/oracle.h"
#include "proofs/equivalence.h"

namespace wb::proofs {
namespace {

gen::GenOptions propertyOptions() {
  gen::GenOptions options;
  options.maxNodes = 12;
  options.maxShapeElements = 12;
  return options;
}

const SchemaTable& builtins() {
  static const SchemaTable table = builtinSchemas();
  return table;
}

std::set<oracle::ViewMode> refutedModes(const EquivalenceReport& r) {
  std::set<oracle::ViewMode> modes;
  for (const ModeResult& m : r.modes)
    if (m.verdict == EquivalenceVerdict::NotEquivalent) modes.insert(m.viewMode);
  if (r.modes.size() == 1 && !modes.empty()) modes.insert(oracle::ViewMode::AliasViews);
  return modes;
}

RC_GTEST_PROP(ValidateProperty, EarlyIsProvedEquivalent, ()) {
  gen::RapidCheckChoices choices;
  const Program program = gen::generateProgram(choices, propertyOptions());
  const SchemaTable schemas = schemasFor(program, builtins());
  const PlacedProgram placed = place(program, Placement::Early, schemas);
  RC_ASSERT(!placed.failure.has_value());
  Result<PreparedPair> pair = prepare(program, placed.program);
  RC_ASSERT(pair.ok());
  const EquivalenceReport report = checkEquivalence(*pair);
  if (report.verdict != EquivalenceVerdict::Equivalent) RC_FAIL(formatReport(report, *pair));
}

void expectAgreement(Placement placement) {
  gen::RapidCheckChoices choices;
  const Program program = gen::generateProgram(choices, propertyOptions());
  const SchemaTable schemas = schemasFor(program, builtins());
  oracle::CheckOptions options;
  options.placement = placement;
  const oracle::CheckReport check = oracle::check(program, options, schemas);
  const PlacedProgram placed = place(program, placement, schemas);
  if (placed.failure) {
    RC_ASSERT(check.placementFailure.has_value());
    return;
  }
  Result<PreparedPair> pair = prepare(program, placed.program);
  if (!pair.ok()) {
    // Only the models of real code may print an AFTER whose signature does not pair with
    // BEFORE's (B2: copies first, specs renamed by position); the oracle then finds it too.
    RC_ASSERT(isModelOfRealCode(placement));
    RC_ASSERT(!check.bugs.empty() || check.placementFailure.has_value());
    return;
  }
  const EquivalenceReport report = checkEquivalence(*pair);
  RC_TAG(std::string(toString(report.verdict)));
  if (report.verdict == EquivalenceVerdict::Unknown) RC_FAIL(formatReport(report, *pair));
  if (report.verdict == EquivalenceVerdict::Disagreement) {
    // Only the known gap of the oracle (issue 20): the oracle's check sees no bug.
    if (report.modes.front().detail.find("issue 20") == std::string::npos || !check.bugs.empty())
      RC_FAIL(formatReport(report, *pair) + oracle::formatReport(check));
    return;
  }
  std::set<oracle::ViewMode> oracleModes;
  for (const oracle::Mismatch& m : check.bugs) oracleModes.insert(m.viewMode);
  if (refutedModes(report) != oracleModes) RC_FAIL(formatReport(report, *pair) + oracle::formatReport(check));
  if (const Counterexample* c = report.counterexample()) RC_ASSERT(c->confirmed);
}

RC_GTEST_PROP(ValidateProperty, UpstreamRefutationsAndOracleDivergencesAgree, ()) { expectAgreement(Placement::Upstream); }
RC_GTEST_PROP(ValidateProperty, Pr20744Ff2892d4RefutationsAndOracleDivergencesAgree, ()) {
  expectAgreement(Placement::Pr20744_ff2892d4);
}
RC_GTEST_PROP(ValidateProperty, Pr20744Latest82a8901RefutationsAndOracleDivergencesAgree, ()) {
  expectAgreement(Placement::Pr20744_82a8901);
}
RC_GTEST_PROP(ValidateProperty, Draft13857RefutationsAndOracleDivergencesAgree, ()) {
  expectAgreement(Placement::Draft13857);
}

}  // namespace
}  // namespace wb::proofs

int main(int argc, char** argv) {
  ::setenv("RC_PARAMS", "seed=17 max_success=100 max_size=100", /*overwrite=*/0);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
