// tests/placement_test.cpp: our placements, `early` and `end` (core/placement.h, DESIGN §6).
//
// - Where `early` and `end` put each copy of the hazard programs, why, and what they skip, is
//   stated in the files of corpus/hazards/ (tests/hazards_test.cpp); here, what the files do
//   not say: the clone that breaks a cycle, the plan behind the placed program.
// - The assertions of upstream's test_mutable_buffers and of the two tests PR #20744 adds
//   (executorch-semantics §8), on the corpus programs that rebuild them.
// - Invariants on every placed corpus program (corpus/**) and on generated programs: the result
//   validates, placeholders stay first, every copy follows its value, the output specs name
//   the copies, no copy is later under `early` than under `end`, placing again changes nothing,
//   and `early` equals the parallel-assignment reference S_par in both view modes (oracle).
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "core/placement.h"
#include "core/rewrite.h"
#include "core/validate.h"
#include "gen/choices.h"
#include "gen/generator.h"
#include "oracle/oracle.h"
#include "tests/testing.h"

namespace wb {
namespace {

using testing::corpusDir;
using testing::filesUnder;
using testing::loadProgram;

SchemaTable tableFor(const Program& p) { return schemasFor(p, builtinSchemas()); }

// The body of a program as one line: node names in order (placeholders and output left out),
// each copy as `name[buffer<-value]`.
std::string layout(const Program& p) {
  std::string out;
  for (const Node& n : p.graph.nodes) {
    if (n.isPlaceholder() || n.isOutput()) continue;
    if (!out.empty()) out += ' ';
    out += n.name;
    if (n.target == "aten::copy_" && n.args.size() == 2)
      out += "[" + testing::nameOf(p.graph, n.args[0]) + "<-" + testing::nameOf(p.graph, n.args[1]) + "]";
  }
  return out;
}

Program loadHazard(const std::string& name) { return loadProgram(corpusDir() / "hazards" / (name + ".txt")); }

TEST(Placement, NamesRoundTrip) {
  EXPECT_EQ(allPlacements().size(), 7u);
  for (Placement p : allPlacements()) EXPECT_EQ(placementFromString(toString(p)), p);
  EXPECT_EQ(toString(Placement::Early), "early");
  EXPECT_EQ(toString(Placement::Pr20744_ff2892d4), "pr20744@ff2892d4");
  EXPECT_EQ(toString(Placement::Pr20744_b6457f4), "pr20744@b6457f4");
  EXPECT_EQ(toString(Placement::Pr20744_82a8901), "pr20744@82a8901");
  EXPECT_FALSE(placementFromString("earliest").has_value());
  EXPECT_FALSE(placementFromString("pr20744@").has_value());
  EXPECT_FALSE(placementFromString("pr20744@0000000").has_value());
}

TEST(Placement, PlainPr20744IsTheLatestVersionAndPrintsIt) {
  EXPECT_EQ(placementFromString("pr20744"), kLatestPr20744);
  EXPECT_EQ(toString(*placementFromString("pr20744")), "pr20744@82a8901");
  // Every version is listed once, oldest first; plain `pr20744` is no placement of its own.
  std::vector<std::string_view> versions;
  for (Placement p : allPlacements())
    if (isPr20744(p)) versions.push_back(toString(p));
  EXPECT_EQ(versions, (std::vector<std::string_view>{"pr20744@ff2892d4", "pr20744@b6457f4", "pr20744@82a8901"}));
  EXPECT_EQ(placementNames(" | "),
            "early | end | upstream | pr20744@ff2892d4 | pr20744@b6457f4 | pr20744@82a8901 | draft13857");
  for (Placement p : allPlacements())
    EXPECT_EQ(isModelOfRealCode(p), p != Placement::Early && p != Placement::End) << toString(p);
}

// The rules print as `place --explain`, `--json` and the corpus files write them.
TEST(Placement, CopyRulesHaveOneNameEach) {
  const std::pair<CopyRule, const char*> names[] = {
      {CopyRule::R0, "R0"},       {CopyRule::R1, "R1"},   {CopyRule::R2, "R2"},       {CopyRule::R3, "R3"},
      {CopyRule::CopyOrder, "C"}, {CopyRule::End, "END"}, {CopyRule::Clone, "CLONE"},
  };
  for (const auto& [rule, name] : names) {
    EXPECT_EQ(toString(rule), name);
    EXPECT_EQ(copyRuleFromString(name), rule) << name;
  }
  EXPECT_FALSE(copyRuleFromString("r2").has_value());
  EXPECT_FALSE(copyRuleFromString("").has_value());
}

TEST(Placement, SchemasForAddsTheProgramsOwn) {
  Program p;
  p.schemas = {"my_ops::scale_all_(Tensor(a!)[] self, Scalar s) -> ()", "not a schema"};
  SchemaTable t = tableFor(p);
  ASSERT_NE(t.find("my_ops::scale_all_"), nullptr);
  EXPECT_NE(t.find("aten::add.Tensor"), nullptr);
}

TEST(Placement, CycleClonesOneValueWhereItIsFinal) {
  Program p = loadHazard("h08b_copy_cycle_swap");
  PlacedProgram placed = place(p, Placement::Early, tableFor(p));
  const Node* clone = placed.program.graph.find("clone");
  ASSERT_NE(clone, nullptr);
  EXPECT_EQ(clone->target, "aten::clone");
  EXPECT_EQ(clone->args, std::vector<Arg>{testing::refTo(placed.program.graph, "b_b")});
  EXPECT_EQ(clone->typeText, "f32[4]");
  ASSERT_EQ(placed.copies.size(), 2u);
  EXPECT_EQ(placed.copies[1].value, "clone");
}

// ---------------------------------------------------------------------------------------------
// executorch-semantics §8: upstream's test and the two tests PR #20744 adds, asserted on early.

std::size_t positionOf(const Program& p, const std::string& name) { return p.graph.indexOf(name).value(); }

std::vector<const Node*> copiesIn(const Program& p) {
  std::vector<const Node*> copies;
  for (const Node& n : p.graph.nodes)
    if (n.target == "aten::copy_") copies.push_back(&n);
  return copies;
}

TEST(UpstreamTests, MutableBuffersGetTwoCopiesAndTheDirectCopyFollowsThePlaceholders) {
  Program p = loadHazard("upstream_test_mutable_buffers");
  EXPECT_TRUE(copiesIn(p).empty());
  PlacedProgram placed = place(p, Placement::Early, tableFor(p));
  std::vector<const Node*> copies = copiesIn(placed.program);
  ASSERT_EQ(copies.size(), 2u);
  // The PR's edited expected graph: copy__default_1 (from the placeholder x) right after the
  // placeholders.
  const Node* direct = placed.program.graph.find("copy__1");
  ASSERT_NE(direct, nullptr);
  EXPECT_EQ(direct->args[1], testing::refTo(placed.program.graph, "x"));
  EXPECT_EQ(positionOf(placed.program, "copy__1"), 3u);
  // Outputs keep their positions: (copy_, copy__1, aten_add_tensor).
  EXPECT_EQ(placed.program.graph.returnedValues(),
            (std::vector<Arg>{testing::refTo(placed.program.graph, "copy_"), testing::refTo(placed.program.graph, "copy__1"),
                              testing::refTo(placed.program.graph, "aten_add_tensor")}));
}

TEST(UpstreamTests, WriteBackIsInsertedEarly) {
  Program p = loadHazard("upstream_pr20744_write_back_is_inserted_early");
  PlacedProgram placed = place(p, Placement::Early, tableFor(p));
  std::vector<const Node*> copies = copiesIn(placed.program);
  ASSERT_EQ(copies.size(), 1u);
  const Program& q = placed.program;
  EXPECT_EQ(positionOf(q, copies[0]->name), copies[0]->args[1].node + 1u);
  EXPECT_LT(positionOf(q, copies[0]->name), q.graph.nodes.size() - 1);  // before the user return
}

TEST(UpstreamTests, WriteBackAfterOldValueReads) {
  Program p = loadHazard("upstream_pr20744_write_back_after_old_value_reads");
  PlacedProgram placed = place(p, Placement::Early, tableFor(p));
  const Program& q = placed.program;
  std::vector<const Node*> copies = copiesIn(q);
  ASSERT_EQ(copies.size(), 1u);
  const std::size_t copyAt = positionOf(q, copies[0]->name);
  int users = 0;
  for (std::size_t i = 0; i < q.graph.nodes.size(); ++i) {
    const Node& n = q.graph.nodes[i];
    if (n.isOutput() || n.target == "aten::copy_") continue;
    bool usesState = false;
    for (const Arg& a : n.args) forEachRef(a, [&](NodeId r) { usesState |= q.graph.nodes[r].name == "b_state"; });
    if (!usesState) continue;
    ++users;
    EXPECT_LT(i, copyAt) << n.name;
  }
  EXPECT_EQ(users, 1);
}

// ---------------------------------------------------------------------------------------------
// Invariants of a placed program.

// Number of nodes of the input program (placeholders and output excluded) before each output's
// copy, by output index.
std::map<std::size_t, std::size_t> originalNodesBeforeCopies(const Program& input, const PlacedProgram& placed) {
  std::set<std::string> original;
  for (const Node& n : input.graph.nodes) original.insert(n.name);
  std::map<std::string, std::size_t> before;
  std::size_t seen = 0;
  for (const Node& n : placed.program.graph.nodes) {
    if (n.target == "aten::copy_" && !original.count(n.name)) before[n.name] = seen;
    if (original.count(n.name)) ++seen;
  }
  std::map<std::size_t, std::size_t> byOutput;
  const auto& outs = placed.program.signature.outputs;
  for (std::size_t i = 0; i < outs.size(); ++i)
    if (auto it = before.find(outs[i].name); it != before.end()) byOutput[i] = it->second;
  return byOutput;
}

void checkInvariants(const Program& p, const SchemaTable& table, const std::string& what) {
  SCOPED_TRACE(what);
  PlacedProgram early = place(p, Placement::Early, table);
  PlacedProgram end = place(p, Placement::End, table);
  for (const PlacedProgram* placed : {&early, &end}) {
    const Program& q = placed->program;
    ASSERT_FALSE(placed->failure.has_value());
    std::vector<Diagnostic> errors = validate(q);
    ASSERT_TRUE(errors.empty()) << formatAll(errors);
    // Placeholders stay first and unchanged.
    std::size_t placeholders = 0;
    while (placeholders < q.graph.nodes.size() && q.graph.nodes[placeholders].isPlaceholder()) ++placeholders;
    std::size_t expected = 0;
    for (const Node& n : p.graph.nodes) expected += n.isPlaceholder();
    EXPECT_EQ(placeholders, expected);
    // Each copy follows its value, and its output spec names it at the same position.
    const std::vector<Arg> returned = q.graph.returnedValues();
    for (const CopyExplanation& e : placed->copies) {
      const std::size_t at = q.graph.indexOf(e.copyNode).value();
      const Node& copy = q.graph.nodes[at];
      EXPECT_EQ(copy.target, "aten::copy_");
      EXPECT_EQ(testing::nameOf(q.graph, copy.args.at(0)), e.buffer);
      EXPECT_EQ(testing::nameOf(q.graph, copy.args.at(1)), e.value);
      EXPECT_GT(at, q.graph.indexOf(e.value).value());
      std::size_t named = 0;
      for (std::size_t i = 0; i < q.signature.outputs.size(); ++i) {
        if (q.signature.outputs[i].name != e.copyNode) continue;
        ++named;
        EXPECT_TRUE(isMutation(q.signature.outputs[i].kind));
        EXPECT_EQ(returned.at(i), Arg::ref(static_cast<NodeId>(at)));
        EXPECT_EQ(q.signature.mutatedInput(q.signature.outputs[i])->name, e.buffer);
      }
      EXPECT_EQ(named, 1u) << e.copyNode;
    }
    // Every mutation output is a copy now, or was skipped.
    std::size_t mutations = 0;
    for (const OutputSpec& s : p.signature.outputs) mutations += isMutation(s.kind);
    EXPECT_EQ(placed->copies.size() + placed->skipped.size(), mutations);
    // Placing a placed program again changes nothing.
    Program again = place(q, placed == &early ? Placement::Early : Placement::End, table).program;
    EXPECT_TRUE(again == q) << "placing again changed the program";
  }
  // Under early, each copy sits right after what binds it: only other inserted nodes (copies,
  // clones) may stand between the binding node and the copy.
  std::set<std::string> original;
  for (const Node& node : p.graph.nodes) original.insert(node.name);
  for (const CopyExplanation& e : early.copies) {
    const Graph& g = early.program.graph;
    const std::size_t at = g.indexOf(e.copyNode).value(), binding = g.indexOf(e.bindingNode).value();
    ASSERT_LT(binding, at) << e.text;
    for (std::size_t i = binding + 1; i < at; ++i)
      EXPECT_FALSE(original.count(g.nodes[i].name)) << e.copyNode << " could go before %" << g.nodes[i].name;
  }
  EXPECT_EQ(early.copies.size(), end.copies.size());
  std::map<std::size_t, std::size_t> e = originalNodesBeforeCopies(p, early), n = originalNodesBeforeCopies(p, end);
  for (const auto& [output, before] : e) EXPECT_LE(before, n.at(output)) << "output " << output;
}

void checkOracle(const Program& p, const SchemaTable& table, std::uint64_t seed, const std::string& what) {
  oracle::CheckOptions options;
  options.placement = Placement::Early;
  options.seed = seed;
  oracle::CheckReport report = oracle::check(p, options, oracle::withOracleSchemas(table));
  EXPECT_NE(report.verdict, oracle::Verdict::PlacementBug) << what << "\n" << oracle::formatReport(report);
}

TEST(Invariants, EveryCorpusProgram) {
  std::vector<std::filesystem::path> files = filesUnder(corpusDir());
  ASSERT_FALSE(files.empty());
  for (const auto& path : files) {
    Result<Program> r = readProgram(testing::readFile(path), path.string());
    // Every file in corpus/ reads and validates (the reader's tests say why when one does not).
    ASSERT_TRUE(r.ok()) << formatAll(r.errors);
    ASSERT_TRUE(validate(*r).empty()) << path;
    const SchemaTable table = tableFor(*r);
    checkInvariants(*r, table, path.string());
    checkOracle(*r, table, 1, path.string());
  }
}

TEST(Invariants, GeneratedPrograms) {
  // Both modes, every hazard family switched on and off by the swarm policy.
  gen::Generator generator;
  const SchemaTable base = builtinSchemas();
  for (std::uint64_t seed = 0; seed < 400; ++seed) {
    gen::RandomChoices choices(seed);
    gen::Generated g = generator.generate(choices);
    const SchemaTable table = schemasFor(g.program, base);
    const std::string what = "generated seed " + std::to_string(seed);
    checkInvariants(g.program, table, what);
    checkOracle(g.program, table, seed, what);
    if (::testing::Test::HasFailure()) break;
  }
}

// place(Program&&) consumes its input (early moves the nodes) and gives exactly what
// place(const Program&) gives: program, explanations, skipped lines, failure.
void expectSameAsConsuming(const Program& p, const SchemaTable& table, const std::string& what) {
  for (Placement placement : allPlacements()) {
    const PlacedProgram byRef = place(p, placement, table);
    Program consumed = p;
    const PlacedProgram byValue = place(std::move(consumed), placement, table);
    EXPECT_TRUE(byValue.program == byRef.program) << what << " " << toString(placement);
    EXPECT_EQ(byValue.skipped, byRef.skipped) << what;
    EXPECT_EQ(byValue.failure, byRef.failure) << what;
    ASSERT_EQ(byValue.copies.size(), byRef.copies.size()) << what;
    for (std::size_t i = 0; i < byRef.copies.size(); ++i) {
      const CopyExplanation& a = byValue.copies[i];
      const CopyExplanation& b = byRef.copies[i];
      EXPECT_EQ(std::tie(a.copyNode, a.buffer, a.value, a.rule, a.bindingNode, a.text),
                std::tie(b.copyNode, b.buffer, b.value, b.rule, b.bindingNode, b.text))
          << what << " " << toString(placement);
    }
  }
}

TEST(Placement, ConsumingOverloadGivesTheSameResult) {
  for (const auto& path : filesUnder(corpusDir())) {
    Result<Program> r = readProgram(testing::readFile(path), path.string());
    ASSERT_TRUE(r.ok()) << formatAll(r.errors);
    expectSameAsConsuming(*r, tableFor(*r), path.string());
  }
  gen::Generator generator;
  const SchemaTable base = builtinSchemas();
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    gen::RandomChoices choices(seed);
    const Program p = generator.generate(choices).program;
    expectSameAsConsuming(p, schemasFor(p, base), "generated seed " + std::to_string(seed));
    if (::testing::Test::HasFailure()) break;
  }
}

// place() with PlaceOptions gives what place(const Program&) gives, except that with keepInput
// a placement that leaves the program as it is says so (keptInput) with an empty program (only
// `early` and `end` do, and only when place() returns the input unchanged), and without
// explain `early` and `end` leave the explanations out.
void expectSameWithOptions(const Program& p, const SchemaTable& table, const std::string& what, int& kept) {
  for (Placement placement : allPlacements())
    for (const bool keepInput : {false, true})
      for (const bool explain : {false, true}) {
        PlaceOptions options;
        options.keepInput = keepInput;
        options.explain = explain;
        const PlacedProgram full = place(p, placement, table);
        const PlacedProgram placed = place(p, placement, table, options);
        const bool ours = placement == Placement::Early || placement == Placement::End;
        const std::string where = what + " " + std::string(toString(placement)) + (keepInput ? " keep" : "") +
                                  (explain ? " explain" : "");
        EXPECT_FALSE(full.keptInput) << where;
        if (placed.keptInput) {
          ++kept;
          EXPECT_TRUE(keepInput && ours) << where;
          EXPECT_TRUE(full.program == p) << where;
          EXPECT_TRUE(placed.program == Program{}) << where;
          EXPECT_TRUE(full.copies.empty()) << where;
        } else {
          EXPECT_TRUE(placed.program == full.program) << where;
          EXPECT_FALSE(keepInput && ours && full.program == p && !full.failure) << where;
        }
        EXPECT_EQ(placed.skipped, full.skipped) << where;
        EXPECT_EQ(placed.failure, full.failure) << where;
        if (explain || !ours) {
          ASSERT_EQ(placed.copies.size(), full.copies.size()) << where;
          for (std::size_t i = 0; i < full.copies.size(); ++i)
            EXPECT_EQ(placed.copies[i].text, full.copies[i].text) << where;
        } else {
          EXPECT_TRUE(placed.copies.empty()) << where;
        }
      }
}

TEST(Placement, OptionsLeaveOutOnlyWhatTheyName) {
  int kept = 0;
  for (const auto& path : filesUnder(corpusDir())) {
    Result<Program> r = readProgram(testing::readFile(path), path.string());
    ASSERT_TRUE(r.ok()) << formatAll(r.errors);
    expectSameWithOptions(*r, tableFor(*r), path.string(), kept);
  }
  gen::Generator generator;
  const SchemaTable base = builtinSchemas();
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    gen::RandomChoices choices(seed);
    const Program p = generator.generate(choices).program;
    expectSameWithOptions(p, schemasFor(p, base), "generated seed " + std::to_string(seed), kept);
    if (::testing::Test::HasFailure()) break;
  }
  EXPECT_GT(kept, 0);  // some programs need no copy
}

// ---------------------------------------------------------------------------------------------
// Copies among themselves, on programs built in C++.

Program twoWritesOfOneTarget() {
  // Both outputs write s (two specs, one target): output order keeps the later write last.
  Program p;
  auto placeholder = [&](const std::string& name, InputSpec spec) {
    Node n;
    n.name = name;
    n.op = NodeOp::Placeholder;
    n.target = name;
    n.typeText = "f32[4]";
    p.graph.nodes.push_back(n);
    p.signature.inputs.push_back(spec);
  };
  placeholder("b_s", {InputKind::Buffer, "b_s", "s", true});
  placeholder("x", {InputKind::UserInput, "x", "", std::nullopt});
  auto call = [&](const std::string& name, const std::string& target, std::vector<Arg> args) {
    Node n;
    n.name = name;
    n.target = target;
    n.args = std::move(args);
    n.typeText = "f32[4]";
    p.graph.nodes.push_back(n);
  };
  call("mul", "aten::mul.Tensor", {testing::ref("x"), Arg::ofInt(3)});
  call("add", "aten::add.Tensor", {testing::ref("x"), Arg::ofInt(1)});
  Node out;
  out.name = "output";
  out.op = NodeOp::Output;
  out.target = "output";
  out.args = {Arg::tuple({testing::ref("add"), testing::ref("mul")})};
  p.graph.nodes.push_back(out);
  testing::resolveRefs(p);
  p.signature.outputs = {{OutputKind::BufferMutation, "add", "s"}, {OutputKind::BufferMutation, "mul", "s"}};
  return p;
}

TEST(Placement, WritesOfOneTargetKeepOutputOrder) {
  Program p = twoWritesOfOneTarget();
  PlacedProgram placed = place(p, Placement::Early, tableFor(p));
  EXPECT_EQ(layout(placed.program), "mul add copy_[b_s<-add] copy__1[b_s<-mul]");
  ASSERT_EQ(placed.copies.size(), 2u);
  EXPECT_EQ(placed.copies[1].rule, CopyRule::CopyOrder);
  EXPECT_EQ(placed.copies[1].bindingNode, "copy_");
}

TEST(Placement, PlanOfACycleHasOneClone) {
  Program p = loadHazard("h08b_copy_cycle_swap");
  const SchemaTable table = tableFor(p);
  EarlyPlan plan = planEarly(p, analyzeAliases(p, table));
  ASSERT_EQ(plan.clones.size(), 1u);
  EXPECT_EQ(p.graph.nodes[plan.clones[0].value].name, "b_b");
  EXPECT_EQ(p.graph.nodes[plan.clones[0].afterNode].name, "x");
  ASSERT_EQ(plan.copies.size(), 2u);
  EXPECT_EQ(plan.copies[0].bindingKind, EarlyPlan::Copy::Binding::Clone);
  EXPECT_FALSE(plan.copies[0].clone.has_value());
  EXPECT_EQ(plan.copies[1].clone, std::optional<std::size_t>{0});
  EXPECT_EQ(plan.copies[1].bindingKind, EarlyPlan::Copy::Binding::Copy);
  EXPECT_EQ(plan.copies[1].binding, 0u);
}

TEST(Placement, PlanMatchesThePlacedProgram) {
  Program p = loadHazard("h12_fallback_granularity");
  const SchemaTable table = tableFor(p);
  EarlyPlan plan = planEarly(p, analyzeAliases(p, table));
  ASSERT_EQ(plan.copies.size(), 3u);
  EXPECT_TRUE(plan.clones.empty());
  EXPECT_EQ(p.graph.nodes[plan.copies[0].afterNode].name, "x");
  EXPECT_EQ(p.graph.nodes[plan.copies[1].afterNode].name, "add");
  EXPECT_EQ(p.graph.nodes[plan.copies[2].afterNode].name, "mul");
  EXPECT_EQ(plan.copies[0].rule, CopyRule::R0);
}

}  // namespace
}  // namespace wb
