// core/shape_rules.h: the shape rules of the ops wbcheck knows, and the check of a graph's
// annotated shapes against them (what validate() reports as a contradiction, DESIGN §2).
//
// A type annotation ("f32[4, 2]") is a claim about a node's result. The reader takes it as
// printed and a reducer may leave a stale one behind (shrink a view's size, keep its users'
// annotations); every tier that takes shapes from annotations would then run a program that
// does not exist. checkAnnotatedShapes() computes each result shape from the annotated shapes
// of its arguments with the rule of its op, and reports a node whose annotation says
// otherwise, or whose arguments no shape satisfies (mm of a vector, an index out of range).
//
// Only what is known is checked: ops of the rules below (pointwise ops with broadcasting,
// views, reductions, cat/stack, index ops, matrix products, factories), with every argument
// tensor annotated with a static shape and every size argument a literal. Anything else (a
// symbolic dimension, a missing annotation, an op without a rule, a custom op) is no
// contradiction. Dtypes are not checked.
//
// The arithmetic below (dimension wrapping, broadcasting, slice bounds, view size inference) is
// also the element tier's (oracle/element/layout.h, views.cpp): one definition of each rule.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/ir.h"

namespace wb {

// A static shape held inline (no allocation): at most kMaxRank dimensions.
struct StaticShape {
  static constexpr std::size_t kMaxRank = 16;
  std::array<std::int64_t, kMaxRank> dims{};
  std::size_t rank = 0;

  std::span<const std::int64_t> view() const { return {dims.data(), rank}; }
  // The number of elements, or nullopt if it overflows int64 (as TensorType::numel).
  std::optional<std::int64_t> numel() const {
    std::int64_t n = 1;
    for (std::int64_t d : view()) {
      if (d != 0 && n > std::numeric_limits<std::int64_t>::max() / d) return std::nullopt;
      n *= d;
    }
    return n;
  }
  bool push(std::int64_t d) {
    if (rank == kMaxRank) return false;
    dims[rank++] = d;
    return true;
  }
  friend bool operator==(const StaticShape& a, const StaticShape& b) {
    if (a.rank != b.rank) return false;
    for (std::size_t i = 0; i < a.rank; ++i)
      if (a.dims[i] != b.dims[i]) return false;
    return true;
  }
};

// The static shape of a tensor annotation ("f32[4, 2]" -> {4, 2}, "i64[]" -> {}); nullopt for
// anything else (a symbolic dimension, "Sym(s0)", a list, more than kMaxRank dimensions).
std::optional<StaticShape> parseStaticShape(std::string_view annotation);
// "[4, 2]".
std::string formatShape(std::span<const std::int64_t> shape);

// --- The arithmetic the rules are made of ---------------------------------------------------

// A dimension index wrapped into [0, rank) (PyTorch's maybe_wrap_dim: a 0-d tensor takes the
// dims of a 1-d one, 0 and -1), or nullopt when out of range.
std::optional<std::size_t> wrapDim(std::int64_t dim, std::size_t rank);
// NumPy broadcasting of one dimension pair, or nullopt when they do not broadcast.
std::optional<std::int64_t> broadcastDim(std::int64_t a, std::int64_t b);
// slice(dim, start, end, step) of a dimension of `size` (step > 0): start and end wrapped
// (negative from the end) and clamped to [0, size], as PyTorch's slice does.
struct SliceBounds {
  std::int64_t start = 0;
  std::int64_t length = 0;
};
SliceBounds sliceBounds(std::int64_t size, std::optional<std::int64_t> start, std::optional<std::int64_t> end,
                        std::int64_t step);
// view/reshape: replaces a -1 in `sizes` by what makes the element count `numel`. Returns an
// error message (two -1 sizes, a negative size, element counts that differ), or nullptr.
const char* inferViewSizes(std::span<std::int64_t> sizes, std::int64_t numel);

// --- The check --------------------------------------------------------------------------------

struct ShapeContradiction {
  NodeId node = kNoNode;  // in the graph checked
  std::string message;    // "aten::view_copy gives [2, 3] but the annotation says f32[3, 2]"
};

// Every node of `graph` whose annotation contradicts the rule of its op, or whose arguments no
// shape satisfies, and every in-place op of a known rule whose self is not a node, in graph
// order. Precondition: the references of `graph` are valid (each
// node refers to earlier nodes only; validate()'s structural checks).
std::vector<ShapeContradiction> checkAnnotatedShapes(const Graph& graph);

}  // namespace wb
