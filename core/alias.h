// core/alias.h: alias and effect analysis (DESIGN §5).
//
// Every value (node) gets the set of storage roots it may share memory with. A root is a
// storage allocation: a placeholder, a get_attr, or the fresh result of a node; it is named by
// the node that creates it. Every node gets the roots it reads and the roots it writes, each
// with the argument value through which it touches them (for explanations).
//
// Root sets, not a forward walk from each value: `v = relu_(t)` has roots {t}, so a later
// `add_(t, 1)`, which writes root t, is seen as writing v (ancestors and siblings, hazard H10).
// The analysis is one pass in graph order, linear in nodes times roots per value.
//
// What makes a result share an argument's roots (executorch-semantics §5.1):
// - the schema: argument k is aliased iff a return's alias set intersects argument k's
//   (`expand_as(Tensor(a) self, Tensor other)` aliases self only; `Tensor(a -> *)` lists too);
// - `*_copy` view variants (view_copy, select_copy, ...) alias their self, because
//   ExecuTorch's ReplaceViewCopyWithViewPass later turns them into real views (hazard H5);
// - meta `_share_alloc_with_arg_idx = k`: the result lives in argument k's storage, and the
//   node writes those roots (hazard H6);
// - schema-less targets, higher-order ops, `executorch_call_delegate`, `call_module`, and
//   nodes whose arguments do not bind to their schema: may alias, read and write every tensor
//   argument (conservative; hazards H2, H9).
// `operator.getitem` projects its container's roots (the element's, when the container's
// schema has several returns) and touches no storage itself: it neither reads nor writes.
// The output node reads everything it returns; it is never a writer.
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/ir.h"
#include "core/name_index.h"
#include "core/schema.h"

namespace wb {

// A root is named by the node that creates it (NodeId: core/ir.h).
using RootId = NodeId;

// One storage access of a node: `root`, reached through the argument value `via` (a node).
struct RootAccess {
  RootId root = kNoNode;
  NodeId via = kNoNode;
  friend bool operator==(const RootAccess&, const RootAccess&) = default;
};

// The last node of the graph (other than the output node) that touched a root, and through
// which value. `node == kNoNode` when no node did.
struct LastAccess {
  NodeId node = kNoNode;
  NodeId via = kNoNode;
  bool exists() const { return node != kNoNode; }
};

struct AliasOptions {
  // Treat the `*_copy` view variants as aliases of their self (they become views later).
  // Turning this off models the graph before ReplaceViewCopyWithViewPass only; it is unsound
  // for placing copies and exists for experiments and for showing hazard H5.
  bool copyViewsAlias = true;
};

// The analysis of one program. A value type: it holds indices only, no pointers into the
// program, so it may outlive it (the indices then refer to the program it was computed on).
class AliasInfo {
 public:
  std::size_t nodeCount() const { return nodes_.size(); }

  // The roots value `v` may share storage with, sorted ascending. Empty for values that are
  // no tensors (SymInts, `-> ()` ops, the output node).
  std::span<const RootId> rootsOf(NodeId v) const { return span(rootPool_, rootSpan_[v]); }
  // Element `i` of a node returning several values (a schema with several returns), or
  // rootsOf(v) when the node has no per-element information or `i` is out of range.
  std::span<const RootId> elementRootsOf(NodeId v, std::int64_t i) const;
  // The roots node `n` reads / writes, each once (the first argument through which it does),
  // sorted by root.
  std::span<const RootAccess> reads(NodeId n) const { return span(readPool_, nodes_[n].reads); }
  std::span<const RootAccess> writes(NodeId n) const { return span(writePool_, nodes_[n].writes); }
  bool readsRoot(NodeId n, RootId r) const;
  bool writesRoot(NodeId n, RootId r) const;
  // Values a and b may share storage: their root sets intersect.
  bool mayAliasRoots(NodeId a, NodeId b) const;
  // Value v may share storage with root r.
  bool mayAliasRoot(NodeId v, RootId r) const;

  // The last non-output node reading / writing root r, in graph order.
  LastAccess lastReader(RootId r) const { return nodes_[r].lastRead; }
  LastAccess lastWriter(RootId r) const { return nodes_[r].lastWrite; }

  // Whether the analysis treated node n conservatively (no usable schema): it may alias,
  // read and write every tensor argument.
  bool isConservative(NodeId n) const { return nodes_[n].flags & kConservative; }
  // Node n is a call with an in-place-kind schema (torchgen SchemaKind::inplace).
  bool isInplaceKind(NodeId n) const { return nodes_[n].flags & kInplaceKind; }
  // The node referenced by args[0] of node n, or kNoNode (for in-place lineage walks).
  NodeId firstArg(NodeId n) const { return nodes_[n].firstArg; }
  // The values the output node returns, by position (kNoNode for a constant).
  const std::vector<NodeId>& returned() const { return returned_; }
  // Index of the output node, or kNoNode.
  NodeId outputNode() const { return output_; }

 private:
  friend class AliasBuilder;
  struct Span {
    std::uint32_t begin = 0;
    std::uint32_t size = 0;
  };
  template <typename Pool>
  static std::span<const typename Pool::value_type> span(const Pool& pool, Span s) {
    return {pool.data() + s.begin, s.size};
  }
  static constexpr std::uint8_t kConservative = 1;
  static constexpr std::uint8_t kInplaceKind = 2;

  // Everything per node in one record: one allocation per analysis instead of one per field
  // (the oracle analyses small programs over and over). The root ranges, read for every
  // argument of every node, stay in a dense array of their own, apart from the larger records.
  struct PerNode {
    Span elements;   // range in elementPool_ (size 0: none)
    Span reads, writes;           // ranges in readPool_ / writePool_
    LastAccess lastRead, lastWrite;  // of the root this node creates (indexed by node)
    NodeId firstArg = kNoNode;
    std::uint8_t flags = 0;
  };

  // Per node and pools over all nodes: large on large programs (see HugePageAllocator).
  HugePageVector<PerNode> nodes_;
  HugePageVector<Span> rootSpan_;  // per node: range in rootPool_
  HugePageVector<RootId> rootPool_;
  HugePageVector<Span> elementPool_;   // per element: range in rootPool_
  HugePageVector<RootAccess> readPool_, writePool_;
  std::vector<NodeId> returned_;
  NodeId output_ = kNoNode;
};

// Analyses a valid program (see validate()). `schemas` should be schemasFor(program, ...).
AliasInfo analyzeAliases(const Program& program, const SchemaTable& schemas,
                         const AliasOptions& options = {});

// A `*_copy` view variant (or `_unsafe_view`): an op that a later ExecuTorch pass may turn into
// a view of its self. `target` is normalised ("aten::view_copy", "aten::slice_copy.Tensor").
bool isCopyViewVariant(std::string_view target);

// Names, for tests and diagnostics: the roots of the named value, by root name.
std::vector<std::string> rootNames(const AliasInfo& info, const Graph& graph, std::string_view value);
// The roots node `node` reads / writes, by root name.
std::vector<std::string> readNames(const AliasInfo& info, const Graph& graph, std::string_view node);
std::vector<std::string> writeNames(const AliasInfo& info, const Graph& graph, std::string_view node);

}  // namespace wb
