// tests/proofs_effects_test.cpp: the proofs' own derivation of storage effects
// (proofs/effects.h), rule by rule, on the hazard programs and small programs written here:
// roots closed over ancestors and siblings (H10), list writes (H4), `*_copy` views in both view
// modes and the view_copy the output keeps, `_share_alloc_with_arg_idx` (H6), havoc for ops
// without a schema (H2, H9), getitems, liveness, and which mutation outputs need no copy.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/placement.h"
#include "core/text.h"
#include "core/validate.h"
#include "gen/generator.h"
#include "proofs/effects.h"
#include "tests/testing.h"

namespace wb::proofs {
namespace {

struct Loaded {
  Program program;
  SchemaTable schemas;
  Effects copyViews, aliasViews;
  const Effects& in(ViewMode m) const { return m == ViewMode::CopyViews ? copyViews : aliasViews; }
  NodeId at(std::string_view name) const {
    const std::optional<std::size_t> i = program.graph.indexOf(name);
    EXPECT_TRUE(i.has_value()) << name;
    return i ? static_cast<NodeId>(*i) : kNoNode;
  }
  std::vector<std::string> names(const std::vector<NodeId>& ids) const {
    std::vector<std::string> out;
    for (NodeId i : ids) out.push_back(program.graph.nodes[i].name);
    return out;
  }
  std::vector<std::string> roots(ViewMode m, std::string_view value) const {
    std::vector<NodeId> ids;
    for (const RootLink& l : in(m).nodes[at(value)].roots) ids.push_back(l.root);
    return names(ids);
  }
  std::vector<std::string> writes(ViewMode m, std::string_view node) const {
    std::vector<NodeId> ids;
    for (const Access& a : in(m).nodes[at(node)].writes) ids.push_back(a.root);
    return names(ids);
  }
  std::vector<std::string> reads(ViewMode m, std::string_view node) const {
    std::vector<NodeId> ids;
    for (const Access& a : in(m).nodes[at(node)].reads) ids.push_back(a.root);
    return names(ids);
  }
};

Loaded load(const Program& program) {
  Loaded l{program, schemasFor(program, builtinSchemas()), {}, {}};
  l.copyViews = deriveEffects(l.program, l.schemas, ViewMode::CopyViews);
  l.aliasViews = deriveEffects(l.program, l.schemas, ViewMode::AliasViews);
  return l;
}
Loaded hazard(const std::string& file) { return load(testing::loadProgram(testing::corpusDir() / "hazards" / file)); }
Loaded text(const std::string& source) {
  Result<Program> r = readProgram(source);
  EXPECT_TRUE(r.ok()) << formatAll(r.errors);
  return load(r.ok() ? *r : Program{});
}

using Names = std::vector<std::string>;
constexpr ViewMode kCopy = ViewMode::CopyViews, kAlias = ViewMode::AliasViews;

TEST(ProofsEffects, InPlaceResultsShareTheirArgumentsRootsSoSiblingsSeeLaterWrites) {
  Loaded l = hazard("h10_ancestor_sibling_alias.txt");
  EXPECT_EQ(l.roots(kCopy, "relu_"), Names{"mul"});
  EXPECT_EQ(l.writes(kCopy, "add_"), Names{"mul"});
  // add_ writes mul's root, which the value relu_ holds: a writer of the value's storage.
  EXPECT_TRUE(l.copyViews.mayAlias(l.at("relu_"), l.at("mul")));
  EXPECT_EQ(l.names(l.copyViews.writersOf[l.at("mul")]), (Names{"relu_", "add_"}));
}

TEST(ProofsEffects, ListArgumentsWriteEveryElement) {
  Loaded l = hazard("h04_list_argument_write.txt");
  EXPECT_EQ(l.writes(kCopy, "scale_all_"), (Names{"add", "mul"}));
  const Access* w = l.copyViews.writeOf(l.at("scale_all_"), l.at("add"));
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->via, Via::ListElement);
  EXPECT_EQ(w->argument, 0);
  EXPECT_EQ(w->element, 0);
}

TEST(ProofsEffects, CopyViewsAreFreshInCopyViewsModeAndViewsInAliasViewsMode) {
  Loaded l = hazard("h05_view_copy_becomes_view.txt");
  EXPECT_EQ(l.roots(kCopy, "view_copy"), Names{"view_copy"});
  EXPECT_EQ(l.roots(kAlias, "view_copy"), Names{"b_s"});
  EXPECT_EQ(l.reads(kCopy, "sum_1"), Names{"view_copy"});
  EXPECT_EQ(l.reads(kAlias, "sum_1"), Names{"b_s"});
  EXPECT_EQ(l.names(l.aliasViews.readersOf[l.at("b_s")]), (Names{"view_copy", "sum_1"}));
  EXPECT_EQ(l.names(l.copyViews.readersOf[l.at("b_s")]), Names{"view_copy"});
}

// The ordering proof derives the effects once for both modes when the copy-views derivation
// says no node is treated differently (viewModesDiffer false): the alias-views derivation must
// then be the same, node by node. Where they do differ, it must say so; and the alias-views
// effects derived from the copy-views ones (copying the nodes the modes cannot treat
// differently) must be those derived alone.
bool sameEffects(const Effects& a, const Effects& b) {
  if (a.nodes.size() != b.nodes.size() || a.readersOf != b.readersOf || a.writersOf != b.writersOf) return false;
  for (std::size_t i = 0; i < a.nodes.size(); ++i) {
    const NodeEffects& x = a.nodes[i];
    const NodeEffects& y = b.nodes[i];
    if (x.roots != y.roots || x.elements != y.elements || x.reads != y.reads || x.writes != y.writes ||
        x.havoc != y.havoc || x.live != y.live || x.liveWithoutHavocWrites != y.liveWithoutHavocWrites)
      return false;
  }
  return true;
}

TEST(ProofsEffects, ViewModesThatDoNotDifferGiveTheSameEffects) {
  std::size_t same = 0, differ = 0;
  // Each mode derived from the other mode's effects is the same as derived alone; where the
  // modes cannot differ, the two are the same effects.
  auto expectModesAgree = [&](const Loaded& l, const std::string& what) {
    EXPECT_EQ(l.copyViews.viewModesDiffer, l.aliasViews.viewModesDiffer) << what;
    EXPECT_TRUE(sameEffects(deriveEffects(l.program, l.schemas, ViewMode::AliasViews, l.copyViews), l.aliasViews)) << what;
    EXPECT_TRUE(sameEffects(deriveEffects(l.program, l.schemas, ViewMode::CopyViews, l.aliasViews), l.copyViews)) << what;
    if (l.copyViews.viewModesDiffer) {
      ++differ;
    } else {
      ++same;
      EXPECT_TRUE(sameEffects(l.copyViews, l.aliasViews)) << what;
    }
  };
  for (const char* dir : {"hazards", "real", "regressions", "models"})
    for (const auto& file : testing::filesUnder(testing::corpusDir() / dir)) {
      Result<Program> r = readProgram(testing::readFile(file), file.string());
      if (!r.ok() || !validate(*r).empty()) continue;  // the corpus holds invalid inputs too
      expectModesAgree(load(*r), file.string());
    }
  // And generated programs of both modes, whose `*_copy` views sit anywhere in the graph.
  for (gen::GenMode mode : {gen::GenMode::Realistic, gen::GenMode::Adversarial})
    for (std::uint64_t seed = 1; seed <= 40; ++seed) {
      gen::GenOptions options;
      options.maxNodes = 300;
      options.mode = mode;
      expectModesAgree(load(gen::generateFromSeed(seed, options)), "generated seed " + std::to_string(seed));
    }
  EXPECT_GT(same, 0u);
  EXPECT_GT(differ, 0u);
  // h05's view_copy becomes a view in the alias-views mode.
  const Loaded h05 = hazard("h05_view_copy_becomes_view.txt");
  EXPECT_TRUE(h05.copyViews.viewModesDiffer);
  EXPECT_FALSE(sameEffects(h05.copyViews, h05.aliasViews));
  // The only copy-view variant is a view_copy the program returns as a user output: a copy in
  // both modes (ReplaceViewCopyWithViewPass leaves it), so the modes do not differ.
  const Loaded kept = text(R"(
def forward(self, b_s: "f32[4]", x: "f32[4]"):
    add_: "f32[4]" = torch.ops.aten.add_.Tensor(b_s, x)
    view_copy: "f32[2, 2]" = torch.ops.aten.view_copy.default(b_s, [2, 2])
    return (view_copy,)
Graph signature:
    # inputs
    b_s: BUFFER target='s' persistent=True
    x: USER_INPUT
    # outputs
    view_copy: USER_OUTPUT
)");
  EXPECT_FALSE(kept.copyViews.viewModesDiffer);
  EXPECT_TRUE(sameEffects(kept.copyViews, kept.aliasViews));
}

TEST(ProofsEffects, AViewCopyTheOutputReturnsStaysACopy) {
  // ReplaceViewCopyWithViewPass leaves a view_copy the output uses; a mutation position does
  // not count (it holds a copy_ after the write-back pass).
  Loaded l = text(R"(
def forward(self, b_s: "f32[4]", b_t: "f32[4]", x: "f32[4]"):
    view_copy: "f32[2, 2]" = torch.ops.aten.view_copy.default(b_s, [2, 2])
    view_copy_1: "f32[2, 2]" = torch.ops.aten.view_copy.default(b_t, [2, 2])
    slice_copy: "f32[2]" = torch.ops.aten.slice_copy.Tensor(b_s, 0, 0, 2)
    mul: "f32[4]" = torch.ops.aten.mul.Tensor(x, 2)
    return (mul, view_copy, view_copy_1, slice_copy)
Graph signature:
    # inputs
    b_s: BUFFER target='s' persistent=True
    b_t: BUFFER target='t' persistent=True
    x: USER_INPUT
    # outputs
    mul: BUFFER_MUTATION target='s'
    view_copy: BUFFER_MUTATION target='t'
    view_copy_1: USER_OUTPUT
    slice_copy: USER_OUTPUT
)");
  EXPECT_EQ(l.roots(kAlias, "view_copy"), Names{"b_s"});          // a mutation value: a view
  EXPECT_EQ(l.roots(kAlias, "view_copy_1"), Names{"view_copy_1"});  // a user output: kept a copy
  EXPECT_EQ(l.roots(kAlias, "slice_copy"), Names{"b_s"});         // only view_copy is kept
}

TEST(ProofsEffects, ShareAllocPutsTheResultInTheArgumentsStorageAndWritesIt) {
  Loaded a = hazard("h06a_share_alloc_reader.txt");
  EXPECT_EQ(a.roots(kCopy, "sigmoid"), Names{"b_s"});
  EXPECT_EQ(a.writes(kCopy, "sigmoid"), Names{"b_s"});
  EXPECT_EQ(a.reads(kCopy, "add"), Names{"b_s"});
  Loaded b = hazard("h06b_share_alloc_clobbers_value.txt");
  EXPECT_EQ(b.writes(kAlias, "sigmoid"), Names{"add"});
  EXPECT_EQ(b.copyViews.writeOf(b.at("sigmoid"), b.at("add"))->via, Via::ShareAlloc);
}

TEST(ProofsEffects, OpsWithoutASchemaMayReadWriteAndAliasEveryArgument) {
  Loaded l = hazard("h09_delegate_may_write_value.txt");
  const NodeEffects& d = l.copyViews.nodes[l.at("executorch_call_delegate_1")];
  EXPECT_TRUE(d.havoc);
  EXPECT_EQ(l.writes(kCopy, "executorch_call_delegate_1"), (Names{"mul", "lowered_module_1"}));
  // Its getitem may be the value itself, or fresh.
  EXPECT_EQ(l.roots(kCopy, "getitem_2"), (Names{"mul", "lowered_module_1", "executorch_call_delegate_1"}));
  EXPECT_EQ(l.roots(kCopy, "getitem"), (Names{"b_s", "x", "lowered_module_0", "executorch_call_delegate"}));
  // A getitem touches no storage itself.
  EXPECT_TRUE(l.copyViews.nodes[l.at("getitem")].reads.empty());
  EXPECT_TRUE(l.copyViews.nodes[l.at("getitem")].writes.empty());
}

TEST(ProofsEffects, ExpandAsAliasesItsSelfOnlyButReadsBoth) {
  Loaded l = hazard("h11_expand_as_precision.txt");
  EXPECT_EQ(l.roots(kCopy, "expand_as"), Names{"y"});
  EXPECT_EQ(l.reads(kCopy, "expand_as"), (Names{"b_s", "y"}));
  EXPECT_EQ(l.reads(kCopy, "add"), Names{"y"});
}

TEST(ProofsEffects, DeadReadersAreNotLiveAndWritersOfObservedStorageAre) {
  Loaded l = text(R"(
def forward(self, b_s: "f32[4]", x: "f32[4]"):
    dead: "f32[4]" = torch.ops.aten.add.Tensor(b_s, x)
    dead_2: "f32[4]" = torch.ops.aten.mul.Tensor(dead, 2)
    tmp: "f32[4]" = torch.ops.aten.zeros.default([4])
    scribble: "f32[4]" = torch.ops.aten.add_.Tensor(tmp, b_s)
    used: "f32[4]" = torch.ops.aten.mul.Tensor(b_s, 3)
    write: "f32[4]" = torch.ops.aten.add_.Tensor(x, 1)
    return (used,)
Graph signature:
    # inputs
    b_s: BUFFER target='s' persistent=True
    x: USER_INPUT
    # outputs
    used: USER_OUTPUT
)");
  for (const Effects* e : {&l.copyViews, &l.aliasViews}) {
    EXPECT_FALSE(e->nodes[l.at("dead")].live);
    EXPECT_FALSE(e->nodes[l.at("dead_2")].live);
    EXPECT_FALSE(e->nodes[l.at("scribble")].live);  // writes only a temporary nobody reads
    EXPECT_FALSE(e->nodes[l.at("tmp")].live);
    EXPECT_TRUE(e->nodes[l.at("used")].live);
    EXPECT_TRUE(e->nodes[l.at("write")].live);  // writes a placeholder: observed at the end
  }
}

TEST(ProofsEffects, MutationOutputsThatAreTheirTargetsStorageNeedNoCopy) {
  Loaded l = hazard("b2_copies_first_positional_specs.txt");
  const std::vector<MutationOutput> m = mutationOutputs(l.program, l.schemas);
  ASSERT_EQ(m.size(), 2u);
  EXPECT_TRUE(m[0].identity);  // index_put_(b_cache, ...) is b_cache
  EXPECT_FALSE(m[1].identity);
  EXPECT_EQ(m[1].target, l.at("x"));
  EXPECT_EQ(m[1].value, l.at("add"));
  // A placeholder returned as another target's value is a write-back (bug B1).
  Loaded b1 = hazard("b1_lineage_of_another_buffer.txt");
  const std::vector<MutationOutput> m1 = mutationOutputs(b1.program, b1.schemas);
  ASSERT_EQ(m1.size(), 1u);
  EXPECT_FALSE(m1[0].identity);
  // An out= variant returning its target is the target.
  Loaded out = text(R"(
def forward(self, b_s: "f32[4]", x: "f32[4]"):
    add: "f32[4]" = torch.ops.aten.add.out(x, x, out=b_s)
    return (add,)
Graph signature:
    # inputs
    b_s: BUFFER target='s' persistent=True
    x: USER_INPUT
    # outputs
    add: BUFFER_MUTATION target='s'
)");
  EXPECT_TRUE(mutationOutputs(out.program, out.schemas)[0].identity);
  EXPECT_EQ(out.writes(kCopy, "add"), Names{"b_s"});
}

TEST(ProofsEffects, PlaceholderNamedFindsOnlyPlaceholders) {
  Loaded l = hazard("h01_old_value_reader.txt");
  EXPECT_EQ(placeholderNamed(l.program.graph, "b_s"), l.at("b_s"));
  EXPECT_EQ(placeholderNamed(l.program.graph, "x"), l.at("x"));
  EXPECT_EQ(placeholderNamed(l.program.graph, "add"), kNoNode);  // a call, not a placeholder
  EXPECT_EQ(placeholderNamed(l.program.graph, "nothing"), kNoNode);
}

}  // namespace
}  // namespace wb::proofs
