// proofs/op_model.h: what the symbolic executors need to know about a node (internal to
// proofs/): the kind of op (the same classes as the oracle's, derived here from the schemas
// again) and its arguments bound to schema positions with defaults filled in. A reference is
// the index of its defining node (Arg::node, core/ir.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/ir.h"
#include "core/schema.h"
#include "proofs/effects.h"

namespace wb::proofs::detail {

enum class OpKind : std::uint8_t {
  Hash,  // uninterpreted: a digest of every argument
  Add, Sub, Rsub, Mul, Neg, Sum, Mean,
  IndexPut, IndexCopy, IndexAdd, IndexSelect, IndexTensor, SliceScatter, SelectScatter, Scatter,
  ScatterAdd, Cat, Stack, Copy, Clone, Where, Fill, Zero, MaskedFill, Factory, FactoryLike, Arange,
  ForeachAdd, ForeachSub, ForeachMul,
  SymSize,
  // views
  Select, Slice, Narrow, Expand, ExpandAs, Transpose, T, Permute, Unsqueeze, Squeeze, View,
  ViewAs, Diagonal, AsStrided, Alias, Contiguous, Split, SplitWithSizes, Chunk, Unbind,
};

inline bool isView(OpKind kind) { return kind >= OpKind::Select; }
inline bool isListView(OpKind kind) {
  return kind == OpKind::Split || kind == OpKind::SplitWithSizes || kind == OpKind::Chunk || kind == OpKind::Unbind;
}

struct OpModel {
  const Schema* schema = nullptr;  // null: schema-less (custom, delegate, HOP, call_module)
  OpKind kind = OpKind::Hash;
  bool getitem = false;
  bool inplace = false;      // torchgen's in-place kind
  bool copyVariant = false;  // a `*_copy` view variant (or _unsafe_view)
  bool outVariant = false;   // a return aliases a written keyword-only argument
  // The first written argument in the alias set of the first return, or -1.
  int resultWrites = -1;
};

OpModel modelOf(const Node& node, const SchemaTable& schemas);

// Two alias annotations name the same non-empty set.
bool sameAliasSet(const SchemaType& a, const SchemaType& b);

// A schema default as an Arg (None, True, 3, 1.5, [0, 1], 'none', a token).
Arg parseDefault(std::string_view text);

// The arguments of a call at its schema's positions (defaults filled in; a missing optional
// argument is None), or the reason they do not fit.
struct Bound {
  std::vector<Arg> args;
  std::string error;  // non-empty: they do not fit
};
Bound bindArguments(const Node& node, const Schema& schema);

// Per node: the output node returns it at a visible position (a position whose spec is not a
// mutation): ExecuTorch's view pass keeps such a view_copy a copy.
std::vector<bool> returnedAtVisiblePositions(const Program& program);
// Positions of the returned values whose spec is not BUFFER_MUTATION (the visible outputs).
std::vector<std::size_t> visibleOutputPositions(const Program& program);
// Per node: the getitem nodes that take an element of it, and which element.
std::vector<std::vector<std::pair<std::size_t, std::int64_t>>> getitemUsers(const Program& program);
// A float scalar as an element: integral values exactly, others by a hash of their bits, as the
// oracle makes them (oracle/ops.h: scalarElement).
std::uint64_t scalarBits(double value);
// A string or token as the oracle's elements and constants hash it (oracle/ops.h: hashText).
std::uint64_t textBits(std::string_view text);

}  // namespace wb::proofs::detail
