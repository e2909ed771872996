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
#include "core/schema.h"

namespace wb {

// Index of a node in Program::graph.nodes. A root is named by the node that creates it.
using NodeId = std::uint32_t;
using RootId = NodeId;
inline constexpr NodeId kNoNode = std::numeric_limits<NodeId>::max();

// A hash of a name for the flat indices below (FNV-style multiply over 8-byte words, then a
// final mix so the low bits, which pick the slot, depend on every byte). Only speed depends on
// it: nothing iterates an index, so no result depends on hash order.
inline std::uint64_t hashName(std::string_view s) {
  constexpr std::uint64_t kMul = 0x9E3779B97F4A7C15ull;
  auto load64 = [](const char* p) {
    std::uint64_t w;
    std::memcpy(&w, p, 8);
    return w;
  };
  auto load32 = [](const char* p) {
    std::uint32_t w;
    std::memcpy(&w, p, 4);
    return std::uint64_t{w};
  };
  std::uint64_t h = s.size() * kMul;
  const char* p = s.data();
  std::size_t n = s.size();
  for (; n > 8; p += 8, n -= 8) {
    h = (h ^ load64(p)) * kMul;
    h ^= h >> 29;
  }
  // The last 1 to 8 bytes in at most two loads (overlapping ones when the name is long enough):
  // a byte-by-byte copy of the tail stalls on store forwarding, and most names are short.
  std::uint64_t w = 0;
  if (s.size() >= 8) w = load64(s.data() + s.size() - 8);
  else if (n >= 4) w = (load32(p) << 32) | load32(p + n - 4);
  else if (n > 0) w = (std::uint64_t{static_cast<unsigned char>(p[0])} << 16) |
                      (std::uint64_t{static_cast<unsigned char>(p[n / 2])} << 8) | static_cast<unsigned char>(p[n - 1]);
  h = (h ^ w) * kMul;
  h ^= h >> 32;
  h *= 0xD6E8FEB86659FD93ull;
  h ^= h >> 32;
  return h;
}

// Starts loading a node that a pass over the graph will reach soon. Passes over 10^6 nodes
// stream them from memory; a Node spans several cache lines, which the hardware prefetchers do
// not reliably follow.
inline void prefetchNode(const Node& node) {
  const char* p = reinterpret_cast<const char*>(&node);
  for (std::size_t line = 0; line < sizeof(Node); line += 64) __builtin_prefetch(p + line);
}

// Name -> id: open addressing over one flat array of (32 bits of hash, id); the names stay
// where they are and `keyOf(id)` fetches one, so an index over 10^6 node names is 8 bytes a
// slot and compares a name only on a likely hit. Interning names once per analysis is what
// keeps the analysis and the rewrite linear and allocation-poor.
template <typename KeyOf>
class FlatNameIndex {
 public:
  explicit FlatNameIndex(KeyOf keyOf, std::size_t expected) : keyOf_(std::move(keyOf)) {
    std::size_t capacity = 8;
    while (capacity < expected * 2 + 2) capacity <<= 1;
    slots_.assign(capacity, Slot{});
    mask_ = capacity - 1;
  }
  // Adds keyOf(id) -> id unless the name is present (the first id stays). Returns the id the
  // name maps to. The table grows as needed.
  std::uint32_t insert(std::uint32_t id) { return insertHashed(id, hashName(keyOf_(id))); }
  // insert() with the name's hashName() already computed (see prefetch()).
  std::uint32_t insertHashed(std::uint32_t id, std::uint64_t h) {
    if ((size_ + 1) * 2 > slots_.size()) grow();
    const std::string_view name = keyOf_(id);
    for (std::size_t at = h & mask_;; at = (at + 1) & mask_) {
      Slot& s = slots_[at];
      if (s.id == kNone) {
        s = Slot{static_cast<std::uint32_t>(h >> 32), id};
        ++size_;
        return id;
      }
      if (s.hash == static_cast<std::uint32_t>(h >> 32) && keyOf_(s.id) == name) return s.id;
    }
  }
  // Starts loading the slot a name with hash `h` lands in. On 10^6 names the slot array is far
  // larger than the caches and every probe misses; hashing a name some steps ahead and
  // prefetching its slot overlaps those misses with useful work.
  void prefetch(std::uint64_t h) const { __builtin_prefetch(slots_.data() + (h & mask_)); }
  // The id of `name`, or kNone.
  std::uint32_t find(std::string_view name) const {
    const std::uint64_t h = hashName(name);
    for (std::size_t at = h & mask_;; at = (at + 1) & mask_) {
      const Slot& s = slots_[at];
      if (s.id == kNone) return kNone;
      if (s.hash == static_cast<std::uint32_t>(h >> 32) && keyOf_(s.id) == name) return s.id;
    }
  }
  static constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();

 private:
  struct Slot {
    std::uint32_t hash = 0;
    std::uint32_t id = kNone;
  };
  void grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(old.size() * 2, Slot{});
    mask_ = slots_.size() - 1;
    for (const Slot& o : old) {
      if (o.id == kNone) continue;
      std::size_t at = hashName(keyOf_(o.id)) & mask_;
      while (slots_[at].id != kNone) at = (at + 1) & mask_;
      slots_[at] = o;
    }
  }
  KeyOf keyOf_;
  std::vector<Slot> slots_;
  std::size_t mask_ = 0;
  std::size_t size_ = 0;
};

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
  template <typename T>
  static std::span<const T> span(const std::vector<T>& pool, Span s) {
    return {pool.data() + s.begin, s.size};
  }
  static constexpr std::uint8_t kConservative = 1;
  static constexpr std::uint8_t kInplaceKind = 2;

  // Everything per node in one record: one allocation per analysis instead of one per field
  // (the oracle analyses ~30-node programs many thousand times a second). The root ranges,
  // read for every argument of every node, stay in a dense array of their own: on 10^6
  // nodes the cache misses of a 56-byte record per lookup cost more than the allocation.
  struct PerNode {
    Span elements;   // range in elementPool_ (size 0: none)
    Span reads, writes;           // ranges in readPool_ / writePool_
    LastAccess lastRead, lastWrite;  // of the root this node creates (indexed by node)
    NodeId firstArg = kNoNode;
    std::uint8_t flags = 0;
  };

  std::vector<PerNode> nodes_;
  std::vector<Span> rootSpan_;  // per node: range in rootPool_
  std::vector<RootId> rootPool_;
  std::vector<Span> elementPool_;   // per element: range in rootPool_
  std::vector<RootAccess> readPool_, writePool_;
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
