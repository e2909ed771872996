// tests/ir_test.cpp: the small value types of the program model (core/ir.h, core/compact_vector.h,
// core/shared_string.h).
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/ir.h"

namespace wb {
namespace {

TEST(CompactVector, IsOnePointerWideAndHoldsNothingWhileEmpty) {
  static_assert(sizeof(CompactVector<Arg>) == sizeof(void*));
  CompactVector<int> v;
  EXPECT_TRUE(v.empty());
  EXPECT_EQ(v.size(), 0u);
  EXPECT_EQ(v.data(), nullptr);
  EXPECT_EQ(v.begin(), v.end());
  EXPECT_THROW(v.at(0), std::out_of_range);
  v.push_back(1);
  v.clear();
  EXPECT_EQ(v.data(), nullptr);  // clearing gives the storage back
  EXPECT_EQ(v, CompactVector<int>{});
}

TEST(CompactVector, CopiesAreDeepAndMovesTakeTheElements) {
  CompactVector<int> a = {1, 2, 3};
  CompactVector<int> b = a;
  b[0] = 9;
  EXPECT_EQ(a[0], 1);
  EXPECT_NE(a.data(), b.data());
  EXPECT_NE(a, b);
  const int* storage = a.data();
  CompactVector<int> c = std::move(a);
  EXPECT_EQ(c.data(), storage);
  EXPECT_EQ(c.toVector(), (std::vector<int>{1, 2, 3}));
}

TEST(CompactVector, InsertEraseAndReverseIterationKeepOrder) {
  CompactVector<int> v;
  // insert() returns where the element now is, also when the insertion moved the elements
  // (into an empty one, or past the capacity).
  EXPECT_EQ(*v.insert(v.begin(), 2), 2);
  EXPECT_EQ(*v.insert(v.begin(), 1), 1);
  EXPECT_EQ(*v.insert(v.end(), 4), 4);
  int* third = v.insert(v.begin() + 2, 3);
  EXPECT_EQ(third, v.data() + 2);
  EXPECT_EQ(*third, 3);
  EXPECT_EQ(v.toVector(), (std::vector<int>{1, 2, 3, 4}));
  EXPECT_EQ(*v.erase(v.begin() + 1), 3);
  EXPECT_EQ(std::vector<int>(v.rbegin(), v.rend()), (std::vector<int>{4, 3, 1}));
  EXPECT_EQ(v.front(), 1);
  EXPECT_EQ(v.back(), 4);
}

TEST(Node, TheListsMostNodesLeaveEmptyCostOnePointerEach) {
  // Passes over 10^6-node programs stream every node: the size is part of the design.
  static_assert(sizeof(Node) <= 128);  // two cache lines
  static_assert(sizeof(Arg) <= 56);
  // A growing node array moves its nodes only if moving cannot throw; otherwise it copies them.
  static_assert(std::is_nothrow_move_constructible_v<Node> && std::is_nothrow_move_constructible_v<Arg>);
  Node plain = Node::call("add", "aten::add.Tensor", {Arg::ref("x"), Arg::ref("y")});
  EXPECT_TRUE(plain.kwargs.empty());
  EXPECT_TRUE(plain.meta.empty());
  EXPECT_TRUE(plain.args[0].items.empty());
  Node copy = plain;
  copy.kwargs.emplace_back("alpha", Arg::ofInt(2));
  copy.meta["_share_alloc_with_arg_idx"] = "0";
  EXPECT_TRUE(plain.kwargs.empty());
  EXPECT_TRUE(plain.meta.empty());
  EXPECT_NE(plain, copy);
  EXPECT_EQ(copy.shareAllocArgIndex(), 0);
}

TEST(Arg, ADefinitionHintTravelsWithItsReferenceButIsNoPartOfItsValue) {
  const Arg hinted = Arg::ref("x", 3);
  EXPECT_EQ(hinted.definitionHint(), 3);
  EXPECT_EQ(Arg::ref("x").definitionHint(), Arg::kNoDefinitionHint);
  EXPECT_EQ(hinted, Arg::ref("x"));  // == compares the name only
  EXPECT_NE(hinted, Arg::ref("y", 3));
  const Arg copy = hinted;  // copies keep it (a copied program keeps its hints)
  EXPECT_EQ(copy.definitionHint(), 3);
  Arg assigned;
  assigned = hinted;
  EXPECT_EQ(assigned.definitionHint(), 3);
  // Other kinds have none, whatever their payload.
  EXPECT_EQ(Arg::ofInt(3).definitionHint(), Arg::kNoDefinitionHint);
  EXPECT_EQ(Arg::ofString("x").definitionHint(), Arg::kNoDefinitionHint);
}

// Node== is written out (it compares the fields in its own order): every field counts.
TEST(Node, EqualityComparesEveryField) {
  const Node base = Node::call("add_1", "aten::add.Tensor", {Arg::ref("x"), Arg::ofInt(2)},
                               {{"alpha", Arg::ofInt(1)}}, "f32[4, 8]", NodeMeta{{"_share_alloc_with_arg_idx", "0"}});
  EXPECT_EQ(base, Node(base));
  std::vector<Node> changed(7, base);
  changed[0].name = "add_2";
  changed[1].target = "aten::sub.Tensor";
  changed[2].args[0] = Arg::ref("y");
  changed[3].kwargs[0].second = Arg::ofInt(2);
  changed[4].meta["_share_alloc_with_arg_idx"] = "1";
  changed[5].op = NodeOp::CallModule;
  changed[6].typeText = "f32[4, 9]";
  for (std::size_t i = 0; i < changed.size(); ++i) {
    EXPECT_NE(base, changed[i]) << "field " << i;
    EXPECT_NE(changed[i], base) << "field " << i;
  }
  // Long names (past the inline comparison's short cases) too.
  Node longName = base, longer = base;
  longName.name = "a_rather_long_node_name_of_thirty_two";
  longer.name = "a_rather_long_node_name_of_thirty_tw0";
  EXPECT_NE(longName, longer);
  longer.name = longName.name;
  EXPECT_EQ(longName, longer);
}

TEST(SharedString, CopiesShareOneBlockAndCompareLikeStrings) {
  SharedString a = "aten::add.Tensor";
  SharedString b = a;
  EXPECT_TRUE(b.sharesTextWith(a));
  EXPECT_EQ(a, b);
  EXPECT_EQ(a, "aten::add.Tensor");
  EXPECT_EQ(a, std::string("aten::add.Tensor"));
  EXPECT_EQ(a, std::string_view("aten::add.Tensor"));
  EXPECT_EQ(a, SharedString(std::string("aten::add.Tensor")));  // equal text, another block
  EXPECT_NE(a, "aten::add");
  EXPECT_LT(SharedString("aten::add"), a);
  EXPECT_TRUE(a.starts_with("aten::"));
  EXPECT_EQ(a.rfind('.'), 9u);
  EXPECT_EQ(a.substr(6), "add.Tensor");
  EXPECT_EQ("<" + a + ">", "<aten::add.Tensor>");
  const std::string& text = a;
  EXPECT_EQ(text.size(), a.size());
  b = "aten::mul.Tensor";  // replaces b's text; a keeps its own
  EXPECT_EQ(a, "aten::add.Tensor");
  EXPECT_FALSE(b.sharesTextWith(a));
}

TEST(SharedString, TheEmptyStringHoldsNoBlock) {
  SharedString empty;
  EXPECT_TRUE(empty.empty());
  EXPECT_EQ(empty, "");
  EXPECT_EQ(empty.str(), std::string());
  EXPECT_TRUE(SharedString(std::string()).empty());
  SharedString cleared = "output";
  cleared.clear();
  EXPECT_EQ(cleared, empty);
}

TEST(TargetInterner, GivesEveryUseOfOneTextTheSameBlock) {
  TargetInterner intern;
  SharedString first = intern("aten::slice_copy.Tensor");
  SharedString again = intern(std::string("aten::slice_copy.") + "Tensor");
  SharedString other = intern("aten::mm");
  EXPECT_TRUE(again.sharesTextWith(first));
  EXPECT_FALSE(other.sharesTextWith(first));
  EXPECT_EQ(other, "aten::mm");
}

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
