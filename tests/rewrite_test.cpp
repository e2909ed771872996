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

// Copies after y and z, keeping output positions.
RewriteResult copyBoth(const Program& p) {
  return insertWriteBacks(p, {{0, indexOf(p, "y")}, {1, indexOf(p, "z")}}, OutputOrder::KeepPositions);
}

TEST(Rewrite, CopiesFollowTheirAnchorsTakeFreshNamesAndTheirValuesTypes) {
  const Program p = twoBuffers();
  const RewriteResult r = copyBoth(p);
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
  EXPECT_EQ(g.nodes[r.copyPositions[1]].args[0], Arg::ref(static_cast<NodeId>(indexOf(r.program, "b_b"))));
  EXPECT_EQ(g.nodes[r.copyPositions[1]].args[1], Arg::ref(static_cast<NodeId>(indexOf(r.program, "z"))));
  // The output tuple refers to the copies where the values stood.
  EXPECT_EQ(r.program.graph.returnedValues(),
            (std::vector<Arg>{Arg::ref(static_cast<NodeId>(r.copyPositions[0])),
                              Arg::ref(static_cast<NodeId>(r.copyPositions[1])),
                              Arg::ref(static_cast<NodeId>(indexOf(r.program, "y")))}));
  // Outputs keep their positions: the mutation outputs name the copies, the user output stays.
  EXPECT_EQ(r.program.signature.outputs[0].name, "copy__1");
  EXPECT_EQ(r.program.signature.outputs[1].name, "copy__2");
  EXPECT_EQ(r.program.signature.outputs[2].name, "y");
}

// The rewrite renumbers every reference to the new layout: over the hazards, a placed program
// validates (every reference to an earlier node), reads back from its text as it is, and the
// consuming overload gives the same program.
TEST(Rewrite, PlacedProgramsReferToTheRightNodesAfterTheCopies) {
  std::size_t placedWithCopies = 0;
  for (const std::filesystem::path& file : testing::filesUnder(testing::corpusDir() / "hazards")) {
    const Program program = testing::loadProgram(file);
    const SchemaTable table = schemasFor(program, builtinSchemas());
    for (Placement placement : {Placement::End, Placement::Early, Placement::Upstream, Placement::Pr20744_ff2892d4}) {
      const PlacedProgram placed = place(program, placement, table);
      if (placed.failure || placed.copies.empty()) continue;
      ++placedWithCopies;
      EXPECT_TRUE(validate(placed.program).empty()) << file << ": " << formatAll(validate(placed.program));
      const Result<Program> back = readProgram(writeProgram(placed.program), file.string());
      ASSERT_TRUE(back.ok()) << formatAll(back.errors);
      EXPECT_EQ(*back, placed.program) << file;
      EXPECT_EQ(place(Program(program), placement, table).program, placed.program) << file;
    }
  }
  EXPECT_GT(placedWithCopies, 40u);
}

TEST(Rewrite, ConsumingAndCopyingOverloadsAgree) {
  const Program p = twoBuffers();
  const std::vector<CopyInsertion> requests = {{0, indexOf(p, "y")}, {1, indexOf(p, "z")}};
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
