// tests/proofs_equivalence_test.cpp: translation validation (proofs/equivalence.h) on the
// ExecuTorch before/after pairs, on the hand-made AFTER programs of corpus/validate (each
// refutation confirmed by the oracle), on every wbcheck placement of every hazard program
// (verdicts equal to the oracle's), and on programs only a proof over uninterpreted ops can call
// equivalent.
#include <gtest/gtest.h>

#include "core/reinplace_domain.h"

#include <map>
#include <set>
#include <string>

#include "core/placement.h"
#include "core/text.h"
#include "oracle/oracle.h"
#include "proofs/equivalence.h"
#include "proofs/match.h"
#include "tests/testing.h"

namespace wb::proofs {
namespace {

using oracle::ViewMode;

Program readText(const std::string& text) {
  Result<Program> r = readProgram(text);
  EXPECT_TRUE(r.ok()) << formatAll(r.errors);
  return r.ok() ? *r : Program{};
}

PreparedPair prepared(const Program& before, const Program& after) {
  Result<PreparedPair> pair = prepare(before, after);
  EXPECT_TRUE(pair.ok()) << formatAll(pair.errors);
  return pair.ok() ? std::move(*pair) : PreparedPair{};
}

// The oracle's own runs on the inputs a counterexample names: it must show a difference, the
// one reported.
void expectOracleConfirms(const PreparedPair& pair, const EquivalenceReport& report) {
  const Counterexample* c = report.counterexample();
  ASSERT_NE(c, nullptr);
  ASSERT_TRUE(c->confirmed) << formatReport(report, pair);
  oracle::InputValues values;
  values.byName.insert(c->inputs.begin(), c->inputs.end());
  const oracle::InputSet inputs = c->replayInputSet < 0 ? oracle::InputSet{0, 0, &values} : oracle::InputSet{0, c->replayInputSet};
  oracle::ExecOptions options;
  options.tier = report.tier;
  options.viewMode = c->viewMode;
  options.behaviour = c->replayBehaviour;
  Result<oracle::Executable> before = oracle::compile(pair.before, pair.beforeSchemas, options);
  options.placedProgram = true;
  Result<oracle::Executable> after = oracle::compile(pair.after, pair.afterSchemas, options);
  ASSERT_TRUE(before.ok() && after.ok());
  const std::optional<oracle::Difference> d = oracle::firstDifference(oracle::run(*before, oracle::Semantics::Par, inputs),
                                                                      oracle::run(*after, oracle::Semantics::Placed, inputs));
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->label, c->difference.label);
  EXPECT_EQ(d->element, c->difference.element);
  EXPECT_EQ(d->expected, c->difference.expected);
  EXPECT_EQ(d->actual, c->difference.actual);
  EXPECT_NE(d->expected, d->actual);
}

// --- the hand-made AFTER programs ---

struct Header {
  std::string before, expect;
};

Header headerOf(const std::string& text) {
  Header h;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line) && line.starts_with("#");) {
    if (line.starts_with("# before: ")) h.before = line.substr(10);
    if (line.starts_with("# expect: ")) h.expect = line.substr(10);
  }
  return h;
}

TEST(ValidateCorpus, EveryHandMadeAfterHasTheVerdictItsHeaderSays) {
  const auto dir = testing::corpusDir() / "validate";
  int checked = 0;
  std::set<std::string> refuted;
  for (const auto& file : testing::filesUnder(dir)) {
    if (!file.filename().string().starts_with("after_")) continue;
    SCOPED_TRACE(file.filename().string());
    const Header h = headerOf(testing::readFile(file));
    ASSERT_FALSE(h.before.empty());
    const PreparedPair pair = prepared(testing::loadProgram(dir / h.before), testing::loadProgram(file));
    const EquivalenceReport report = checkEquivalence(pair);
    EXPECT_EQ(toString(report.verdict), h.expect) << formatReport(report, pair);
    if (h.expect == "not-equivalent") {
      expectOracleConfirms(pair, report);
      refuted.insert(file.filename().string());
    }
    ++checked;
  }
  EXPECT_GE(checked, 9);
  // The seven kinds of wrong AFTER the issue names are all there.
  for (const char* name : {"after_copy_too_early.txt", "after_copy_reads_other_copys_target.txt",
                           "after_swapped_pair_without_clone.txt", "after_dropped_copy.txt",
                           "after_copy_into_wrong_buffer.txt", "after_output_renamed_to_wrong_node.txt",
                           "after_user_output_changed.txt"})
    EXPECT_TRUE(refuted.count(name)) << name;
}

TEST(ValidateCorpus, CopyTooEarlyNamesTheBufferAndBothValues) {
  const auto dir = testing::corpusDir() / "validate";
  const PreparedPair pair =
      prepared(testing::loadProgram(dir / "before_two_buffers.txt"), testing::loadProgram(dir / "after_copy_too_early.txt"));
  const EquivalenceReport report = checkEquivalence(pair);
  ASSERT_EQ(report.verdict, EquivalenceVerdict::NotEquivalent);
  const Counterexample* c = report.counterexample();
  ASSERT_NE(c, nullptr);
  // sum_1 reads b after the copy: the user output add_1 differs (placeholders agree: both
  // programs write the same buffers).
  EXPECT_TRUE(c->difference.isOutput);
  EXPECT_EQ(c->difference.label, "output 0 (%add_1)");
  EXPECT_EQ(c->replayedWith, "the solver's model");
  const std::string text = formatReport(report, pair);
  EXPECT_NE(text.find("output 0 (%add_1) element 0: BEFORE 0x"), std::string::npos) << text;
}

// --- ExecuTorch's own before/after printouts ---

TEST(ValidateExecuTorch, MutableBuffersAfterWriteBackIsEquivalent) {
  const Program before =
      testing::loadProgram(testing::corpusDir() / "validate" / "04-et-mutable-buffers-before-writeback-signature.txt");
  const Program after = testing::loadProgram(testing::realGraphsDir() / "05-et-mutable-buffers-after-writeback.txt");
  const PreparedPair pair = prepared(before, after);
  ASSERT_EQ(pair.notes.size(), 1u);  // 05 has no signature: its trailing copies are restored
  EXPECT_EQ(pair.unmatched, (std::vector<std::string>{"copy__default", "copy__default_1"}));
  const EquivalenceReport report = checkEquivalence(pair);
  EXPECT_EQ(report.verdict, EquivalenceVerdict::Equivalent) << formatReport(report, pair);
  EXPECT_EQ(report.tier, oracle::Tier::Storage);  // printed without shapes
}

TEST(ValidateExecuTorch, MutableBuffer2024AfterWriteBackIsEquivalent) {
  const Program before =
      testing::loadProgram(testing::corpusDir() / "validate" / "06-et-mutable-buffer-2024-before-writeback-signature.txt");
  const Program after = testing::loadProgram(testing::realGraphsDir() / "07-et-mutable-buffer-2024-after-writeback.txt");
  const PreparedPair pair = prepared(before, after);
  const EquivalenceReport report = checkEquivalence(pair);
  EXPECT_EQ(report.verdict, EquivalenceVerdict::Equivalent) << formatReport(report, pair);
}

TEST(ValidateExecuTorch, BeforePrintedWithoutSignatureIsAnInputErrorAskingForOne) {
  const Program before = testing::loadProgram(testing::realGraphsDir() / "04-et-mutable-buffers-before-writeback.txt");
  const Program after = testing::loadProgram(testing::realGraphsDir() / "05-et-mutable-buffers-after-writeback.txt");
  Result<PreparedPair> pair = prepare(before, after);
  ASSERT_FALSE(pair.ok());
  EXPECT_NE(formatAll(pair.errors).find("write BEFORE's graph signature in"), std::string::npos) << formatAll(pair.errors);
}

TEST(ValidateExecuTorch, AfterWithTheCopiesSwappedIsRefuted) {
  // 05 with the state buffer's copy reading the wrong value (x instead of its new value).
  const Program before =
      testing::loadProgram(testing::corpusDir() / "validate" / "04-et-mutable-buffers-before-writeback-signature.txt");
  std::string text = testing::readFile(testing::realGraphsDir() / "05-et-mutable-buffers-after-writeback.txt");
  const std::string from = "args = (%b_state, %aten_add_tensor_1)";
  ASSERT_NE(text.find(from), std::string::npos);
  text.replace(text.find(from), from.size(), "args = (%b_state, %x)");
  const PreparedPair pair = prepared(before, readText(text));
  const EquivalenceReport report = checkEquivalence(pair);
  EXPECT_EQ(report.verdict, EquivalenceVerdict::NotEquivalent) << formatReport(report, pair);
  expectOracleConfirms(pair, report);
  EXPECT_EQ(report.counterexample()->difference.label, "b_state");
}

// --- every placement of every hazard program: the oracle's verdicts ---

// The view modes in which a check report has a placement bug.
std::set<ViewMode> oracleBugModes(const oracle::CheckReport& r) {
  std::set<ViewMode> modes;
  for (const oracle::Mismatch& m : r.bugs) modes.insert(m.viewMode);
  return modes;
}

std::set<ViewMode> refutedModes(const EquivalenceReport& r) {
  std::set<ViewMode> modes;
  for (const ModeResult& m : r.modes)
    if (m.verdict == EquivalenceVerdict::NotEquivalent) modes.insert(m.viewMode);
  if (r.modes.size() == 1 && !modes.empty()) modes.insert(ViewMode::AliasViews);  // one query stands for both
  return modes;
}

// Refutations the oracle confirms only in a behaviour draw other than 0 (oracle.h:
// HavocBehaviour): the placement orders a copy before a reader of a schema-less op's result
// that may alias the buffer, or before the op that may write the value (H2, H9).
const std::set<std::pair<std::string, Placement>>& needsSchemalessBehaviour() {
  static const std::set<std::pair<std::string, Placement>> cases = {
      {"h02_reader_through_delegate_alias", Placement::Draft13857},
      {"h09_delegate_may_write_value", Placement::Draft13857},
  };
  return cases;
}

TEST(ValidateHazards, EveryPlacementOfEveryHazardGetsTheOraclesVerdict) {
  int compared = 0, refutations = 0;
  std::set<std::pair<std::string, Placement>> disagreements, inLaterDraws;
  for (const auto& file : testing::filesUnder(testing::corpusDir() / "hazards")) {
    const Program program = testing::loadProgram(file);
    const SchemaTable schemas = schemasFor(program, builtinSchemas());
    for (Placement placement : allPlacements()) {
      SCOPED_TRACE(file.stem().string() + " " + std::string(toString(placement)));
      oracle::CheckOptions options;
      options.placement = placement;
      const oracle::CheckReport check = oracle::check(program, options, schemas);
      const PlacedProgram placed = place(program, placement, schemas);
      if (placed.failure) {
        EXPECT_TRUE(check.placementFailure.has_value());
        continue;
      }
      const PreparedPair pair = prepared(program, placed.program);
      const EquivalenceReport report = checkEquivalence(pair);
      ++compared;
      if (report.verdict == EquivalenceVerdict::Disagreement) {
        disagreements.insert({file.stem().string(), placement});
        EXPECT_TRUE(check.bugs.empty());
        EXPECT_NE(report.modes.front().detail.find("behaviour draws"), std::string::npos) << formatReport(report, pair);
        continue;
      }
      ASSERT_NE(report.verdict, EquivalenceVerdict::Unknown) << formatReport(report, pair);
      EXPECT_EQ(refutedModes(report), oracleBugModes(check)) << formatReport(report, pair) << oracle::formatReport(check);
      if (report.verdict == EquivalenceVerdict::NotEquivalent) {
        ++refutations;
        expectOracleConfirms(pair, report);
        if (report.counterexample()->replayBehaviour != 0) inLaterDraws.insert({file.stem().string(), placement});
      }
    }
  }
  EXPECT_TRUE(disagreements.empty());
  EXPECT_EQ(inLaterDraws, needsSchemalessBehaviour());
  EXPECT_GE(compared, 90);
  EXPECT_GE(refutations, 20);
}

// --- early on every program of the corpus ---

TEST(ValidateCorpus, EarlyIsProvedEquivalentOnEveryFile) {
  // corpus/ holds the real printouts too (corpus/real, mostly without shapes: the storage tier).
  int files = 0, storageTier = 0;
  for (const auto& file : testing::filesUnder(testing::corpusDir())) {
    if (file.string().find("/crashes/") != std::string::npos) continue;
    SCOPED_TRACE(file.string());
    const Program program = testing::loadProgram(file);
    // Outside reinplace's domain the oracle judges no placement; nor does this test.
    if (!annotationsOutsideReinplaceDomain(program).empty()) continue;
    const PlacedProgram placed = place(program, Placement::Early, schemasFor(program, builtinSchemas()));
    ASSERT_FALSE(placed.failure.has_value());
    const PreparedPair pair = prepared(program, placed.program);
    const EquivalenceReport report = checkEquivalence(pair);
    EXPECT_EQ(report.verdict, EquivalenceVerdict::Equivalent) << formatReport(report, pair);
    storageTier += report.tier == oracle::Tier::Storage;
    ++files;
  }
  EXPECT_GT(files, 80);
  EXPECT_GT(storageTier, 5);
}

// --- proofs only uninterpreted functions can give ---

constexpr const char* kIndependent = R"(ExportedProgram:
    class GraphModule(torch.nn.Module):
        def forward(self, b_s: "f32[2, 3]", x: "f32[2, 3]", y: "f32[2, 3]"):
            mul: "f32[2, 3]" = torch.ops.aten.mul.Tensor(x, y)
            relu: "f32[2, 3]" = torch.ops.aten.relu.default(y)
            add: "f32[2, 3]" = torch.ops.aten.add.Tensor(b_s, mul)
            sub: "f32[2, 3]" = torch.ops.aten.sub.Tensor(relu, b_s)
            return (add, sub)

Graph signature:
    # inputs
    b_s: BUFFER target='s' persistent=True
    x: USER_INPUT
    y: USER_INPUT

    # outputs
    add: BUFFER_MUTATION target='s'
    sub: USER_OUTPUT

Range constraints: {}
)";

// The same computation, independent ops in another order, every node renamed, the copy as
// early as it may go.
constexpr const char* kIndependentReordered = R"(ExportedProgram:
    class GraphModule(torch.nn.Module):
        def forward(self, b_s: "f32[2, 3]", x: "f32[2, 3]", y: "f32[2, 3]"):
            r: "f32[2, 3]" = torch.ops.aten.relu.default(y)
            d: "f32[2, 3]" = torch.ops.aten.sub.Tensor(r, b_s)
            m: "f32[2, 3]" = torch.ops.aten.mul.Tensor(x, y)
            a: "f32[2, 3]" = torch.ops.aten.add.Tensor(b_s, m)
            c: "f32[2, 3]" = torch.ops.aten.copy_.default(b_s, a)
            return (c, d)

Graph signature:
    # inputs
    b_s: BUFFER target='s' persistent=True
    x: USER_INPUT
    y: USER_INPUT

    # outputs
    c: BUFFER_MUTATION target='s'
    d: USER_OUTPUT

Range constraints: {}
)";

TEST(ValidateProofs, IndependentOpsInAnotherOrderAreProvedEquivalent) {
  const PreparedPair pair = prepared(readText(kIndependent), readText(kIndependentReordered));
  EXPECT_EQ(pair.matchedNodes, 7u);  // three inputs, four ops
  const EquivalenceReport report = checkEquivalence(pair);
  EXPECT_EQ(report.verdict, EquivalenceVerdict::Equivalent) << formatReport(report, pair);
  ASSERT_EQ(report.modes.size(), 1u);  // no `*_copy` views: one query stands for both modes
  EXPECT_EQ(report.modes[0].comparedElements, 3u * 6 + 6);  // three placeholders, one output
}

TEST(ValidateProofs, TheSameReorderingWithoutShapesIsProvedInTheStorageTier) {
  std::string before = kIndependent, after = kIndependentReordered;
  for (std::string* text : {&before, &after})
    for (std::size_t at; (at = text->find("\"f32[2, 3]\"")) != std::string::npos;) text->replace(at, 11, "\"f32[s0, 3]\"");
  const PreparedPair pair = prepared(readText(before), readText(after));
  const EquivalenceReport report = checkEquivalence(pair);
  EXPECT_EQ(report.tier, oracle::Tier::Storage);
  EXPECT_EQ(report.verdict, EquivalenceVerdict::Equivalent) << formatReport(report, pair);
}

// --- limits: running out is unknown (exit 3), never a crash and never a pass ---

TEST(ValidateLimits, AMemoryLimitBelowWhatZ3HoldsIsUnknownInBothTiers) {
  std::string before = kIndependent, after = kIndependentReordered;
  EquivalenceOptions options;
  options.smt.memoryMb = 1;  // Z3 holds more than 1 MB as soon as it has a context
  const EquivalenceReport shaped = checkEquivalence(prepared(readText(before), readText(after)), options);
  EXPECT_EQ(shaped.tier, oracle::Tier::Element);
  EXPECT_EQ(shaped.verdict, EquivalenceVerdict::Unknown);
  EXPECT_EQ(shaped.exitCode(), 3);
  ASSERT_FALSE(shaped.modes.empty());
  EXPECT_NE(shaped.modes[0].detail.find("memory"), std::string::npos) << shaped.modes[0].detail;
  for (std::string* text : {&before, &after})
    for (std::size_t at; (at = text->find("\"f32[2, 3]\"")) != std::string::npos;) text->replace(at, 11, "\"f32[s0, 3]\"");
  const EquivalenceReport unshaped = checkEquivalence(prepared(readText(before), readText(after)), options);
  EXPECT_EQ(unshaped.tier, oracle::Tier::Storage);
  EXPECT_EQ(unshaped.verdict, EquivalenceVerdict::Unknown);
  EXPECT_EQ(unshaped.exitCode(), 3);
  // The same pair is proved at the default limit (the context the limit retired is replaced).
  EXPECT_EQ(checkEquivalence(prepared(readText(before), readText(after))).verdict, EquivalenceVerdict::Equivalent);
}

// A chain of n ops without a schema, each taking the previous result, without shapes: the
// result of the last may be any of 2^(n+1) - 1 storages (DESIGN §5: each may return its
// argument or a view of it).
std::string schemalessChain(int n) {
  std::string body, prev = "b_x";
  for (int i = 0; i < n; ++i) {
    body += "            m" + std::to_string(i) + " = torch.ops.my_ops.mystery.default(" + prev + ")\n";
    prev = "m" + std::to_string(i);
  }
  return "ExportedProgram:\n    class GraphModule(torch.nn.Module):\n        def forward(self, b_x, x):\n" + body +
         "            add = torch.ops.aten.add.Tensor(b_x, " + prev + ")\n            return (add, " + prev +
         ")\n\nGraph signature:\n    # inputs\n    b_x: BUFFER target='x' persistent=True\n    x: USER_INPUT\n\n"
         "    # outputs\n    add: BUFFER_MUTATION target='x'\n    " + prev + ": USER_OUTPUT\n\nRange constraints: {}\n";
}

TEST(ValidateLimits, ASchemalessChainIsProvedUpToTheStorageTiersBoundAndUnknownBeyond) {
  for (int n : {8, 16}) {
    SCOPED_TRACE(n);
    const Program program = readText(schemalessChain(n));
    const PlacedProgram placed = place(program, Placement::Early, schemasFor(program, builtinSchemas()));
    ASSERT_FALSE(placed.failure.has_value());
    const PreparedPair pair = prepared(program, placed.program);
    const EquivalenceReport report = checkEquivalence(pair);
    EXPECT_EQ(report.tier, oracle::Tier::Storage);
    EXPECT_EQ(report.verdict, n == 8 ? EquivalenceVerdict::Equivalent : EquivalenceVerdict::Unknown)
        << formatReport(report, pair);
  }
}

TEST(ValidateProofs, ACopyBeforeTheReaderIsRefutedInTheStorageTierToo) {
  std::string before = kIndependent, after = kIndependentReordered;
  for (std::string* text : {&before, &after})
    for (std::size_t at; (at = text->find("\"f32[2, 3]\"")) != std::string::npos;) text->replace(at, 11, "\"f32[s0, 3]\"");
  // The copy moved before %d, which reads the buffer's old contents.
  const std::string copy = "            c: \"f32[s0, 3]\" = torch.ops.aten.copy_.default(b_s, a)\n";
  after.erase(after.find(copy), copy.size());
  after.insert(after.find("            d: "), "            m: \"f32[s0, 3]\" = torch.ops.aten.mul.Tensor(x, y)\n"
                                            "            a: \"f32[s0, 3]\" = torch.ops.aten.add.Tensor(b_s, m)\n" + copy);
  for (const char* dup : {"            m: \"f32[s0, 3]\" = torch.ops.aten.mul.Tensor(x, y)\n",
                          "            a: \"f32[s0, 3]\" = torch.ops.aten.add.Tensor(b_s, m)\n"})
    after.erase(after.rfind(dup), std::string(dup).size());
  const PreparedPair pair = prepared(readText(before), readText(after));
  const EquivalenceReport report = checkEquivalence(pair);
  EXPECT_EQ(report.tier, oracle::Tier::Storage);
  ASSERT_EQ(report.verdict, EquivalenceVerdict::NotEquivalent) << formatReport(report, pair);
  expectOracleConfirms(pair, report);
  EXPECT_EQ(report.counterexample()->difference.label, "output 0 (%sub)");
}

// --- data-dependent indices ---

// A KV-cache update at a position the user passes; a reader of row 0 of the old cache.
constexpr const char* kCache = R"(ExportedProgram:
    class GraphModule(torch.nn.Module):
        def forward(self, b_cache: "f32[8, 2]", pos: "i64[1]", v: "f32[1, 2]"):
            index_put: "f32[8, 2]" = torch.ops.aten.index_put.default(b_cache, [pos], v)
            select: "f32[2]" = torch.ops.aten.select.int(b_cache, 0, 0)
            mul: "f32[2]" = torch.ops.aten.mul.Tensor(select, 2)
            return (index_put, mul)

Graph signature:
    # inputs
    b_cache: BUFFER target='cache' persistent=True
    pos: USER_INPUT
    v: USER_INPUT

    # outputs
    index_put: BUFFER_MUTATION target='cache'
    mul: USER_OUTPUT

Range constraints: {}
)";

TEST(ValidateProofs, AWrongCopyThatMattersForOnePositionIsRefutedWithThatPosition) {
  // The copy goes before %select: wrong exactly when pos is 0 modulo 8 (row 0 is overwritten).
  std::string after = kCache;
  after.replace(after.find("            select:"), 0,
                "            copy_: \"f32[8, 2]\" = torch.ops.aten.copy_.default(b_cache, index_put)\n");
  after.replace(after.find("return (index_put, mul)"), 23, "return (copy_, mul)");
  after.replace(after.find("index_put: BUFFER_MUTATION"), 9, "copy_");
  const PreparedPair pair = prepared(readText(kCache), readText(after));
  const EquivalenceReport report = checkEquivalence(pair);
  ASSERT_EQ(report.verdict, EquivalenceVerdict::NotEquivalent) << formatReport(report, pair);
  expectOracleConfirms(pair, report);
  const Counterexample& c = *report.counterexample();
  EXPECT_EQ(c.replayedWith, "the solver's model");
  ASSERT_EQ(c.inputs.count("pos"), 1u);
  EXPECT_EQ(static_cast<std::int64_t>(c.inputs.at("pos")[0]) % 8, 0) << "the model picks a position in row 0";
}

TEST(ValidateProofs, TheCopyAfterTheReaderIsProvedForEveryPosition) {
  std::string after = kCache;
  after.replace(after.find("            return"), 0,
                "            copy_: \"f32[8, 2]\" = torch.ops.aten.copy_.default(b_cache, index_put)\n");
  after.replace(after.find("return (index_put, mul)"), 23, "return (copy_, mul)");
  after.replace(after.find("index_put: BUFFER_MUTATION"), 9, "copy_");
  const PreparedPair pair = prepared(readText(kCache), readText(after));
  const EquivalenceReport report = checkEquivalence(pair);
  EXPECT_EQ(report.verdict, EquivalenceVerdict::Equivalent) << formatReport(report, pair);
}

// --- signatures that do not match ---

TEST(ValidateMatching, DifferentBuffersAreAnInputError) {
  std::string after = kIndependentReordered;
  after.replace(after.find("target='s'"), 10, "target='t'");
  after.replace(after.find("target='s'"), 10, "target='t'");
  Result<PreparedPair> pair = prepare(readText(kIndependent), readText(after));
  ASSERT_FALSE(pair.ok());
  EXPECT_NE(formatAll(pair.errors).find("the inputs differ"), std::string::npos) << formatAll(pair.errors);
}

TEST(ValidateMatching, ADifferentNumberOfUserOutputsIsAnInputError) {
  std::string after = kIndependentReordered;
  after.replace(after.find("return (c, d)"), 13, "return (c, d, m)");
  after.replace(after.find("    d: USER_OUTPUT") + 19, 0, "    m: USER_OUTPUT\n");
  Result<PreparedPair> pair = prepare(readText(kIndependent), readText(after));
  ASSERT_FALSE(pair.ok());
  EXPECT_NE(formatAll(pair.errors).find("visible outputs"), std::string::npos) << formatAll(pair.errors);
}

TEST(ValidateMatching, AfterNodesTakeBeforesNamesAndPlaceholderOrder) {
  const PreparedPair pair = prepared(readText(kIndependent), readText(kIndependentReordered));
  std::vector<std::string> names;
  for (const Node& n : pair.after.graph.nodes) names.push_back(n.name);
  EXPECT_EQ(names, (std::vector<std::string>{"b_s", "x", "y", "relu", "sub", "mul", "add", "c", "output"}));
}

}  // namespace
}  // namespace wb::proofs
