// tests/gen_scaled_test.cpp: the benchmark's program shapes (gen/scaled.h) and what the
// placement benchmark claims about them: `early` places the chains exactly as pr20744 does,
// and on the decoders pr20744 is wrong (hazard H5) where `early` is right.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/placement.h"
#include "core/validate.h"
#include "gen/scaled.h"
#include "oracle/oracle.h"
#include "tests/testing.h"

namespace wb {
namespace {

std::size_t mutationOutputs(const Program& p) {
  std::size_t n = 0;
  for (const OutputSpec& s : p.signature.outputs) n += isMutation(s.kind);
  return n;
}

TEST(ScaledShapes, ValidateWithTheRequestedSizes) {
  for (auto [nodes, buffers] : {std::pair<std::size_t, std::size_t>{40, 4}, {1000, 10}, {10000, 100}}) {
    const Program chain = gen::chainProgram(nodes, buffers);
    EXPECT_TRUE(validate(chain).empty()) << formatAll(validate(chain));
    EXPECT_EQ(mutationOutputs(chain), buffers);
    EXPECT_NEAR(static_cast<double>(chain.graph.nodes.size()), static_cast<double>(nodes), 0.02 * nodes + 2);
    const Program decoder = gen::decoderProgram(nodes, buffers);
    EXPECT_TRUE(validate(decoder).empty()) << formatAll(validate(decoder));
    EXPECT_EQ(mutationOutputs(decoder), buffers);
    EXPECT_NEAR(static_cast<double>(decoder.graph.nodes.size()), static_cast<double>(nodes), 0.02 * nodes + 8);
  }
}

TEST(ScaledShapes, EarlyPlacesTheChainsExactlyAsPr20744) {
  for (auto [nodes, buffers] : {std::pair<std::size_t, std::size_t>{40, 4}, {1000, 10}, {3000, 300}}) {
    const Program p = gen::chainProgram(nodes, buffers);
    const SchemaTable table = schemasFor(p, builtinSchemas());
    const PlacedProgram early = place(p, Placement::Early, table);
    for (Placement version : {Placement::Pr20744_ff2892d4, Placement::Pr20744_82a8901}) {
      const PlacedProgram pr = place(p, version, table);
      ASSERT_FALSE(pr.failure) << *pr.failure;
      EXPECT_EQ(early.copies.size(), buffers);
      EXPECT_EQ(gen::placementLayout(early.program), gen::placementLayout(pr.program)) << nodes << " nodes, " << buffers << " buffers";
    }
  }
}

TEST(ScaledShapes, Pr20744CopiesDecoderCachesBeforeTheirViewsAreRead) {
  const Program p = gen::decoderProgram(1000, 10);
  const SchemaTable table = schemasFor(p, builtinSchemas());
  const PlacedProgram early = place(p, Placement::Early, table);
  const PlacedProgram pr = place(p, Placement::Pr20744_ff2892d4, table);
  ASSERT_FALSE(pr.failure) << *pr.failure;
  ASSERT_EQ(early.copies.size(), 10u);
  ASSERT_EQ(pr.copies.size(), 10u);
  for (std::size_t i = 0; i < early.copies.size(); ++i) {
    // pr20744 stops at the slice_copy (a use of the old contents it sees); early waits for the
    // attention that reads the cache through that view.
    const Node* prAnchor = p.graph.find(pr.copies[i].bindingNode);
    const Node* earlyAnchor = p.graph.find(early.copies[i].bindingNode);
    ASSERT_NE(prAnchor, nullptr);
    ASSERT_NE(earlyAnchor, nullptr);
    EXPECT_EQ(prAnchor->target, "aten::slice_copy.Tensor") << pr.copies[i].text;
    EXPECT_EQ(earlyAnchor->target, "aten::scaled_dot_product_attention") << early.copies[i].text;
  }
}

TEST(ScaledShapes, TheOracleFindsPr20744WrongOnDecodersOnlyWithViews) {
  const Program p = gen::decoderProgram(60, 4);
  const SchemaTable table = oracle::withOracleSchemas(schemasFor(p, builtinSchemas()));
  oracle::CheckOptions options;
  options.placement = Placement::Early;
  const oracle::CheckReport early = oracle::check(p, options, table);
  EXPECT_EQ(early.verdict, oracle::Verdict::Holds) << oracle::formatReport(early);
  options.placement = Placement::Pr20744_ff2892d4;
  const oracle::CheckReport pr = oracle::check(p, options, table);
  ASSERT_EQ(pr.verdict, oracle::Verdict::PlacementBug) << oracle::formatReport(pr);
  for (const oracle::Mismatch& bug : pr.bugs) EXPECT_EQ(bug.viewMode, oracle::ViewMode::AliasViews) << oracle::formatReport(pr);
  options.placement = Placement::Pr20744_ff2892d4;
  const Program chain = gen::chainProgram(60, 4);
  const oracle::CheckReport prChain = oracle::check(chain, options, oracle::withOracleSchemas(schemasFor(chain, builtinSchemas())));
  EXPECT_EQ(prChain.verdict, oracle::Verdict::Holds) << oracle::formatReport(prChain);
}

}  // namespace
}  // namespace wb
