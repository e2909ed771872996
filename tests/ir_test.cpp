// tests/ir_test.cpp: the small value types of the program model and its edits (core/ir.h,
// core/compact_vector.h,
// core/shared_string.h).
#include <gtest/gtest.h>

#include <span>
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
  Node plain = Node::call("add", "aten::add.Tensor", {Arg::ref(0), Arg::ref(1)});
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

// An ordinary value type: copies and assignments are equal to the original, and a reference
// is its node's index, nothing else.
TEST(Arg, IsAValueTypeAndAReferenceIsItsNodesIndex) {
  static_assert(std::is_trivially_copyable_v<NodeId>);
  const Arg ref = Arg::ref(3);
  EXPECT_TRUE(ref.isRef());
  EXPECT_EQ(ref.node, 3u);
  EXPECT_TRUE(ref.text.empty());
  EXPECT_EQ(ref, Arg::ref(3));
  EXPECT_NE(ref, Arg::ref(4));
  EXPECT_NE(ref, Arg::ofInt(3));  // the kind counts
  EXPECT_EQ(Arg::ofInt(3).node, kNoNode);
  const Arg list = Arg::list({Arg::ref(1), Arg::ofFloat(0.5), Arg::tuple({Arg::ofString("s"), Arg::token("torch.float32")})});
  Arg copy = list;
  EXPECT_EQ(copy, list);
  Arg assigned;
  assigned = list;
  EXPECT_EQ(assigned, list);
  copy.items[0] = Arg::ref(2);  // deep: the original keeps its items
  EXPECT_NE(copy, list);
  EXPECT_EQ(list.items[0], Arg::ref(1));
  Arg moved = std::move(assigned);
  EXPECT_EQ(moved, list);
}

// Node== is written out (it compares the fields in its own order): every field counts.
TEST(Node, EqualityComparesEveryField) {
  const Node base = Node::call("add_1", "aten::add.Tensor", {Arg::ref(0), Arg::ofInt(2)},
                               {{"alpha", Arg::ofInt(1)}}, "f32[4, 8]", NodeMeta{{"_share_alloc_with_arg_idx", "0"}});
  EXPECT_EQ(base, Node(base));
  std::vector<Node> changed(7, base);
  changed[0].name = "add_2";
  changed[1].target = "aten::sub.Tensor";
  changed[2].args[0] = Arg::ref(1);
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
  Node n = Node::call("y", "my_ops::scale", {Arg::ref(0)}, {}, "f32[4]", {{"_share_alloc_with_arg_idx", "0"}});
  EXPECT_EQ(n.shareAllocArgIndex(), 0);
  n.meta["_share_alloc_with_arg_idx"] = "-1";
  EXPECT_EQ(n.shareAllocArgIndex(), std::nullopt);
  n.meta["_share_alloc_with_arg_idx"] = "2x";
  EXPECT_EQ(n.shareAllocArgIndex(), std::nullopt);
  n.meta.clear();
  EXPECT_EQ(n.shareAllocArgIndex(), std::nullopt);
}

// ---------------------------------------------------------------------------------------------
// Edits: renumberReferences and the edits built on it.

// x, y placeholders; a = add(x, y); b = cat([a, x], dim=y); output (b, [a]).
Graph smallGraph() {
  Graph g;
  g.nodes.push_back(Node::placeholder("x"));
  g.nodes.push_back(Node::placeholder("y"));
  g.nodes.push_back(Node::call("a", "aten::add.Tensor", {Arg::ref(0), Arg::ref(1)}));
  g.nodes.push_back(Node::call("b", "aten::cat", {Arg::list({Arg::ref(2), Arg::ref(0)})}, {{"dim", Arg::ref(1)}}));
  g.nodes.push_back(Node::output({Arg::ref(3), Arg::list({Arg::ref(2)})}));
  return g;
}

// Every reference of `g` by the name of its node, in order: "a(x,y) b([a,x],dim=y) output((b,[a]))".
std::string refsByName(const Graph& g) {
  std::string out;
  auto text = [&](const Arg& a, auto& self) -> std::string {
    if (a.isRef()) return a.node < g.nodes.size() ? g.nodes[a.node].name : "?";
    if (!a.isSequence()) return "_";
    std::string s = a.kind == Arg::Kind::List ? "[" : "(";
    for (std::size_t i = 0; i < a.items.size(); ++i) s += (i ? "," : "") + self(a.items[i], self);
    return s + (a.kind == Arg::Kind::List ? "]" : ")");
  };
  for (const Node& n : g.nodes) {
    if (n.args.empty() && n.kwargs.empty()) continue;
    out += (out.empty() ? "" : " ") + n.name + "(";
    bool first = true;
    for (const Arg& a : n.args) out += (std::exchange(first, false) ? "" : ",") + text(a, text);
    for (const auto& [k, v] : n.kwargs) out += (std::exchange(first, false) ? "" : ",") + k + "=" + text(v, text);
    out += ")";
  }
  return out;
}

TEST(RenumberReferences, FollowsAPermutationIntoListsKeywordsAndTheOutput) {
  Graph g = smallGraph();
  const std::string before = refsByName(g);
  EXPECT_EQ(before, "a(x,y) b([a,x],dim=y) output((b,[a]))");
  // Swap the placeholders: every reference to one now names the other's slot.
  std::swap(g.nodes[0], g.nodes[1]);
  const std::vector<NodeId> swapped = {1, 0, 2, 3, 4};
  renumberReferences(g, swapped);
  EXPECT_EQ(refsByName(g), before);
  EXPECT_EQ(g.nodes[2].args[0], Arg::ref(1));
  EXPECT_EQ(g.nodes[3].kwargs[0].second, Arg::ref(0));
}

TEST(RenumberReferences, TheIdentityChangesNothing) {
  Graph g = smallGraph();
  renumberReferences(g, std::vector<NodeId>{0, 1, 2, 3, 4});
  EXPECT_EQ(g, smallGraph());
}

TEST(RenumberReferences, AReferenceToADeletedOrMissingNodeIsAPreconditionError) {
  Graph g = smallGraph();
  EXPECT_THROW(renumberReferences(g, std::vector<NodeId>{0, 1, kNoNode, 2, 3}), std::invalid_argument);  // a deleted
  Graph h = smallGraph();
  EXPECT_THROW(renumberReferences(h, std::vector<NodeId>{0, 1}), std::invalid_argument);  // a past the mapping
  Graph k = smallGraph();
  k.nodes[2].args[0] = Arg::ref(kNoNode);
  EXPECT_THROW(renumberReferences(k, std::vector<NodeId>{0, 1, 2, 3, 4}), std::invalid_argument);
}

TEST(InsertNode, ShiftsTheReferencesAfterItAndKeepsThoseBefore) {
  Graph g = smallGraph();
  // c = neg(a), inserted before b, its reference in the numbering before the insertion.
  insertNode(g, 3, Node::call("c", "aten::neg", {Arg::ref(2)}));
  ASSERT_EQ(g.nodes.size(), 6u);
  EXPECT_EQ(g.nodes[3].name, "c");
  EXPECT_EQ(refsByName(g), "a(x,y) c(a) b([a,x],dim=y) output((b,[a]))");
  EXPECT_EQ(g.nodes[5].args[0].items[0], Arg::ref(4));  // the output's b moved
  // At the front and at the end.
  insertNode(g, 0, Node::placeholder("z"));
  EXPECT_EQ(refsByName(g), "a(x,y) c(a) b([a,x],dim=y) output((b,[a]))");
  insertNode(g, g.nodes.size(), Node::call("tail", "aten::neg", {Arg::ref(4)}));
  EXPECT_EQ(g.nodes.back().args[0], Arg::ref(4));
  EXPECT_EQ(g.nodes[4].name, "c");
  EXPECT_THROW(insertNode(g, g.nodes.size() + 1, Node::placeholder("w")), std::out_of_range);
}

TEST(EraseNodes, KeepsTheOrderAndRenumbersTheUsesOfTheKeptNodes) {
  Graph g = smallGraph();
  g.nodes.insert(g.nodes.begin() + 2, Node::call("dead", "aten::neg", {Arg::ref(0)}));
  renumberReferences(std::span<Node>(g.nodes).subspan(3), std::vector<NodeId>{0, 1, 3, 4, 5});
  const std::vector<NodeId> oldToNew = eraseNodes(g, {false, false, true, false, false, false});
  EXPECT_EQ(oldToNew, (std::vector<NodeId>{0, 1, kNoNode, 2, 3, 4}));
  EXPECT_EQ(g, smallGraph());
}

TEST(EraseNodes, ANodeStillUsedCannotBeErased) {
  Graph g = smallGraph();
  EXPECT_THROW(eraseNodes(g, {false, false, true, false, false}), std::invalid_argument);  // b and the output use a
  Graph h = smallGraph();
  EXPECT_THROW(eraseNodes(h, {false, false}), std::invalid_argument);  // one flag per node
}

}  // namespace
}  // namespace wb
