// tests/shape_rules_test.cpp: validate() against the shape rules (core/shape_rules.h). Each op
// family gets a node whose annotation is right (no error) and one with a stale annotation (an
// error at the node's line); arguments no shape satisfies are errors too; what the rules do not
// know (symbolic sizes, custom ops, no annotation) is never one.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/shape_rules.h"
#include "core/text.h"
#include "core/validate.h"
#include "tests/testing.h"

namespace wb {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

// A module-code program: forward(self, x: f32[2, 3], y: f32[3], i: i64[1], s: f32[1, 3],
// c: f32[2, 1], a: f32[3, 4]) with `line` as its only node (named `n`, on line 3), returning n.
std::string programWith(const std::string& line) {
  return "class M(torch.nn.Module):\n"
         "    def forward(self, x: \"f32[2, 3]\", y: \"f32[3]\", i: \"i64[1]\", s: \"f32[1, 3]\", c: \"f32[2, 1]\", "
         "a: \"f32[3, 4]\"):\n"
         "        " + line + "\n"
         "        return (n,)\n";
}

// The diagnostics validate() gives the program, with the nodes' locations from the reader.
std::vector<Diagnostic> diagnosticsOf(const std::string& text) {
  std::vector<SourceLocation> locations;
  Result<Program> read = readProgram(text, "shapes.txt", {}, &locations);
  EXPECT_TRUE(read.ok()) << formatAll(read.errors);
  if (!read.ok()) return {};
  return validate(*read, ValidateLimits{}, locations);
}

struct Family {
  std::string name;
  std::string right;  // the node line, annotated as its op's rule says
  std::string stale;  // the same node with a stale annotation
};

std::vector<Family> families() {
  return {
      {"unary", "n: \"f32[2, 3]\" = torch.ops.aten.relu.default(x)", "n: \"f32[3, 2]\" = torch.ops.aten.relu.default(x)"},
      {"pointwise broadcast", "n: \"f32[2, 3]\" = torch.ops.aten.add.Tensor(x, y)",
       "n: \"f32[3]\" = torch.ops.aten.add.Tensor(x, y)"},
      {"pointwise scalar", "n: \"f32[2, 3]\" = torch.ops.aten.mul.Scalar(x, 2)", "n: \"f32[2]\" = torch.ops.aten.mul.Scalar(x, 2)"},
      {"in-place", "n: \"f32[2, 3]\" = torch.ops.aten.add_.Tensor(x, y)", "n: \"f32[3]\" = torch.ops.aten.add_.Tensor(x, y)"},
      {"view", "n: \"f32[3, 2]\" = torch.ops.aten.view_copy.default(x, [3, 2])",
       "n: \"f32[2, 3]\" = torch.ops.aten.view_copy.default(x, [3, 2])"},
      {"view with -1", "n: \"f32[6]\" = torch.ops.aten.view.default(x, [-1])", "n: \"f32[3]\" = torch.ops.aten.view.default(x, [-1])"},
      {"select", "n: \"f32[2]\" = torch.ops.aten.select_copy.int(x, 1, 0)", "n: \"f32[3]\" = torch.ops.aten.select_copy.int(x, 1, 0)"},
      {"slice", "n: \"f32[2, 2]\" = torch.ops.aten.slice_copy.Tensor(x, 1, 0, 2)",
       "n: \"f32[2, 3]\" = torch.ops.aten.slice_copy.Tensor(x, 1, 0, 2)"},
      {"slice with defaults", "n: \"f32[1, 3]\" = torch.ops.aten.slice.Tensor(x, 0, 1)",
       "n: \"f32[2, 3]\" = torch.ops.aten.slice.Tensor(x, 0, 1)"},
      {"slice with step", "n: \"f32[2, 2]\" = torch.ops.aten.slice.Tensor(x, 1, 0, 9223372036854775807, 2)",
       "n: \"f32[2, 1]\" = torch.ops.aten.slice.Tensor(x, 1, 0, 9223372036854775807, 2)"},
      {"transpose", "n: \"f32[3, 2]\" = torch.ops.aten.transpose_copy.int(x, 0, 1)",
       "n: \"f32[2, 3]\" = torch.ops.aten.transpose_copy.int(x, 0, 1)"},
      {"t", "n: \"f32[3, 2]\" = torch.ops.aten.t.default(x)", "n: \"f32[2, 3]\" = torch.ops.aten.t.default(x)"},
      {"permute", "n: \"f32[3, 2]\" = torch.ops.aten.permute_copy.default(x, [1, 0])",
       "n: \"f32[2, 3]\" = torch.ops.aten.permute_copy.default(x, [1, 0])"},
      {"expand", "n: \"f32[4, 3]\" = torch.ops.aten.expand_copy.default(s, [4, -1])",
       "n: \"f32[1, 3]\" = torch.ops.aten.expand_copy.default(s, [4, -1])"},
      {"unsqueeze", "n: \"f32[2, 1, 3]\" = torch.ops.aten.unsqueeze_copy.default(x, 1)",
       "n: \"f32[2, 3, 1]\" = torch.ops.aten.unsqueeze_copy.default(x, 1)"},
      {"squeeze", "n: \"f32[2]\" = torch.ops.aten.squeeze_copy.dim(c, 1)", "n: \"f32[2, 1]\" = torch.ops.aten.squeeze_copy.dim(c, 1)"},
      {"as_strided", "n: \"f32[3]\" = torch.ops.aten.as_strided_copy.default(x, [3], [1])",
       "n: \"f32[6]\" = torch.ops.aten.as_strided_copy.default(x, [3], [1])"},
      {"reduction", "n: \"f32[2]\" = torch.ops.aten.sum.dim_IntList(x, [1])",
       "n: \"f32[2, 1]\" = torch.ops.aten.sum.dim_IntList(x, [1])"},
      {"reduction keepdim", "n: \"f32[2, 1]\" = torch.ops.aten.mean.dim(x, [-1], True)",
       "n: \"f32[2]\" = torch.ops.aten.mean.dim(x, [-1], True)"},
      {"reduction of all", "n: \"f32[]\" = torch.ops.aten.sum.default(x)", "n: \"f32[6]\" = torch.ops.aten.sum.default(x)"},
      {"cat", "n: \"f32[3, 3]\" = torch.ops.aten.cat.default([x, s])", "n: \"f32[2, 3]\" = torch.ops.aten.cat.default([x, s])"},
      {"stack", "n: \"f32[2, 2, 3]\" = torch.ops.aten.stack.default([x, x])",
       "n: \"f32[4, 3]\" = torch.ops.aten.stack.default([x, x])"},
      {"index_select", "n: \"f32[1, 3]\" = torch.ops.aten.index_select.default(x, 0, i)",
       "n: \"f32[2, 3]\" = torch.ops.aten.index_select.default(x, 0, i)"},
      {"index_put", "n: \"f32[2, 3]\" = torch.ops.aten.index_put.default(x, [i], y)",
       "n: \"f32[1, 3]\" = torch.ops.aten.index_put.default(x, [i], y)"},
      {"index_copy", "n: \"f32[2, 3]\" = torch.ops.aten.index_copy.default(x, 0, i, s)",
       "n: \"f32[1, 3]\" = torch.ops.aten.index_copy.default(x, 0, i, s)"},
      {"slice_scatter", "n: \"f32[2, 3]\" = torch.ops.aten.slice_scatter.default(x, s, 0, 0, 1)",
       "n: \"f32[1, 3]\" = torch.ops.aten.slice_scatter.default(x, s, 0, 0, 1)"},
      {"mm", "n: \"f32[2, 4]\" = torch.ops.aten.mm.default(x, a)", "n: \"f32[2, 3]\" = torch.ops.aten.mm.default(x, a)"},
      {"factory", "n: \"f32[2, 2]\" = torch.ops.aten.full.default([2, 2], 0.0)",
       "n: \"f32[2]\" = torch.ops.aten.full.default([2, 2], 0.0)"},
  };
}

TEST(ShapeRules, EveryFamilyAcceptsTheRightAnnotation) {
  for (const Family& f : families()) EXPECT_THAT(diagnosticsOf(programWith(f.right)), IsEmpty()) << f.name;
}

TEST(ShapeRules, EveryFamilyRejectsAStaleAnnotationAtTheNode) {
  for (const Family& f : families()) {
    const std::vector<Diagnostic> errors = diagnosticsOf(programWith(f.stale));
    ASSERT_EQ(errors.size(), 1u) << f.name << "\n" << formatAll(errors);
    EXPECT_EQ(errors[0].line, 3) << f.name;
    EXPECT_EQ(errors[0].column, 9) << f.name;  // the node's name
    EXPECT_THAT(errors[0].message, HasSubstr("node 'n'")) << f.name;
    EXPECT_THAT(errors[0].message, HasSubstr("annotated")) << f.name;
  }
}

TEST(ShapeRules, ArgumentsNoShapeSatisfiesAreContradictions) {
  const std::pair<std::string, std::string> cases[] = {
      {"n: \"f32[3]\" = torch.ops.aten.mm.default(y, y)", "needs 2-d arguments"},
      {"n: \"f32[2, 4]\" = torch.ops.aten.mm.default(x, x)", "cannot be multiplied"},
      {"n: \"f32[2, 3]\" = torch.ops.aten.add.Tensor(x, a)", "do not broadcast"},
      {"n: \"f32[2]\" = torch.ops.aten.select.int(x, 1, 3)", "out of range"},
      {"n: \"f32[2]\" = torch.ops.aten.select.int(x, 2, 0)", "dimension 2 is out of range"},
      {"n: \"f32[3, 2]\" = torch.ops.aten.view_copy.default(x, [4, 2])", "cannot view"},
      {"n: \"f32[4, 3]\" = torch.ops.aten.expand.default(x, [4, 3])", "cannot expand"},
      {"n: \"f32[2, 3]\" = torch.ops.aten.cat.default([x, a])", "cat of tensors"},
      {"n: \"f32[2, 3]\" = torch.ops.aten.add_.Tensor(s, x)", "does not broadcast to the self"},
  };
  for (const auto& [line, message] : cases) {
    const std::vector<Diagnostic> errors = diagnosticsOf(programWith(line));
    ASSERT_EQ(errors.size(), 1u) << line << "\n" << formatAll(errors);
    EXPECT_EQ(errors[0].line, 3) << line;
    EXPECT_THAT(errors[0].message, HasSubstr(message)) << line;
  }
}

TEST(ShapeRules, GetitemOfASplitTakesItsPart) {
  const std::string text =
      "def forward(self, x: \"f32[5, 3]\"):\n"
      "    split = torch.ops.aten.split_copy.Tensor(x, 2)\n"
      "    getitem: \"f32[2, 3]\" = split[0]\n"
      "    getitem_1: \"f32[1, 3]\" = split[2]\n"
      "    unbind = torch.ops.aten.unbind.int(x, 1)\n"
      "    getitem_2: \"f32[5]\" = unbind[2]\n"
      "    return (getitem, getitem_1, getitem_2)\n";
  EXPECT_THAT(diagnosticsOf(text), IsEmpty());
  std::string stale = text;
  stale.replace(stale.find("f32[1, 3]"), 9, "f32[2, 3]");
  const std::vector<Diagnostic> errors = diagnosticsOf(stale);
  ASSERT_EQ(errors.size(), 1u) << formatAll(errors);
  EXPECT_EQ(errors[0].line, 4);
  EXPECT_THAT(errors[0].message, HasSubstr("getitem_1"));
}

TEST(ShapeRules, WhatTheRulesDoNotKnowIsNoContradiction) {
  const std::string cases[] = {
      "n: \"f32[7]\" = torch.ops.my_ops.mystery.default(x)",            // custom op
      "n: \"f32[s0, 3]\" = torch.ops.aten.relu.default(x)",              // symbolic result
      "n: \"f32[7]\" = torch.ops.aten.scaled_dot_product_attention.default(x, x)",  // missing value
      "n: \"f32[7]\" = torch.ops.aten.add.out(x, y, out=x)",             // out= variant
      "n = torch.ops.aten.relu.default(x)",                              // no annotation
      "n: \"f32[9]\" = torch.ops.aten.transpose_.int(x, 0, 1)",          // in-place view
  };
  for (const std::string& line : cases) EXPECT_THAT(diagnosticsOf(programWith(line)), IsEmpty()) << line;
  // A symbolic argument makes the result unknown.
  const std::string symbolic =
      "def forward(self, x: \"f32[s0, 3]\"):\n"
      "    n: \"f32[9, 9]\" = torch.ops.aten.relu.default(x)\n"
      "    return (n,)\n";
  EXPECT_THAT(diagnosticsOf(symbolic), IsEmpty());
}

TEST(ShapeRules, WithoutLocationsTheErrorHasNoLine) {
  Result<Program> read = readProgram(programWith(families()[0].stale));
  ASSERT_TRUE(read.ok());
  const std::vector<Diagnostic> errors = validate(*read);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].line, 0);
}

TEST(ShapeRules, TheArithmetic) {
  EXPECT_EQ(wrapDim(-1, 3), 2u);
  EXPECT_EQ(wrapDim(0, 0), 0u);
  EXPECT_EQ(wrapDim(-1, 0), 0u);
  EXPECT_EQ(wrapDim(3, 3), std::nullopt);
  EXPECT_EQ(broadcastDim(1, 4), 4);
  EXPECT_EQ(broadcastDim(4, 1), 4);
  EXPECT_EQ(broadcastDim(3, 4), std::nullopt);
  EXPECT_EQ(sliceBounds(5, -2, std::nullopt, 1).start, 3);
  EXPECT_EQ(sliceBounds(5, -2, std::nullopt, 1).length, 2);
  EXPECT_EQ(sliceBounds(5, 1, 100, 2).length, 2);
  EXPECT_EQ(sliceBounds(5, 4, 2, 1).length, 0);
  std::vector<std::int64_t> sizes = {2, -1};
  EXPECT_EQ(inferViewSizes(sizes, 6), nullptr);
  EXPECT_EQ(sizes[1], 3);
  sizes = {-1, -1};
  EXPECT_NE(inferViewSizes(sizes, 6), nullptr);
  sizes = {4};
  EXPECT_NE(inferViewSizes(sizes, 6), nullptr);
  EXPECT_EQ(parseStaticShape("f32[4, 2]")->rank, 2u);
  EXPECT_EQ(parseStaticShape("i64[]")->rank, 0u);
  EXPECT_FALSE(parseStaticShape("f32[s0, 2]"));
  EXPECT_FALSE(parseStaticShape("Sym(s0)"));
}

}  // namespace
}  // namespace wb
