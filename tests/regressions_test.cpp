// tests/regressions_test.cpp: replays every shrunk counterexample in corpus/regressions/.
// Each file's header (campaign/campaign.h formatArtifact) names the placement, the verdict, the view
// modes and the seed; the oracle must reproduce that verdict for that placement, and `early`
// must hold on the same program (a regression of either fails here).
#include <gtest/gtest.h>

#include "campaign/campaign.h"
#include "core/text.h"
#include "core/validate.h"
#include "tests/testing.h"

namespace wb {
namespace {

TEST(Regressions, EveryShrunkCounterexampleReplays) {
  const SchemaTable builtins = builtinSchemas();
  const auto files = wb::testing::filesUnder(wb::testing::corpusDir() / "regressions");
  EXPECT_FALSE(files.empty()) << "corpus/regressions/ is empty";
  for (const auto& path : files) {
    // See CrashInputsRunToAVerdict, FalseAlarmsStayQuiet and MutantWitnessesHoldUnderEarly.
    const auto dir = path.parent_path().filename();
    if (dir == "crashes" || dir == "false-alarms" || dir == "mutants") continue;
    SCOPED_TRACE(path.string());
    const std::string text = wb::testing::readFile(path);
    const campaign::ArtifactHeader header = campaign::parseArtifactHeader(text);
    const std::optional<Placement> placement = placementFromString(header.placement);
    ASSERT_TRUE(placement) << "no `# placement:` header";
    ASSERT_TRUE(header.seed) << "no `# seed:` header";
    ASSERT_FALSE(header.verdict.empty()) << "no `# verdict:` header";
    const Program program = wb::testing::loadProgram(path);
    const SchemaTable schemas = schemasFor(program, builtins);

    oracle::CheckOptions options;
    options.placement = *placement;
    options.seed = *header.seed;
    const oracle::CheckReport report = oracle::check(program, options, schemas);
    const std::optional<campaign::FindingKey> key = campaign::classifyFinding(program, report, schemas);
    ASSERT_TRUE(key) << "the placement holds now:\n" << oracle::formatReport(report);
    EXPECT_EQ(key->verdict, header.verdict);
    EXPECT_EQ(oracle::toString(key->viewModes), header.viewModes);
    EXPECT_EQ(key->target, header.target);
    EXPECT_EQ(campaign::hazardLabel(key->hazard), header.hazard);

    options.placement = Placement::Early;
    const oracle::CheckReport early = oracle::check(program, options, schemas);
    EXPECT_EQ(early.verdict, oracle::Verdict::Holds) << oracle::formatReport(early);
  }
}

// Checks every program under corpus/regressions/<dir> with every placement, from `base`'s seed
// and input sets, and hands each report to `expect`.
template <typename Expect>
void checkEveryPlacement(const char* dir, const oracle::CheckOptions& base, Expect expect) {
  const SchemaTable builtins = builtinSchemas();
  const auto files = wb::testing::filesUnder(wb::testing::corpusDir() / "regressions" / dir);
  EXPECT_FALSE(files.empty()) << "corpus/regressions/" << dir << " is empty";
  for (const auto& path : files) {
    SCOPED_TRACE(path.string());
    const Program program = wb::testing::loadProgram(path);
    const SchemaTable schemas = schemasFor(program, builtins);
    for (Placement placement : allPlacements()) {
      oracle::CheckOptions options = base;
      options.placement = placement;
      SCOPED_TRACE(toString(placement));
      expect(placement, oracle::check(program, options, schemas));
    }
  }
}

// Programs that tell a mutant of early apart (bench/mutants/, bench/mutation.sh) where no other
// corpus program did: early must hold on each, in the oracle and the ordering proof
// (OracleCorpus.EarlyAgreesWithSParOnEveryFile and ProofsOrdering.EarlyIsProvedMinimalOnEveryCorpusFile
// read them too, which is what kills the mutant in the fast tests). Each names its mutant.
TEST(Regressions, MutantWitnessesHoldUnderEarly) {
  const SchemaTable builtins = builtinSchemas();
  const auto files = wb::testing::filesUnder(wb::testing::corpusDir() / "regressions" / "mutants");
  EXPECT_FALSE(files.empty()) << "corpus/regressions/mutants/ is empty";
  for (const auto& path : files) {
    SCOPED_TRACE(path.string());
    const std::string text = wb::testing::readFile(path);
    EXPECT_NE(text.find("# mutant: m"), std::string::npos) << "no `# mutant:` header";
    const Program program = wb::testing::loadProgram(path);
    const oracle::CheckReport early = oracle::check(program, {}, schemasFor(program, builtins));
    EXPECT_EQ(early.verdict, oracle::Verdict::Holds) << oracle::formatReport(early);
  }
}

// Inputs that once crashed wbcheck: every placement and the oracle must now run to a verdict,
// and early must hold.
TEST(Regressions, CrashInputsRunToAVerdict) {
  checkEveryPlacement("crashes", {}, [](Placement placement, const oracle::CheckReport& report) {
    EXPECT_NE(report.verdict, oracle::Verdict::Error) << oracle::formatReport(report);
    if (placement == Placement::Early) {
      EXPECT_EQ(report.verdict, oracle::Verdict::Holds) << oracle::formatReport(report);
    }
  });
}

// Inputs on which `early` or `end` once produced a program that does not validate (a copy_
// annotated with its value's shape, not its target's): ours must place every crash input into
// a program validate() accepts. The models may not (upstream renames output specs by position).
TEST(Regressions, CrashInputsPlaceIntoValidPrograms) {
  const SchemaTable builtins = builtinSchemas();
  for (const auto& path : wb::testing::filesUnder(wb::testing::corpusDir() / "regressions" / "crashes")) {
    SCOPED_TRACE(path.string());
    const Program program = wb::testing::loadProgram(path);
    const SchemaTable schemas = schemasFor(program, builtins);
    for (Placement placement : {Placement::Early, Placement::End}) {
      SCOPED_TRACE(toString(placement));
      const PlacedProgram placed = place(program, placement, schemas);
      ASSERT_FALSE(placed.failure) << *placed.failure;
      EXPECT_EQ(formatAll(validate(placed.program)), "");
    }
  }
}

// Programs on which the oracle once reported a bug that was its own: every placement must hold
// now, with the seed and input sets of the report (in both tiers the program reaches).
TEST(Regressions, FalseAlarmsStayQuiet) {
  oracle::CheckOptions reported;
  reported.seed = 0;
  reported.inputs = 2;
  checkEveryPlacement("false-alarms", reported, [](Placement, const oracle::CheckReport& report) {
    EXPECT_EQ(report.verdict, oracle::Verdict::Holds) << oracle::formatReport(report);
  });
}

// Inputs that validate() once accepted and a consumer then failed on (corpus/regressions/rejected,
// extension .rejected so that the tests reading every corpus program leave them out): each reads,
// and validate() rejects it with the message its `# expect error:` line gives.
TEST(Regressions, RejectedInputsAreInputErrors) {
  const auto files = wb::testing::filesUnder(wb::testing::corpusDir() / "regressions" / "rejected", {".rejected"});
  EXPECT_FALSE(files.empty()) << "corpus/regressions/rejected/ is empty";
  for (const auto& path : files) {
    SCOPED_TRACE(path.string());
    const std::string text = wb::testing::readFile(path);
    const std::string tag = "# expect error: ";
    const std::size_t at = text.find(tag);
    ASSERT_NE(at, std::string::npos) << "no `# expect error:` line";
    const std::string expected = text.substr(at + tag.size(), text.find('\n', at) - at - tag.size());
    Result<Program> read = readProgram(text, path.string());
    ASSERT_TRUE(read.ok()) << formatAll(read.errors);
    const std::string errors = formatAll(validate(*read));
    EXPECT_NE(errors.find(expected), std::string::npos) << errors;
  }
}

}  // namespace
}  // namespace wb
