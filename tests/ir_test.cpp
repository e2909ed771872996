// tests/ir_test.cpp: the small value types of the program model (core/ir.h).
#include <gtest/gtest.h>

#include <stdexcept>

#include "core/ir.h"

namespace wb {
namespace {

TEST(NodeMeta, IteratesInKeyOrderWithUniqueKeys) {
  NodeMeta meta = {{"zeta", "1"}, {"alpha", "2"}, {"zeta", "3"}};  // the later duplicate wins
  ASSERT_EQ(meta.size(), 2u);
  std::vector<std::pair<std::string, std::string>> entries(meta.begin(), meta.end());
  EXPECT_EQ(entries, (std::vector<std::pair<std::string, std::string>>{{"alpha", "2"}, {"zeta", "3"}}));
  meta["mid"] = "4";
  meta["alpha"] = "5";
  entries.assign(meta.begin(), meta.end());
  EXPECT_EQ(entries,
            (std::vector<std::pair<std::string, std::string>>{{"alpha", "5"}, {"mid", "4"}, {"zeta", "3"}}));
}

TEST(NodeMeta, FindCountAtAndClear) {
  NodeMeta meta = {{"_share_alloc_with_arg_idx", "1"}};
  EXPECT_EQ(meta.count("_share_alloc_with_arg_idx"), 1u);
  EXPECT_EQ(meta.count("other"), 0u);
  EXPECT_EQ(meta.find("other"), meta.end());
  ASSERT_NE(meta.find("_share_alloc_with_arg_idx"), meta.end());
  EXPECT_EQ(meta.find("_share_alloc_with_arg_idx")->second, "1");
  EXPECT_EQ(meta.at("_share_alloc_with_arg_idx"), "1");
  EXPECT_THROW((void)meta.at("other"), std::out_of_range);
  EXPECT_EQ(meta, (NodeMeta{{"_share_alloc_with_arg_idx", "1"}}));
  meta.clear();
  EXPECT_TRUE(meta.empty());
  EXPECT_EQ(meta, NodeMeta{});
}

TEST(NodeMeta, ShareAllocArgIndexReadsOnlyValidIntegers) {
  Node n = Node::call("y", "my_ops::scale", {Arg::ref("x")}, {}, "f32[4]", {{"_share_alloc_with_arg_idx", "0"}});
  EXPECT_EQ(n.shareAllocArgIndex(), 0);
  n.meta["_share_alloc_with_arg_idx"] = "-1";
  EXPECT_EQ(n.shareAllocArgIndex(), std::nullopt);
  n.meta["_share_alloc_with_arg_idx"] = "2x";
  EXPECT_EQ(n.shareAllocArgIndex(), std::nullopt);
  n.meta.clear();
  EXPECT_EQ(n.shareAllocArgIndex(), std::nullopt);
}

}  // namespace
}  // namespace wb
