// tests/oracle_behaviours_test.cpp: the behaviour draws of the ops without a schema
// (oracle.h: HavocBehaviour): draw 0 is the oracle's first behaviour (reads only), the other
// draws cover the contract's space, every semantics of one check gives a node the same
// behaviour, F stays at draw 0, and a placement that treats such ops as pure
// (tests/broken_early.h) fails on the delegate hazards H2 and H9 in both tiers while `early`
// holds.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "core/placement.h"
#include "oracle/oracle.h"
#include "tests/broken_early.h"
#include "tests/testing.h"

namespace wb::oracle {
namespace {

Program hazard(const std::string& name) { return testing::loadProgram(testing::corpusDir() / "hazards" / name); }

const char* const kDelegateHazards[] = {"h02_reader_through_delegate_alias.txt", "h09_delegate_may_write_value.txt"};

CheckReport checkWith(const Program& p, const PlaceFunction& place, int behaviours) {
  CheckOptions o;
  o.placement = Placement::Early;
  o.placeWith = place;
  o.behaviours = behaviours;
  return check(p, o, schemasFor(p, builtinSchemas()));
}

TEST(OracleBehaviours, DrawZeroReadsOnlyAndTheOthersCoverTheContract) {
  const std::size_t arguments = 3;
  std::set<std::string> seen;
  for (unsigned draw = 0; draw < 200; ++draw) {
    const HavocBehaviour b(draw, "executorch_call_delegate");
    const HavocBehaviour again(draw, "executorch_call_delegate");
    std::string what;
    int writes = 0;
    for (std::size_t k = 0; k < arguments; ++k) {
      EXPECT_EQ(b.writes(k, arguments), again.writes(k, arguments));
      if (!b.writes(k, arguments)) continue;
      ++writes;
      seen.insert(b.writesWholeStorage(k) ? "whole storage" : "through the view");
    }
    EXPECT_FALSE(b.writes(arguments, arguments));  // no such argument
    seen.insert("writes " + std::to_string(writes));
    const std::optional<std::size_t> view = b.resultViewOf(0, arguments);
    EXPECT_EQ(view, again.resultViewOf(0, arguments));
    if (view) {
      EXPECT_LT(*view, arguments);
    }
    seen.insert(view ? "view of " + std::to_string(*view) : "fresh");
    if (draw == 0) {
      EXPECT_TRUE(b.readsOnly());
      EXPECT_EQ(writes, 0);
      EXPECT_FALSE(view);
    }
  }
  for (const char* expected : {"writes 0", "writes 1", "writes 2", "writes 3", "whole storage", "through the view",
                               "fresh", "view of 0", "view of 1", "view of 2"})
    EXPECT_TRUE(seen.count(expected)) << expected;
  // The choice depends on the node's name: two nodes of one draw may differ.
  int differ = 0;
  for (unsigned draw = 1; draw < 50; ++draw)
    differ += HavocBehaviour(draw, "a").resultViewOf(0, 2) != HavocBehaviour(draw, "b").resultViewOf(0, 2);
  EXPECT_GT(differ, 0);
}

// `early` holds on the delegate hazards in every draw; the pure-treating variant holds in draw
// 0 (it cannot see what the delegates do) and fails in a later one, which its report names.
TEST(OracleBehaviours, PureTreatingPlacementFailsOnDelegateHazards) {
  for (const char* name : kDelegateHazards) {
    const Program p = hazard(name);
    EXPECT_EQ(checkWith(p, {}, 16).verdict, Verdict::Holds) << name;
    EXPECT_EQ(checkWith(p, testing::earlyTreatingSchemalessAsPure, 1).verdict, Verdict::Holds) << name;
    const CheckReport report = checkWith(p, testing::earlyTreatingSchemalessAsPure, kDefaultBehaviours);
    ASSERT_EQ(report.verdict, Verdict::PlacementBug) << name << "\n" << formatReport(report);
    ASSERT_FALSE(report.bugs.empty());
    EXPECT_GT(report.bugs.front().behaviour, 0u);
    EXPECT_NE(formatReport(report).find(", behaviour draw " + std::to_string(report.bugs.front().behaviour) + "]"),
              std::string::npos);
    EXPECT_TRUE(report.findings.empty()) << formatReport(report);  // draw 0 alone finds about the program
  }
}

// A custom op that reads buffer s before the value's copy could go, with or without a declared
// schema (`Schemas:`) saying it is pure.
Program customReaderOfBuffer(bool declared) {
  std::string text = R"(ExportedProgram:
    class GraphModule(torch.nn.Module):
        def forward(self, b_s: "f32[4]", x: "f32[4]"):
            mul: "f32[4]" = torch.ops.aten.mul.Tensor(x, 2)
            foo: "f32[4]" = torch.ops.my_ops.foo.default(b_s)
            add: "f32[4]" = torch.ops.aten.add.Tensor(foo, 1)
            return (mul, add)

Graph signature:
    # inputs
    b_s: BUFFER target='s' persistent=True
    x: USER_INPUT

    # outputs
    mul: BUFFER_MUTATION target='s'
    add: USER_OUTPUT
)";
  if (declared) text += "\nSchemas:\n    my_ops::foo(Tensor x) -> Tensor\n";
  Result<Program> p = readProgram(text, declared ? "declared.txt" : "undeclared.txt");
  EXPECT_TRUE(p.ok()) << formatAll(p.errors);
  return p.ok() ? *p.value : Program{};
}

// A declared schema is honoured exactly: the oracle draws no behaviour for that op. `early`
// trusts the declaration (its copy goes right after %foo, the last reader of s) and holds in
// every draw. The same placed program judged with %foo undeclared fails in some draw (%foo's
// result a view of s, say), so a behaviour drawn for the declared op would have shown.
TEST(OracleBehaviours, ADeclaredSchemaGetsNoDrawnBehaviour) {
  const Program declared = customReaderOfBuffer(true);
  const Program undeclared = customReaderOfBuffer(false);
  const PlacedProgram trusting = place(declared, Placement::Early, schemasFor(declared, builtinSchemas()));
  ASSERT_FALSE(trusting.failure);
  EXPECT_EQ(checkWith(declared, {}, 16).verdict, Verdict::Holds) << formatReport(checkWith(declared, {}, 16));
  const PlaceFunction asIfDeclared = [&](const Program&, const SchemaTable&) {
    PlacedProgram same = trusting;
    same.program.schemas = undeclared.schemas;
    return same;
  };
  EXPECT_EQ(checkWith(undeclared, {}, 16).verdict, Verdict::Holds);
  EXPECT_EQ(checkWith(undeclared, asIfDeclared, 1).verdict, Verdict::Holds);  // draw 0 cannot tell
  EXPECT_EQ(checkWith(undeclared, asIfDeclared, 16).verdict, Verdict::PlacementBug);
}

TEST(OracleBehaviours, ReplayLineNamesBehavioursOtherThanTheDefault) {
  const Program p = hazard(kDelegateHazards[0]);
  const CheckReport report = checkWith(p, testing::earlyTreatingSchemalessAsPure, 8);
  ASSERT_FALSE(report.bugs.empty());
  EXPECT_NE(report.bugs.front().replay.find(" --behaviours 8"), std::string::npos) << report.bugs.front().replay;
  const CheckReport byDefault = checkWith(p, testing::earlyTreatingSchemalessAsPure, kDefaultBehaviours);
  ASSERT_FALSE(byDefault.bugs.empty());
  EXPECT_EQ(byDefault.bugs.front().replay.find("--behaviours"), std::string::npos) << byDefault.bugs.front().replay;
}

// Both tiers, through compile and run: the pure-treating variant's placed program differs from
// S_par in some draw, early's in none, and F runs draw 0 whatever the draw asked.
TEST(OracleBehaviours, BothTiersDrawAndFStaysAtDrawZero) {
  for (const char* name : kDelegateHazards) {
    const Program p = hazard(name);
    const SchemaTable schemas = schemasFor(p, builtinSchemas());
    const PlacedProgram broken = testing::earlyTreatingSchemalessAsPure(p, schemas);
    const PlacedProgram early = place(p, Placement::Early, schemas);
    for (Tier tier : {Tier::Element, Tier::Storage}) {
      int brokenDiffers = 0;
      for (unsigned draw = 0; draw < 8; ++draw) {
        ExecOptions options;
        options.tier = tier;
        options.behaviour = draw;
        const Result<Executable> reference = compile(p, schemas, options);
        ASSERT_TRUE(reference.ok());
        ExecOptions value = options;
        value.valueSemantics = true;
        ExecOptions valueAtZero = value;
        valueAtZero.behaviour = 0;
        const Result<Executable> f = compile(p, schemas, value), f0 = compile(p, schemas, valueAtZero);
        ASSERT_TRUE(f.ok() && f0.ok());
        EXPECT_FALSE(firstDifference(run(*f0, Semantics::Value, {3, 0}), run(*f, Semantics::Value, {3, 0})));
        options.placedProgram = true;
        const Result<Executable> placedEarly = compile(early.program, schemas, options);
        const Result<Executable> placedBroken = compile(broken.program, schemas, options);
        ASSERT_TRUE(placedEarly.ok() && placedBroken.ok());
        const RunResult par = run(*reference, Semantics::Par, {3, 0});
        EXPECT_FALSE(firstDifference(par, run(*placedEarly, Semantics::Placed, {3, 0})))
            << name << " " << toString(tier) << " draw " << draw;
        const bool differs = firstDifference(par, run(*placedBroken, Semantics::Placed, {3, 0})).has_value();
        if (draw == 0) {
          EXPECT_FALSE(differs) << name << " " << toString(tier);
        }
        brokenDiffers += differs;
      }
      EXPECT_GT(brokenDiffers, 0) << name << " " << toString(tier);
    }
  }
}

}  // namespace
}  // namespace wb::oracle
