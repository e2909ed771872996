// tests/rewrite_test.cpp: the graph surgery every placement shares (core/rewrite.h).
#include <gtest/gtest.h>

#include "core/placement.h"
#include "core/rewrite.h"
#include "core/text.h"
#include "core/validate.h"
#include "tests/testing.h"

namespace wb {
namespace {

// Two buffers, the second one's value typed differently, and a node already named `copy_`.
const char* kTwoBuffers = R"(ExportedProgram:
    class GraphModule(torch.nn.Module):
        def forward(self, b_a: "f32[4]", b_b: "i64[2, 2]", x: "f32[4]"):
            copy_: "f32[4]" = torch.ops.aten.add.Tensor(b_a, x)
            y: "f32[4]" = torch.ops.aten.mul.Tensor(copy_, 2)
            z: "i64[2, 2]" = torch.ops.aten.add.Tensor(b_b, 1)
            return (y, z, y)

Graph signature:
    # inputs
    b_a: BUFFER target='a' persistent=True
    b_b: BUFFER target='b' persistent=True
    x: USER_INPUT

    # outputs
    y: BUFFER_MUTATION target='a'
    z: BUFFER_MUTATION target='b'
    y: USER_OUTPUT
)";

Program twoBuffers() {
  Result<Program> p = readProgram(kTwoBuffers, "two_buffers");
  EXPECT_TRUE(p.ok()) << formatAll(p.errors);
  return *p;
}

std::size_t indexOf(const Program& p, std::string_view name) { return p.graph.indexOf(name).value(); }

// Copies after y and z, keeping output positions; `hints` gives the value nodes or not.
RewriteResult copyBoth(const Program& p, std::optional<std::size_t> hintY, std::optional<std::size_t> hintZ) {
  return insertWriteBacks(p, {{0, indexOf(p, "y"), hintY}, {1, indexOf(p, "z"), hintZ}}, OutputOrder::KeepPositions);
}

TEST(Rewrite, CopiesFollowTheirAnchorsTakeFreshNamesAndTheirValuesTypes) {
  const Program p = twoBuffers();
  const RewriteResult r = copyBoth(p, std::nullopt, std::nullopt);
  EXPECT_TRUE(validate(r.program).empty()) << formatAll(validate(r.program));
  // `copy_` is taken by the input, so the copies are copy__1 and copy__2.
  ASSERT_EQ(r.copyNames, (std::vector<std::string>{"copy__1", "copy__2"}));
  const Graph& g = r.program.graph;
  EXPECT_EQ(g.nodes[r.copyPositions[0]].name, "copy__1");
  EXPECT_EQ(r.copyPositions[0], indexOf(r.program, "y") + 1);
  EXPECT_EQ(r.copyPositions[1], indexOf(r.program, "z") + 1);
  EXPECT_EQ(g.nodes[r.copyPositions[0]].typeText, "f32[4]");
  EXPECT_EQ(g.nodes[r.copyPositions[1]].typeText, "i64[2, 2]");
  EXPECT_EQ(g.nodes[r.copyPositions[1]].target, "aten::copy_");
  ASSERT_EQ(g.nodes[r.copyPositions[1]].args.size(), 2u);
  EXPECT_EQ(g.nodes[r.copyPositions[1]].args[0].text, "b_b");
  EXPECT_EQ(g.nodes[r.copyPositions[1]].args[1].text, "z");
  // Outputs keep their positions: the mutation outputs name the copies, the user output stays.
  EXPECT_EQ(r.program.signature.outputs[0].name, "copy__1");
  EXPECT_EQ(r.program.signature.outputs[1].name, "copy__2");
  EXPECT_EQ(r.program.signature.outputs[2].name, "y");
}

TEST(Rewrite, ValueNodeHintsGiveTheSameProgramAndWrongHintsAreIgnored) {
  const Program p = twoBuffers();
  const Program byName = copyBoth(p, std::nullopt, std::nullopt).program;
  EXPECT_EQ(copyBoth(p, indexOf(p, "y"), indexOf(p, "z")).program, byName);
  // A hint naming another node, or out of range, must not give the copy that node's type.
  EXPECT_EQ(copyBoth(p, indexOf(p, "z"), p.graph.nodes.size() + 5).program, byName);
  EXPECT_EQ(copyBoth(p, indexOf(p, "y"), std::nullopt).program, byName);
}

// A copied program's references keep hints naming their definitions (Arg::definitionHint) in
// the new layout, the copies' own and the output's included; the readers of a placed program
// then look no name up. (A consumed program's hints may go stale: see insertWriteBacks.)
TEST(Rewrite, CopiedProgramsKeepTheirReferencesHinted) {
  std::size_t refs = 0;
  for (const std::filesystem::path& file : testing::filesUnder(testing::corpusDir() / "hazards")) {
    const Program program = testing::loadProgram(file);
    const SchemaTable table = schemasFor(program, builtinSchemas());
    const PlacedProgram placed = place(program, Placement::Early, table);
    if (placed.copies.empty()) continue;
    refs += testing::expectReferencesHintTheirDefinitions(placed.program, file.string());
  }
  EXPECT_GT(refs, 100u);
}

TEST(Rewrite, ConsumingAndCopyingOverloadsAgree) {
  const Program p = twoBuffers();
  const std::vector<CopyInsertion> requests = {{0, indexOf(p, "y"), std::nullopt}, {1, indexOf(p, "z"), indexOf(p, "z")}};
  for (OutputOrder order : {OutputOrder::KeepPositions, OutputOrder::CopiesFirst}) {
    const RewriteResult copied = insertWriteBacks(p, requests, order);
    Program handedOver = p;
    const RewriteResult consumed = insertWriteBacks(std::move(handedOver), requests, order);
    EXPECT_EQ(consumed.program, copied.program);
    EXPECT_EQ(consumed.copyNames, copied.copyNames);
    EXPECT_EQ(consumed.copyPositions, copied.copyPositions);
  }
}

}  // namespace
}  // namespace wb
