// proofs/effects.h: storage effects of a program, derived afresh for the proofs (DESIGN §5,
// §7, §11; executorch-semantics §5.1).
//
// What the storage semantics the oracle runs (S_par, in both view modes) says each node does:
// which storage roots its value may share, which roots it reads and which it writes. This is
// a second derivation, independent of core's alias analysis (core/alias.*), on purpose: the
// ordering proof states its constraints in these terms, so a bug must fool core, the oracle
// and this code at once to go unseen. Only core/ir.h and the schema table are used.
//
// Rules, per node (a root is the node that creates a storage: a placeholder, a get_attr, or a
// call with a fresh result):
// - schema ops whose arguments bind to the schema: a tensor return shares the roots of every
//   argument whose alias set intersects its own (`Tensor(a) self -> Tensor(a)`: views,
//   in-place and out= results; `Tensor(a -> *)` lists), or is fresh; a return annotated with a
//   set no argument declares may alias any tensor argument. The node reads every node it
//   names (whatever the declared type: a tensor passed where the schema says Scalar is read
//   too; shape-only uses such as expand_as's `other` count as reads, as the schema cannot say
//   otherwise) and writes the roots of every argument annotated `(a!)`, each element of a
//   `Tensor(a!)[]` list included;
// - the `*_copy` view variants the oracle turns into views (view_copy, slice_copy, ...,
//   _unsafe_view): in the copy-views mode a fresh result that reads its self; in the
//   alias-views mode a view of its self, except a `view_copy` the program returns at a
//   position whose output spec is no mutation (ExecuTorch's ReplaceViewCopyWithViewPass
//   leaves it a copy, as the oracle does);
// - meta `_share_alloc_with_arg_idx = k`: the result lives in the storage of (raw) argument
//   k, so it shares those roots and the node writes them;
// - ops without a usable schema (`executorch_call_delegate`, undeclared custom ops,
//   `call_module`, higher-order ops, arguments that do not bind): havoc. They may read and
//   write every tensor argument, list elements included, and return a view of any of them or
//   a fresh result. They are never treated as pure (issue 20): a placement must order its
//   copies as if they did all of that, whatever one run of them happens to do;
// - `operator.getitem` projects its container (the element's roots for a node with several
//   returns, else the container's) and touches no storage itself;
// - the output node reads what it returns; placeholders and get_attrs create their roots.
// Every node's effects are final when it is visited, and root sets are closed over ancestors
// and siblings (a later `add_(t)` writes `v = relu_(t)`: both hold root t).
//
// Liveness: a node is live when its result may reach an observation (the output, a live
// node's argument) or it writes a root whose contents may still be observed (a placeholder
// other than a mutation output's target, which S_par's end overwrites whole; a root a live
// later node reads or the output returns). A node that is not live has no
// effect any run could observe, so its reads bind nothing (see proofs/ordering.h). Placeholders
// are always live; a get_attr only when a live node uses it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/ir.h"
#include "core/schema.h"
#include "oracle/oracle.h"

namespace wb::proofs {

using ViewMode = oracle::ViewMode;

// A reference is the index of its defining node (Arg::node, core/ir.h); an argument that is
// no reference holds kNoNode there. Signatures name their placeholders by text: this finds one.
NodeId placeholderNamed(const Graph& graph, std::string_view name);

// How a value comes to share a root, or a node to touch one.
enum class Via : std::uint8_t {
  Own,          // the node's own storage (placeholder, get_attr, fresh result)
  Argument,     // a schema argument (aliased return, `(a!)` write, or a read)
  ListElement,  // an element of a list argument
  CopyView,     // a `*_copy` view variant, a view in the alias-views mode
  ShareAlloc,   // `_share_alloc_with_arg_idx`
  Havoc,        // no schema: may alias, read and write every tensor argument
  Getitem,      // an element of a node with several results
};
std::string_view toString(Via via);

// Root `root` of a value, reached through the argument value `from` (the node itself for Own).
struct RootLink {
  NodeId root = kNoNode;
  NodeId from = kNoNode;
  Via via = Via::Own;
  friend bool operator==(const RootLink&, const RootLink&) = default;
};

// One storage access of a node: `root`, touched through the argument value `through`.
struct Access {
  NodeId root = kNoNode;
  NodeId through = kNoNode;
  std::int32_t argument = -1;  // argument position (schema position when bound, else as
                               // written; -1 for none)
  std::int32_t element = -1;   // list element index, -1 if the argument is no list
  Via via = Via::Argument;
  friend bool operator==(const Access&, const Access&) = default;
};

struct NodeEffects {
  std::vector<RootLink> roots;                 // sorted by root, one link per root
  std::vector<std::vector<RootLink>> elements;  // per result of a node with several results
  std::vector<Access> reads, writes;           // sorted by root, one (the first) per root
  bool havoc = false;                          // no usable schema (see above)
  bool live = true;
  // Live even if ops without a schema wrote nothing (what a run that draws "no write" for
  // them, as the oracle's behaviour draw 0 does, can observe): false when only havoc keeps it
  // live.
  bool liveWithoutHavocWrites = true;
};

struct Effects {
  ViewMode mode = ViewMode::CopyViews;
  std::vector<NodeEffects> nodes;  // per node of the graph
  // Per root (indexed by node): the non-output nodes that read / write it, in graph order.
  std::vector<std::vector<NodeId>> readersOf, writersOf;
  // Some node is a `*_copy` view variant that the alias-views mode makes a view of its self
  // (the only rule that depends on the mode): the other mode's effects differ. False: both
  // modes have exactly these effects, and a caller may derive them once.
  bool viewModesDiffer = false;

  bool mayAlias(NodeId value, NodeId root) const;
  const Access* readOf(NodeId node, NodeId root) const;
  const Access* writeOf(NodeId node, NodeId root) const;
};

// How `value` comes to share `root`: the links from the value back to the root (the first is
// the value's own link to it, the last the root's Own link or the step that reaches it). Empty
// if it does not share it.
std::vector<RootLink> aliasPath(const Effects& effects, NodeId value, NodeId root);
// The path passes an op without a schema: the value shares the root only because such an op
// may return a view of its argument (havoc), not because any op's contract says it does.
bool sharesOnlyThroughHavoc(const Effects& effects, NodeId value, NodeId root);

// `schemas` should be schemasFor(program, builtinSchemas()). The program must be valid.
Effects deriveEffects(const Program& program, const SchemaTable& schemas, ViewMode mode);
// The same, given the program's effects in the other mode (`otherMode`, from the call above):
// the nodes the modes cannot treat differently (no `*_copy` view variant, and every value they
// name has the same roots in both modes) are copied from it, not derived again. Equal to the
// call above.
Effects deriveEffects(const Program& program, const SchemaTable& schemas, ViewMode mode, const Effects& otherMode);

// A mutation output (BUFFER_MUTATION or USER_INPUT_MUTATION) as the storage semantics sees it:
// S_par writes `value`'s contents into `target` at the end.
struct MutationOutput {
  std::size_t outputIndex = 0;
  NodeId target = kNoNode;  // the placeholder written
  NodeId value = kNoNode;   // the returned node (kNoNode: a constant, nothing to write)
  // `value` is `target`'s whole storage (the placeholder itself, or an op returning a written
  // argument that is, e.g. `index_put_(b, ...)`, `add.out(..., out=b)`): the end write
  // changes nothing, so no copy is needed.
  bool identity = false;
};
std::vector<MutationOutput> mutationOutputs(const Program& program, const SchemaTable& schemas);

// Names for explanations: "b_s", "%add".
std::string nodeLabel(const Graph& graph, NodeId n);

}  // namespace wb::proofs
