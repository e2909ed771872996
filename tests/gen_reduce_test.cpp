// tests/gen_reduce_test.cpp: the graph reducer (gen/reduce.h). A planted feature survives
// reduction, the result is valid, much smaller, 1-minimal for the steps, and deterministic.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "core/text.h"
#include "core/validate.h"
#include "gen/generator.h"
#include "gen/reduce.h"
#include "gen/zoo.h"

namespace wb::gen {
namespace {

// Interesting: some in-place op writes a buffer placeholder directly.
bool writesBufferInPlace(const Program& p) {
  for (const Node& n : p.graph.nodes) {
    if (n.op != NodeOp::CallFunction || n.args.empty() || !n.args[0].isRef()) continue;
    if (n.target != "aten::index_put_" && n.target != "aten::add_.Tensor" && n.target != "aten::index_copy_") continue;
    const InputSpec* in = p.signature.inputForPlaceholder(p.graph.nodes[n.args[0].node].name);
    if (in && in->kind == InputKind::Buffer) return true;
  }
  return false;
}

TEST(GenReduce, PlantedFeatureSurvivesAndResultIsOneMinimal) {
  GenOptions options;
  options.maxNodes = 40;
  const Generator generator(options);
  int reduced = 0;
  for (std::uint64_t seed = 0; seed < 400 && reduced < 5; ++seed) {
    RandomChoices choices(seed);
    const Program p = generator.generate(choices).program;
    if (!writesBufferInPlace(p) || bodyNodeCount(p) < 8) continue;
    ++reduced;
    const ReduceResult r = reduce(p, writesBufferInPlace);
    ASSERT_TRUE(r.fixpoint);
    EXPECT_TRUE(validate(r.program).empty()) << writeProgram(r.program);
    EXPECT_TRUE(writesBufferInPlace(r.program));
    EXPECT_LE(bodyNodeCount(r.program), 1u) << writeProgram(r.program);
    EXPECT_LT(r.program.graph.nodes.size(), p.graph.nodes.size());
    for (const Program& c : reductionCandidates(r.program))
      EXPECT_FALSE(writesBufferInPlace(c)) << "not 1-minimal:\n" << writeProgram(c);
    // Deterministic.
    EXPECT_TRUE(reduce(p, writesBufferInPlace).program == r.program);
    // Still written and read back.
    Result<Program> back = readProgram(writeProgram(r.program));
    ASSERT_TRUE(back.ok());
    EXPECT_TRUE(*back == r.program);
  }
  EXPECT_EQ(reduced, 5);
}

TEST(GenReduce, KeepsAMutationSpecOfAModel) {
  // Interesting: the decoder still has a BUFFER_MUTATION whose value is an index_put.
  const Program p = *generateModel("decoder", ZooOptions{});
  auto interesting = [](const Program& q) {
    for (const OutputSpec& o : q.signature.outputs) {
      if (o.kind != OutputKind::BufferMutation) continue;
      const Node* n = q.graph.find(o.name);
      if (n && n->target == "aten::index_put") return true;
    }
    return false;
  };
  const ReduceResult r = reduce(p, interesting);
  ASSERT_TRUE(r.fixpoint);
  EXPECT_TRUE(interesting(r.program));
  EXPECT_TRUE(validate(r.program).empty());
  EXPECT_EQ(r.program.signature.outputs.size(), 1u) << writeProgram(r.program);
  EXPECT_LE(bodyNodeCount(r.program), 1u) << writeProgram(r.program);
  for (const Program& c : reductionCandidates(r.program)) EXPECT_FALSE(interesting(c));
}

TEST(GenReduce, UninterestingInputIsReturnedUnchanged) {
  const Program p = generateFromSeed(3);
  const ReduceResult r = reduce(p, [](const Program&) { return false; });
  EXPECT_FALSE(r.fixpoint);
  EXPECT_TRUE(r.program == p);
  EXPECT_EQ(r.accepted, 0u);
}

TEST(GenReduce, MaxTestsStopsEarly) {
  const Program p = *generateModel("rnn", ZooOptions{});
  ReduceOptions o;
  o.maxTests = 5;
  const ReduceResult r = reduce(p, [](const Program&) { return true; }, o);
  EXPECT_FALSE(r.fixpoint);
  EXPECT_LE(r.tests, 5u);
  EXPECT_TRUE(validate(r.program).empty());
}

// The single-step interface (what fuzz/mutator.cpp shrinks with) denotes the same candidates
// as reductionCandidates, in the same order, and nothing past a step's count.
TEST(GenReduce, SingleStepsAreTheReducersCandidates) {
  GenOptions options;
  options.maxNodes = 12;
  const Generator generator(options);
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    RandomChoices choices(seed);
    const Program p = generator.generate(choices).program;
    std::vector<Program> singles;
    for (std::size_t step = 0; step < kReductionSteps; ++step) {
      const std::size_t count = reductionCandidateCount(p, step);
      for (std::size_t i = 0; i < count; ++i)
        if (std::optional<Program> c = reductionCandidate(p, step, i); c && !(*c == p) && validate(*c).empty())
          singles.push_back(std::move(*c));
      EXPECT_FALSE(reductionCandidate(p, step, count).has_value());
    }
    EXPECT_FALSE(reductionCandidate(p, kReductionSteps, 0).has_value());
    EXPECT_EQ(reductionCandidateCount(p, kReductionSteps), 0u);
    const std::vector<Program> all = reductionCandidates(p);
    ASSERT_EQ(singles.size(), all.size()) << writeProgram(p);
    for (std::size_t k = 0; k < all.size(); ++k) EXPECT_TRUE(singles[k] == all[k]) << "candidate " << k;
  }
}

}  // namespace
}  // namespace wb::gen
