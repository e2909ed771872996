// tests/reinplace_domain_test.cpp: the domain of `_share_alloc_with_arg_idx` that reinplace
// produces (core/reinplace_domain.h), and how `check` reports a program outside it: a finding
// about the program, never a placement bug (DESIGN §7).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "core/reinplace_domain.h"
#include "core/text.h"
#include "oracle/oracle.h"
#include "tests/testing.h"

namespace wb {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

// forward(self, b_s: BUFFER s, x: USER_INPUT) with `body` (lines of forward) and `returns`;
// b_s is mutated by `mutation` when it is not empty.
Program programWith(const std::string& body, const std::string& returns, const std::string& mutation) {
  std::string text =
      "class M(torch.nn.Module):\n"
      "    def forward(self, b_s: \"f32[4]\", x: \"f32[4]\"):\n" +
      body + "        return (" + returns + ")\n\nGraph signature:\n    # inputs\n"
      "    b_s: BUFFER target='s' persistent=True\n    x: USER_INPUT\n    # outputs\n";
  std::string rest = returns;
  std::size_t k = 0;
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    std::string name = rest.substr(0, comma);
    while (!name.empty() && name.front() == ' ') name.erase(0, 1);
    if (!name.empty())
      text += "    " + name + (k == 0 && !mutation.empty() ? ": BUFFER_MUTATION target='s'\n" : ": USER_OUTPUT\n");
    ++k;
    rest = comma == std::string::npos ? "" : rest.substr(comma + 1);
  }
  Result<Program> read = readProgram(text);
  EXPECT_TRUE(read.ok()) << formatAll(read.errors) << "\n" << text;
  return read.ok() ? *read : Program{};
}

const std::string kMul = "        mul: \"f32[4]\" = torch.ops.aten.mul.Tensor(x, 2)\n";

TEST(ReinplaceDomain, WhatReinplaceMakesIsInside) {
  // H6a: a mutated buffer, no later use.
  EXPECT_THAT(annotationsOutsideReinplaceDomain(programWith(
                  kMul + "        y: \"f32[4]\" = torch.ops.aten.relu.default(b_s)  # meta: _share_alloc_with_arg_idx=0\n"
                         "        z: \"f32[4]\" = torch.ops.aten.add.Tensor(y, 1)\n",
                  "mul, z", "s")),
              IsEmpty());
  // R-a: the output is no later use (H6b).
  EXPECT_THAT(annotationsOutsideReinplaceDomain(programWith(
                  kMul + "        y: \"f32[4]\" = torch.ops.aten.relu.default(mul)  # meta: _share_alloc_with_arg_idx=0\n",
                  "mul, y", "s")),
              IsEmpty());
  // R-b: a later node that reinplace annotated too adds no use.
  EXPECT_THAT(annotationsOutsideReinplaceDomain(programWith(
                  kMul + "        y: \"f32[4]\" = torch.ops.aten.relu.default(mul)  # meta: _share_alloc_with_arg_idx=0\n"
                         "        z: \"f32[4]\" = torch.ops.aten.sigmoid.default(mul)  # meta: _share_alloc_with_arg_idx=0\n",
                  "y, z", "")),
              IsEmpty());
}

TEST(ReinplaceDomain, WhatReinplaceNeverMakesIsOutside) {
  const auto outside = [](const Program& p) {
    std::vector<AnnotationOutsideDomain> found = annotationsOutsideReinplaceDomain(p);
    EXPECT_EQ(found.size(), 1u);
    return found.empty() ? std::string() : p.graph.nodes[found[0].node].name + ": " + found[0].reason;
  };
  EXPECT_THAT(outside(programWith(kMul + "        y: \"f32[4]\" = torch.ops.aten.relu.default(mul)  # meta: _share_alloc_with_arg_idx=0\n",
                                  "mul", "")),
              HasSubstr("y: its result is used nowhere"));
  EXPECT_THAT(outside(programWith("        y: \"f32[4]\" = torch.ops.aten.relu.default(x)  # meta: _share_alloc_with_arg_idx=0\n",
                                  "y", "")),
              HasSubstr("(%x) is a USER_INPUT that no output mutates"));
  EXPECT_THAT(outside(programWith("        y: \"f32[4]\" = torch.ops.aten.relu.default(b_s)  # meta: _share_alloc_with_arg_idx=0\n",
                                  "y", "")),
              HasSubstr("(%b_s) is a BUFFER that no output mutates"));
  EXPECT_THAT(outside(programWith(kMul + "        y: \"f32[4]\" = torch.ops.aten.relu.default(mul)  # meta: _share_alloc_with_arg_idx=0\n"
                                         "        z: \"f32[4]\" = torch.ops.aten.add.Tensor(mul, y)\n",
                                  "z", "")),
              HasSubstr("(%mul) is used later by %z"));
  // Reinplace annotates functional nodes only: never an in-place op or an out= variant
  // (text_program_fuzzer's mutator annotated an add_; early was then judged on it).
  EXPECT_THAT(outside(programWith("        y: \"f32[4]\" = torch.ops.aten.add_.Tensor(b_s, x)  # meta: _share_alloc_with_arg_idx=1\n",
                                  "y", "s")),
              HasSubstr("y: %y is an in-place or out= op"));
  EXPECT_THAT(outside(programWith(kMul + "        y: \"f32[4]\" = torch.ops.aten.add.out(mul, 1, out=b_s)  # meta: _share_alloc_with_arg_idx=0\n",
                                  "y", "s")),
              HasSubstr("y: %y is an in-place or out= op"));
}

// The programs whose placement "bugs" came from an annotated node nobody uses, whose argument
// is a user input nothing mutates (four the models' dead-code elimination dropped, three whose
// copy_ read that input before or after the write): findings about the program, for every
// placement.
TEST(ReinplaceDomain, CheckReportsAFindingAndJudgesNoPlacement) {
  for (const char* name : {"draft13857_dce_storage_writer.txt", "pr20744@ff2892d4_dce_storage_writer.txt",
                           "pr20744@82a8901_dce_storage_writer.txt", "upstream_dce_storage_writer.txt",
                           "draft13857_h6_share_alloc.txt", "pr20744@ff2892d4_h6_share_alloc.txt",
                           "upstream_h6_share_alloc.txt"}) {
    SCOPED_TRACE(name);
    const Program p = testing::loadProgram(testing::corpusDir() / "regressions" / "false-alarms" / name);
    for (Placement placement : allPlacements()) {
      oracle::CheckOptions options;
      options.placement = placement;
      const oracle::CheckReport r = oracle::check(p, options, schemasFor(p, builtinSchemas()));
      EXPECT_EQ(r.verdict, oracle::Verdict::Holds) << oracle::formatReport(r);
      EXPECT_EQ(r.exitCode(), 0);
      ASSERT_FALSE(r.findings.empty());
      EXPECT_EQ(r.findings[0].kind, oracle::MismatchKind::AnnotationOutsideDomain);
      EXPECT_FALSE(oracle::comparesRuns(r.findings[0].kind));
      EXPECT_THAT(oracle::formatReport(r), HasSubstr("annotation outside reinplace's domain"));
      EXPECT_THAT(oracle::formatReport(r), HasSubstr("placement not judged"));
      options.strict = true;
      EXPECT_EQ(oracle::check(p, options, schemasFor(p, builtinSchemas())).exitCode(), 1);
    }
  }
}

}  // namespace
}  // namespace wb
