// core/rewrite.h: the graph surgery shared by every placement.
//
// Each placement decides *where* its copies go; this module performs the insertion the same
// way for all of them: new `aten::copy_(target, value)` nodes with fresh names, the output
// tuple rewritten, the output specs renamed, every reference renumbered to the new layout
// (renumberReferences). Keeping it in one place keeps the placements
// comparable: they differ only in their decisions.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "core/ir.h"

namespace wb {

struct CopyInsertion {
  std::size_t outputIndex = 0;  // index of the mutation output (== output spec index)
  // The copy goes right after this node of the input graph (an index into graph.nodes).
  // Copies anchored at the same node appear in the order of the request vector.
  // Use the output node's index for "just before the output node".
  std::size_t afterNode = 0;
};

enum class OutputOrder {
  KeepPositions,  // copy_i replaces value_i where value_i stood (ours, DESIGN §6)
  CopiesFirst,    // upstream: [copies in request order..., other outputs in order], then the
                  // mutation specs are renamed by position (bug B2, executorch-semantics §2.3)
};

// How the copies are named.
enum class CopyNames {
  Plain,  // copy_, copy__1, copy__2, ...: wbcheck's own placements (`early`, `end`)
  Fx,     // copy__default, copy__default_1, ...: what FX names a node whose target is
          // aten.copy_.default (its `_Namespace.create_name` on "copy_.default"), as the real
          // passes' printouts show; the models of real code use it
};

struct RewriteResult {
  Program program;
  std::vector<std::string> copyNames;    // copyNames[i] is the node inserted for requests[i]
  std::vector<std::size_t> copyPositions;  // its index in program.graph.nodes
};

// The name FX would give a new node with base `base` ("copy_", "clone") that is unused in
// `graph`: base, base_1, base_2, ... (FX appends "_N"; a base ending in '_' gives "copy__1").
std::string freshName(const Graph& graph, const std::string& base);

// Inserts one `aten::copy_(placeholder of the spec's target, value)` per request. The caller
// guarantees every request names a mutation output whose target resolves, and a valid program
// (references to earlier nodes). The copy carries its target's type annotation (copy_ returns
// its first argument, the placeholder it writes). Copies are named in request order, each with
// the first name of `names`' sequence unused in the graph and after the previous copy's (as FX
// names nodes in creation order).
RewriteResult insertWriteBacks(const Program& program, const std::vector<CopyInsertion>& requests,
                               OutputOrder order, CopyNames names = CopyNames::Plain);
// The same, consuming `program`: its nodes and signature are moved into the result instead of
// copied (a deep copy of a large program costs as much as deciding where its copies go).
RewriteResult insertWriteBacks(Program&& program, const std::vector<CopyInsertion>& requests,
                               OutputOrder order, CopyNames names = CopyNames::Plain);

}  // namespace wb
