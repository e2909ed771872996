// core/placement_models.cpp: faithful models of the upstream write-back pass, of PR #20744
// (each version of its branch) and of draft PR #13857 (see placement_models.h).
//
// These reproduce real Python code, bugs included (executorch-semantics §2, §4): the point is to
// let the oracle and the proofs show, on real algorithms, what they find. Where the originals
// would raise, the model reports PlacedProgram::failure instead; where an original would crash
// on an input a valid wbcheck program can still contain, the choice made is documented at the
// spot. The helpers mirror the Python names: inplaceLineage (`_inplace_lineage`),
// mayAliasInput (`_may_alias_input`), mutatesInput (`_mutates_input`), collectAliases
// (`_collect_aliases`), insertionPoint (`_insertion_point`).
#include "core/placement_models.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "core/name_index.h"
#include "core/rewrite.h"
#include "core/shape_rules.h"

namespace wb {
// Helpers live in their own namespace so that names later added to `wb` cannot clash with them.
namespace models {
namespace {

// ---------------------------------------------------------------------------------------------
// What FX keeps on every node: its index (node_order), its distinct input nodes
// (`all_input_nodes`, in first-use order) and its distinct users (`users`, in graph order).
// Two flat tables (node i's inputs are inputList[inputStart[i], inputStart[i + 1]), its users
// likewise): every model analyses the program it places, and two vectors per node were most of
// a model's allocations.

struct GraphFacts {
  std::vector<std::uint32_t> inputStart, inputList;
  std::vector<std::uint32_t> userStart, userList;

  std::span<const std::uint32_t> inputs(std::size_t i) const {
    return std::span(inputList).subspan(inputStart[i], inputStart[i + 1] - inputStart[i]);
  }
  std::span<const std::uint32_t> users(std::size_t i) const {
    return std::span(userList).subspan(userStart[i], userStart[i + 1] - userStart[i]);
  }
};

GraphFacts analyse(const Graph& graph) {
  GraphFacts facts;
  const std::size_t n = graph.nodes.size();
  facts.inputStart.reserve(n + 1);
  facts.inputStart.push_back(0);
  facts.inputList.reserve(2 * n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t first = facts.inputList.size();
    auto addInput = [&](NodeId input) {
      const auto begin = facts.inputList.begin() + static_cast<std::ptrdiff_t>(first);
      if (std::find(begin, facts.inputList.end(), input) == facts.inputList.end()) facts.inputList.push_back(input);
    };
    const Node& node = graph.nodes[i];
    for (const Arg& a : node.args) forEachRef(a, addInput);
    for (const auto& [key, a] : node.kwargs) forEachRef(a, addInput);
    facts.inputStart.push_back(static_cast<std::uint32_t>(facts.inputList.size()));
  }
  // Users: count each node's, make userStart[k] the end of k's run, then fill the runs from
  // the back in reverse graph order, which leaves userStart[k] at the start of k's run and
  // every run in graph order.
  facts.userStart.assign(n + 1, 0);
  for (std::uint32_t input : facts.inputList) ++facts.userStart[input];
  for (std::size_t k = 1; k <= n; ++k) facts.userStart[k] += facts.userStart[k - 1];
  facts.userList.resize(facts.inputList.size());
  for (std::size_t i = n; i-- > 0;)
    for (std::uint32_t input : facts.inputs(i)) facts.userList[--facts.userStart[input]] = static_cast<std::uint32_t>(i);
  return facts;
}

std::optional<std::size_t> nodeIndex(const Arg& arg) {
  if (!arg.isRef()) return std::nullopt;
  return arg.node;
}

// `hasattr(node.target, "_schema")`: only call_function nodes whose target has a schema in the
// table. operator.getitem, delegates, higher-order ops and unknown ops have none.
const Schema* schemaOf(const Node& node, const SchemaTable& schemas) {
  if (node.op != NodeOp::CallFunction) return nullptr;
  return schemas.find(node.target, node.args.size());
}

std::string percent(const std::string& name) { return "%" + name; }

// ---------------------------------------------------------------------------------------------
// Upstream's choice of write-backs (executorch-semantics §2.1 steps 1-3, §2.2). The PR and the
// draft change only `_insert_copy`, so all three models share it.

struct SelectedWriteBack {
  std::size_t outputIndex = 0;          // the output spec index
  std::size_t bufferNode = 0;           // input_name_to_node[spec.target]: what the copy writes
  std::optional<std::size_t> valueNode; // the returned node (nullopt for a constant output)
};

struct Selection {
  std::vector<SelectedWriteBack> writeBacks;  // in spec order
  std::vector<std::string> skipped;
  std::optional<std::string> failure;
};

// torch.export gives a USER_INPUT a TensorArgument unless it is a SymInt or a constant; the
// annotation tells us which. Without an annotation we assume a tensor (the common case).
bool isTensorUserInput(const Node& placeholder) {
  // A static shape is read without building a TensorType (an allocation per dimension); every
  // annotation it reads is a tensor type.
  return placeholder.typeText.empty() || parseStaticShape(placeholder.typeText) || placeholder.tensorType().has_value();
}

// `_inplace_lineage(ret, gs, kind)` (§2.2): follow args[0] through in-place-kind schemas to a
// placeholder, then accept *any* buffer (BUFFER_MUTATION) or *any* user input
// (USER_INPUT_MUTATION): bug B1. Returns the terminal placeholder when the lineage holds.
std::optional<std::size_t> inplaceLineage(const Program& program, const SchemaTable& schemas, const Arg& returned,
                                          OutputKind kind) {
  if (!isMutation(kind)) return std::nullopt;
  std::optional<std::size_t> current = nodeIndex(returned);
  // A constant output has no `.op`; Python would raise AttributeError. Validation rejects a
  // mutation output that is not a node, so treating it as "no lineage" (copy) is only a guard.
  // The graph is topological, so each step goes to an earlier node and the walk ends; the
  // bound is a second guard.
  for (std::size_t steps = 0; current && steps <= program.graph.nodes.size(); ++steps) {
    const Node& node = program.graph.nodes[*current];
    if (node.isPlaceholder()) {
      const InputSpec* spec = program.signature.inputForPlaceholder(node.name);
      if (!spec) return std::nullopt;
      // `ret.target in gs.inputs_to_buffers` / `ret.target in gs.user_inputs`: membership only.
      const InputKind wanted = kind == OutputKind::BufferMutation ? InputKind::Buffer : InputKind::UserInput;
      if (spec->kind == wanted) return current;
      return std::nullopt;
    }
    const Schema* schema = schemaOf(node, schemas);
    if (!schema || !schema->isInplaceKind()) return std::nullopt;
    // "self is always first": ret = ret.args[0]. An in-place op with no node as args[0] would
    // make Python raise; we stop the walk instead, which leads to a copy.
    if (node.args.empty()) return std::nullopt;
    current = nodeIndex(node.args[0]);
  }
  return std::nullopt;
}

// "output 2 (BUFFER_MUTATION target='k', value %kp)" followed by `then`. The models explain
// every copy they plan and every output they skip, each text in one fmt::format: a chain of `+`
// allocates at every step.
std::string describeSpec(std::size_t index, const OutputSpec& spec, std::string_view then) {
  const bool constant = spec.name.empty();
  return fmt::format("output {} ({} target='{}', value {}{}){}", index, toString(spec.kind), spec.target,
                     constant ? "a constant" : "%", constant ? std::string_view() : std::string_view(spec.name), then);
}

Selection selectUpstreamWriteBacks(const Program& program, const SchemaTable& schemas) {
  Selection selection;
  const Graph& graph = program.graph;
  const Signature& signature = program.signature;

  // Steps 1-2: lifted_inputs zipped with the placeholders into one plain dict. FQNs and user
  // input names share it, and a later entry wins: a user input `x` hides a buffer with FQN `x`.
  std::vector<std::size_t> placeholders;
  placeholders.reserve(signature.inputs.size());
  for (std::size_t i = 0; i < graph.nodes.size(); ++i)
    if (graph.nodes[i].isPlaceholder()) placeholders.push_back(i);
  if (placeholders.size() != signature.inputs.size()) {
    selection.failure = "AssertionError: placeholders and input specs differ in number";
    return selection;
  }
  // Input spec k's key in that dict: its FQN, or a tensor user input's name; none for a token.
  auto keyOf = [&](std::uint32_t k) -> std::string_view {
    const InputSpec& in = signature.inputs[k];
    return in.kind == InputKind::UserInput ? std::string_view(in.name) : std::string_view(in.target);
  };
  // The index keeps the first id of a key, so the specs go in last to first.
  FlatNameIndex<decltype(keyOf)> inputNameToNode(keyOf, placeholders.size());
  for (std::size_t k = placeholders.size(); k-- > 0;) {
    const InputSpec& in = signature.inputs[k];
    switch (in.kind) {
      case InputKind::Buffer:
      case InputKind::ConstantTensor:
      case InputKind::Parameter:
      case InputKind::CustomObj: inputNameToNode.insert(static_cast<std::uint32_t>(k)); break;
      case InputKind::UserInput:
        if (isTensorUserInput(graph.nodes[placeholders[k]])) inputNameToNode.insert(static_cast<std::uint32_t>(k));
        break;
      case InputKind::Token: break;
    }
  }

  // Step 3: mutated_outputs.
  const std::span<const Arg> returned = graph.returnedArgs();
  if (returned.size() != signature.outputs.size()) {
    selection.failure = "AssertionError: returned values and output specs differ in number";
    return selection;
  }
  selection.writeBacks.reserve(signature.outputs.size());
  for (std::size_t i = 0; i < signature.outputs.size(); ++i) {
    const OutputSpec& spec = signature.outputs[i];
    if (!isMutation(spec.kind)) continue;
    const std::uint32_t targetSpec = inputNameToNode.find(spec.target);
    if (targetSpec == decltype(inputNameToNode)::kNone) {
      selection.skipped.push_back(describeSpec(
          i, spec,
          fmt::format(": target '{}' is not in the lifted-input table, so no write-back (§2.1 step 3)", spec.target)));
      continue;
    }
    const std::size_t targetNode = placeholders[targetSpec];
    if (std::optional<std::size_t> terminal = inplaceLineage(program, schemas, returned[i], spec.kind)) {
      const std::string& reached = graph.nodes[*terminal].name;
      if (*terminal == targetNode)
        selection.skipped.push_back(
            describeSpec(i, spec, fmt::format(": in-place lineage ends at %{}, the target itself", reached)));
      else
        selection.skipped.push_back(describeSpec(
            i, spec,
            fmt::format(": in-place lineage ends at %{}, which is {} but not the target %{} (bug B1: the write-back is lost)",
                        reached, spec.kind == OutputKind::BufferMutation ? "a buffer" : "a user input",
                        graph.nodes[targetNode].name)));
      continue;
    }
    selection.writeBacks.push_back({i, targetNode, nodeIndex(returned[i])});
  }
  return selection;
}

// ---------------------------------------------------------------------------------------------
// FX dead-code elimination (§2.1 step 5): one reverse pass, erasing every node without users
// that is not impure; a reverse pass over a topological order reaches the fixpoint.

bool isNondeterministicSeeded(std::string_view target) {
  // Ops tagged nondeterministic_seeded: FX counts them impure (they advance the RNG state).
  constexpr std::string_view kSeeded[] = {
      "rand", "rand_like", "randn", "randn_like", "randint", "randint_like", "randperm", "bernoulli",
      "bernoulli_", "dropout", "native_dropout", "normal", "normal_", "uniform_", "multinomial",
      "poisson", "exponential_", "geometric_", "cauchy_", "log_normal_", "random_", "rrelu",
      "rrelu_with_noise"};
  if (target.substr(0, 6) != "aten::") return false;
  std::string_view base = target.substr(6);
  base = base.substr(0, base.find('.'));
  return std::find(std::begin(kSeeded), std::end(kSeeded), base) != std::end(kSeeded);
}

bool isSideEffectful(std::string_view target) {
  // torch/fx/node.py `_side_effectful_functions` (plus the pre-dispatch ones), normalised.
  constexpr std::string_view kSideEffectful[] = {
      "torch._assert",
      "aten::_assert_async",
      "aten::_assert_async.msg",
      "aten::_assert_scalar",
      "aten::_assert_tensor_metadata",
      "aten::copy_",
      "aten::set_.source_Tensor",
      "aten::index_put_",
      "aten::sym_constrain_range",
      "aten::sym_constrain_range_for_size",
      "profiler::_record_function_enter",
      "profiler::_record_function_enter_new",
      "profiler::_record_function_exit",
      "inductor::accumulate_grad_",
      "inductor::resize_storage_bytes_",
      "torch._C._set_grad_enabled",
      "torch.amp._enter_autocast",
      "torch.amp._exit_autocast",
  };
  return std::find(std::begin(kSideEffectful), std::end(kSideEffectful), target) != std::end(kSideEffectful);
}

// Node.is_impure(). FX knows every OpOverload's schema; we know only the table's. Choice for
// schema-less targets:
// - operator.*, higher-order ops (`higher_order::*`), `executorch_call_delegate` and other
//   Python callables really have no `_schema` in torch: FX treats them as pure unless listed
//   as side-effectful, so an unused delegate call or cond is erased. We do the same (this is
//   upstream's real behaviour, and the oracle may well flag it).
// - an `ns::op` target missing from our table is an OpOverload whose schema torch would see
//   and which may be mutable. Erasing it would be an artefact of our table, not of upstream,
//   so we keep it. call_module (absent from exported programs) is kept for the same reason:
//   FX asks the submodule, which we cannot see.
bool isImpure(const Node& node, const SchemaTable& schemas) {
  switch (node.op) {
    case NodeOp::Placeholder:
    case NodeOp::Output:
    case NodeOp::CallModule: return true;
    case NodeOp::GetAttr: return false;
    case NodeOp::CallFunction: break;
  }
  if (const Schema* schema = schemaOf(node, schemas)) {
    if (schema->isMutable()) return true;
  } else {
    const bool isOperatorOverload =
        node.target.find("::") != std::string::npos && node.target.rfind("higher_order::", 0) != 0;
    if (isOperatorOverload) return true;
  }
  return isNondeterministicSeeded(node.target) || isSideEffectful(node.target);
}

void eliminateDeadCode(Graph& graph, const SchemaTable& schemas) {
  const GraphFacts facts = analyse(graph);
  const std::size_t n = graph.nodes.size();
  std::vector<std::size_t> userCount(n);
  for (std::size_t i = 0; i < n; ++i) userCount[i] = facts.users(i).size();
  std::vector<bool> erased(n, false);
  for (std::size_t i = n; i-- > 0;) {
    if (userCount[i] != 0 || isImpure(graph.nodes[i], schemas)) continue;
    erased[i] = true;
    for (std::size_t input : facts.inputs(i)) --userCount[input];
  }
  eraseNodes(graph, erased);  // every user of an erased node is erased too
}

// ---------------------------------------------------------------------------------------------
// Copy insertion shared by the models.

struct PlannedCopy {
  SelectedWriteBack writeBack;
  std::size_t afterNode = 0;  // index in the input graph; the output node for "before output"
  CopyRule rule = CopyRule::R0;
  std::string bindingNode;
  std::string text;
};

enum class SameAnchorOrder {
  Request,   // copies after the same node keep spec order (upstream's loop before the output)
  Reversed,  // `with graph.inserting_after(n)` per copy: the last created ends up first
};

// Inserts the planned copies (in spec order, so FX's names copy__default, copy__default_1, ...
// follow creation order), lays them out with upstream's output layout (copies first, positional
// spec renaming: B2), runs DCE and explains each copy. The layout and DCE apply to every model:
// the PR and the draft change only where `_insert_copy` puts the copies, and the `lint();
// eliminate_dead_code()` of the enclosing pass stays (§2.1 steps 4-6).
PlacedProgram realise(const Program& program, std::vector<std::string> skipped, std::vector<PlannedCopy> plan,
                      SameAnchorOrder sameAnchor, const SchemaTable& schemas) {
  // insertWriteBacks resolves the written placeholder by (kind, name), correctly. Upstream
  // writes input_name_to_node[spec.target], which a same-named user input may hide (§2.1 step
  // 2). To keep the collision, hand the rewrite a signature in which every copied spec names
  // its placeholder as a user-input mutation, then restore the real kinds and targets.
  Program scratch = program;
  std::vector<CopyInsertion> requests;
  requests.reserve(plan.size());
  for (const PlannedCopy& copy : plan) {
    const std::size_t out = copy.writeBack.outputIndex;
    const std::string& placeholder = program.graph.nodes[copy.writeBack.bufferNode].name;
    scratch.signature.outputs[out].kind = OutputKind::UserInputMutation;
    scratch.signature.outputs[out].target = placeholder;
    for (InputSpec& in : scratch.signature.inputs)
      if (in.name == placeholder) in.kind = InputKind::UserInput;
    requests.push_back({out, copy.afterNode});
  }
  RewriteResult rewritten = insertWriteBacks(std::move(scratch), requests, OutputOrder::CopiesFirst, CopyNames::Fx);
  Program& result = rewritten.program;
  // The rewrite changes no input spec: restoring the kinds restores them.
  for (std::size_t k = 0; k < result.signature.inputs.size(); ++k)
    result.signature.inputs[k].kind = program.signature.inputs[k].kind;
  for (std::size_t i = 0; i < result.signature.outputs.size(); ++i) {
    result.signature.outputs[i].kind = program.signature.outputs[i].kind;
    result.signature.outputs[i].target = program.signature.outputs[i].target;
  }

  if (sameAnchor == SameAnchorOrder::Reversed) {
    // Copies anchored at the same node are contiguous, in request order: reverse each run.
    // The requests by (anchor, request): each run of one anchor is a group, in request order.
    std::vector<std::pair<std::size_t, std::size_t>> byAnchor;
    byAnchor.reserve(plan.size());
    for (std::size_t r = 0; r < plan.size(); ++r) byAnchor.emplace_back(plan[r].afterNode, r);
    std::sort(byAnchor.begin(), byAnchor.end());
    for (std::size_t g = 0, end = 0; g < byAnchor.size(); g = end) {
      for (end = g + 1; end < byAnchor.size() && byAnchor[end].first == byAnchor[g].first;) ++end;
      const std::size_t size = end - g;
      if (size < 2) continue;
      const std::size_t first = rewritten.copyPositions[byAnchor[g].second];
      if (first + size > result.graph.nodes.size()) continue;
      auto begin = result.graph.nodes.begin() + static_cast<std::ptrdiff_t>(first);
      std::reverse(begin, begin + static_cast<std::ptrdiff_t>(size));
      std::vector<NodeId> oldToNew(result.graph.nodes.size());
      for (std::size_t i = 0; i < oldToNew.size(); ++i) oldToNew[i] = static_cast<NodeId>(i);
      for (std::size_t j = 0; j < size; ++j) oldToNew[first + j] = static_cast<NodeId>(first + size - 1 - j);
      renumberReferences(result.graph, oldToNew);
    }
  }

  eliminateDeadCode(result.graph, schemas);

  PlacedProgram placed;
  placed.skipped = std::move(skipped);
  auto copyName = [&](std::uint32_t r) { return std::string_view(rewritten.copyNames[r]); };
  FlatNameIndex<decltype(copyName)> planByCopyName(copyName, plan.size());  // the first of a name
  for (std::size_t r = 0; r < plan.size(); ++r) planByCopyName.insert(static_cast<std::uint32_t>(r));
  placed.copies.reserve(plan.size());
  for (const Node& node : result.graph.nodes) {
    const std::uint32_t r = planByCopyName.find(node.name);
    if (r == decltype(planByCopyName)::kNone) continue;
    PlannedCopy& copy = plan[r];
    CopyExplanation explanation;
    explanation.copyNode = node.name;
    explanation.buffer = program.graph.nodes[copy.writeBack.bufferNode].name;
    explanation.value = copy.writeBack.valueNode ? program.graph.nodes[*copy.writeBack.valueNode].name : "";
    explanation.rule = copy.rule;
    // The copies' names are fresh in the graph, so each planned copy is met once.
    explanation.bindingNode = std::move(copy.bindingNode);
    explanation.text = std::move(copy.text);
    placed.copies.push_back(std::move(explanation));
  }
  placed.program = std::move(result);
  return placed;
}

PlacedProgram failed(const Program& program, std::string why) {
  PlacedProgram placed;
  placed.program = program;
  placed.failure = std::move(why);
  return placed;
}

// Every model is total: an exception from a helper (which would be a wbcheck bug, since the
// program is valid) becomes a reported failure rather than escaping.
template <typename F>
PlacedProgram guarded(const Program& program, std::string_view model, F&& body) {
  try {
    return body();
  } catch (const std::exception& e) {
    return failed(program, "internal error in the " + std::string(model) + " model: " + e.what());
  }
}

std::optional<std::size_t> lastPlaceholder(const Graph& graph) {
  std::optional<std::size_t> last;
  for (std::size_t i = 0; i < graph.nodes.size(); ++i)
    if (graph.nodes[i].isPlaceholder()) last = i;
  return last;
}

// ---------------------------------------------------------------------------------------------
// PR #20744 (§4.2), version by version (placement_models.h, Pr20744Version).

// What changed between the versions, as the helpers ask it.
bool outputNodeAliases(Pr20744Version v) { return v == Pr20744Version::Ff2892d4; }
bool noPlaceholderRaises(Pr20744Version v) { return v == Pr20744Version::Ff2892d4; }
bool listArgumentsMutate(Pr20744Version v) { return v != Pr20744Version::Ff2892d4; }
bool storageSharingAliases(Pr20744Version v) { return v == Pr20744Version::At82a8901; }

// `_may_alias_input(n)`: "the result may alias some input". Note the imprecision (H11): any
// return with alias_info makes the result an alias of *every* input, and `view_copy` (no
// alias_info) is not an alias at all (H5). From b6457f4 on, the output node is no alias.
bool mayAliasInput(const Node& node, Pr20744Version version, const SchemaTable& schemas) {
  if (node.isOutput()) return outputNodeAliases(version);
  if (node.op != NodeOp::CallFunction) return true;
  if (node.target == "operator.getitem") return true;
  const Schema* schema = schemaOf(node, schemas);
  if (!schema) return true;
  // `ret.alias_info is not None`: PyTorch's parser gives `Tensor(a)[]` a container alias_info,
  // so an element annotation counts as well as a container one.
  for (const SchemaArgument& ret : schema->returns)
    if (ret.type.alias || ret.type.containerAlias) return true;
  return false;
}

// `_storage_sharing_inputs(n)` (82a8901): the argument a `_share_alloc_with_arg_idx = k`
// annotation puts n's output in, if it is a node.
std::optional<std::size_t> storageSharingInput(const Node& node) {
  const std::optional<int> k = node.shareAllocArgIndex();
  if (!k || *k < 0 || static_cast<std::size_t>(*k) >= node.args.size()) return std::nullopt;
  return nodeIndex(node.args[static_cast<std::size_t>(*k)]);
}

// Whether an argument passes `alias`: `arg is a`, and from b6457f4 on also `a in arg` for a
// list or tuple argument (one level, as "inspects the list/tuple arguments" says).
bool passes(const Arg& arg, std::size_t alias, Pr20744Version version) {
  if (arg.isRef()) return arg.node == alias;
  if (!listArgumentsMutate(version) || (arg.kind != Arg::Kind::List && arg.kind != Arg::Kind::Tuple)) return false;
  return std::any_of(arg.items.begin(), arg.items.end(), [&](const Arg& item) { return item.isRef() && item.node == alias; });
}

// `_mutates_input(n, a)`: "n may write the value passed as a". At ff2892d4 only `args[i] is a`
// and `kwargs[name] is a` match, so a written list argument containing `a` is missed (H4); from
// b6457f4 on, list and tuple arguments are looked inside; at 82a8901 the argument n's output
// shares storage with counts as written.
bool mutatesInput(const Node& node, std::size_t alias, Pr20744Version version, const SchemaTable& schemas) {
  if (node.op == NodeOp::Output) return false;
  if (node.op != NodeOp::CallFunction) return true;
  if (storageSharingAliases(version) && storageSharingInput(node) == alias) return true;
  const Schema* schema = schemaOf(node, schemas);
  if (!schema) return true;  // getitem included
  for (std::size_t i = 0; i < node.args.size(); ++i) {
    if (passes(node.args[i], alias, version) && i < schema->arguments.size() && schema->arguments[i].type.isWrite())
      return true;
  }
  for (const auto& [name, arg] : node.kwargs) {
    if (!passes(arg, alias, version)) continue;
    std::optional<std::size_t> k = schema->argumentIndex(name);
    if (k && schema->arguments[*k].type.isWrite()) return true;
  }
  return false;
}

// `_collect_aliases(seed)`: one forward pass in graph order; a node joins when one of its
// inputs is in the set and it may alias an input, or (82a8901) when the argument its output
// shares storage with is in the set. Ancestors and siblings of the seed are never reached
// (H10). O(N * fan-in) per call, and called per copy: kept, as in the PR. (The PR walks the
// graph with the copies inserted so far; those copies have no users yet and are not in
// node_order, so they cannot change any decision, and we walk the input graph.)
void collectAliases(const Graph& graph, const GraphFacts& facts, std::size_t seed, Pr20744Version version,
                    const SchemaTable& schemas, std::vector<bool>& aliases) {
  aliases.assign(graph.nodes.size(), false);  // the caller's vector, reused
  aliases[seed] = true;
  for (std::size_t i = 0; i < graph.nodes.size(); ++i) {
    if (aliases[i]) continue;
    const Node& node = graph.nodes[i];
    if (storageSharingAliases(version)) {
      const std::optional<std::size_t> shared = storageSharingInput(node);
      if (shared && aliases[*shared]) {
        aliases[i] = true;
        continue;
      }
    }
    bool fed = false;
    for (std::size_t input : facts.inputs(i))
      if (aliases[input]) { fed = true; break; }
    if (fed && mayAliasInput(node, version, schemas)) aliases[i] = true;
  }
}

void aliasesOfValue(const Graph& graph, const GraphFacts& facts, std::optional<std::size_t> value,
                    Pr20744Version version, const SchemaTable& schemas, std::vector<bool>& aliases) {
  // A constant mutation value (rejected by validation) has no aliases.
  if (!value) aliases.assign(graph.nodes.size(), false);
  else collectAliases(graph, facts, *value, version, schemas, aliases);
}

// " through %alias", or nothing when the alias is the seed itself.
std::string_view throughAlias(std::size_t alias, std::size_t seed) { return alias == seed ? "" : " through %"; }
std::string_view aliasName(const Graph& graph, std::size_t alias, std::size_t seed) {
  return alias == seed ? std::string_view() : std::string_view(graph.nodes[alias].name);
}

// The floor both the PR and the draft start from: R0 the last placeholder, then R1 the value
// if it comes later. Returns the copy with that rule and sets `latest` to its anchor (the text
// is written once the rule is final: floorText). Without a placeholder (b6457f4's "no
// placeholder floor") the floor is the value; a write-back always writes a placeholder, so that
// case has no copy to place.
PlannedCopy placeholderAndValueFloor(std::optional<std::size_t> lastPlaceholderIndex, const SelectedWriteBack& writeBack,
                                     std::size_t& latest) {
  PlannedCopy copy;
  copy.writeBack = writeBack;
  latest = lastPlaceholderIndex.value_or(0);
  copy.rule = CopyRule::R0;
  if (writeBack.valueNode && (!lastPlaceholderIndex || *writeBack.valueNode > latest)) {
    latest = *writeBack.valueNode;
    copy.rule = CopyRule::R1;
  }
  return copy;
}

// The text of a copy its floor binds (rule R0 or R1) after `latest`.
std::string floorText(const Graph& graph, CopyRule rule, std::size_t latest) {
  return fmt::format("after %{}: {}", graph.nodes[latest].name,
                     rule == CopyRule::R0 ? "the last placeholder" : "defines the value");
}

// `_insertion_point(buf, val)`: the latest of R0 the last placeholder, R1 the value, R2 every
// non-output user of an alias of the buffer, R3 every user that may write an alias of the value.
// Only a strictly later node moves `latest`, so the first rule to reach a node binds it.
// `aliases` is scratch space, reused from one copy to the next.
PlannedCopy insertionPoint(const Program& program, const GraphFacts& facts,
                           std::optional<std::size_t> lastPlaceholderIndex, const SelectedWriteBack& writeBack,
                           Pr20744Version version, const SchemaTable& schemas, std::vector<bool>& aliases) {
  const Graph& graph = program.graph;
  const std::string& buffer = graph.nodes[writeBack.bufferNode].name;
  std::size_t latest = 0;
  PlannedCopy copy = placeholderAndValueFloor(lastPlaceholderIndex, writeBack, latest);
  std::size_t through = 0;  // the alias through which the binding node was reached (R2, R3)
  collectAliases(graph, facts, writeBack.bufferNode, version, schemas, aliases);
  for (std::size_t a = 0; a < graph.nodes.size(); ++a) {
    if (!aliases[a]) continue;
    for (std::size_t u : facts.users(a)) {
      if (graph.nodes[u].isOutput() || u <= latest) continue;
      latest = u;
      copy.rule = CopyRule::R2;
      through = a;
    }
  }
  aliasesOfValue(graph, facts, writeBack.valueNode, version, schemas, aliases);
  for (std::size_t a = 0; a < graph.nodes.size(); ++a) {
    if (!aliases[a]) continue;
    for (std::size_t u : facts.users(a)) {
      if (u <= latest || !mutatesInput(graph.nodes[u], a, version, schemas)) continue;
      latest = u;
      copy.rule = CopyRule::R3;
      through = a;
    }
  }
  const std::string& at = graph.nodes[latest].name;
  if (copy.rule == CopyRule::R2) {
    const std::size_t seed = writeBack.bufferNode;
    copy.text = fmt::format("after %{}: uses the old contents of {}{}{}", at, buffer, throughAlias(through, seed),
                            aliasName(graph, through, seed));
  } else if (copy.rule == CopyRule::R3) {
    const std::size_t seed = *writeBack.valueNode;
    copy.text = fmt::format("after %{}: may write the value %{}{}{}", at, graph.nodes[seed].name,
                            throughAlias(through, seed), aliasName(graph, through, seed));
  } else {
    copy.text = floorText(graph, copy.rule, latest);
  }
  copy.afterNode = latest;
  copy.bindingNode = graph.nodes[latest].name;
  return copy;
}

// The PR's global guard (§4.3 G): accumulate the aliases of the buffers (MA) and of the values
// (RA) of the earlier pairs; a pair whose buffer aliases meet RA, or whose value aliases meet
// MA, makes every copy go to the end. Returns a description of the first conflict.
std::optional<std::string> firstDependence(const Program& program, const GraphFacts& facts,
                                           const std::vector<SelectedWriteBack>& writeBacks, Pr20744Version version,
                                           const SchemaTable& schemas) {
  if (writeBacks.size() < 2) return std::nullopt;
  const Graph& graph = program.graph;
  const std::size_t n = graph.nodes.size();
  std::vector<bool> mutatedAliases(n, false);
  std::vector<bool> returnAliases(n, false);
  std::vector<bool> bufferAliases, valueAliases;  // per write-back, reused
  for (const SelectedWriteBack& writeBack : writeBacks) {
    collectAliases(graph, facts, writeBack.bufferNode, version, schemas, bufferAliases);
    aliasesOfValue(graph, facts, writeBack.valueNode, version, schemas, valueAliases);
    for (std::size_t i = 0; i < n; ++i) {
      if (bufferAliases[i] && returnAliases[i])
        return percent(graph.nodes[i].name) + " aliases the buffer " + graph.nodes[writeBack.bufferNode].name +
               " and the value of an earlier write-back";
      if (valueAliases[i] && mutatedAliases[i])
        return percent(graph.nodes[i].name) + " aliases the value of the write-back to " +
               graph.nodes[writeBack.bufferNode].name + " and the buffer of an earlier write-back";
    }
    for (std::size_t i = 0; i < n; ++i) {
      if (bufferAliases[i]) mutatedAliases[i] = true;
      if (valueAliases[i]) returnAliases[i] = true;
    }
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// Draft #13857: after the last direct user of the buffer placeholder and of the value.

PlannedCopy draftInsertionPoint(const Program& program, const GraphFacts& facts,
                                std::optional<std::size_t> lastPlaceholderIndex, const SelectedWriteBack& writeBack) {
  const Graph& graph = program.graph;
  std::size_t latest = 0;
  PlannedCopy copy = placeholderAndValueFloor(lastPlaceholderIndex, writeBack, latest);
  for (std::size_t u : facts.users(writeBack.bufferNode)) {
    if (graph.nodes[u].isOutput() || u <= latest) continue;
    latest = u;
    copy.rule = CopyRule::R2;
  }
  if (writeBack.valueNode) {
    for (std::size_t u : facts.users(*writeBack.valueNode)) {
      if (graph.nodes[u].isOutput() || u <= latest) continue;
      latest = u;
      copy.rule = CopyRule::R3;
    }
  }
  const std::string& at = graph.nodes[latest].name;
  if (copy.rule == CopyRule::R2)
    copy.text = fmt::format("after %{}: the last direct user of {} (aliases ignored)", at,
                            graph.nodes[writeBack.bufferNode].name);
  else if (copy.rule == CopyRule::R3)
    copy.text = fmt::format("after %{}: the last direct user of the value %{} (any user counts as a writer)", at,
                            graph.nodes[*writeBack.valueNode].name);
  else
    copy.text = floorText(graph, copy.rule, latest);
  copy.afterNode = latest;
  copy.bindingNode = graph.nodes[latest].name;
  return copy;
}

std::size_t outputIndex(const Graph& graph) { return graph.nodes.empty() ? 0 : graph.nodes.size() - 1; }


// ---------------------------------------------------------------------------------------------

PlacedProgram upstreamModel(const Program& program, const SchemaTable& schemas) {
  return guarded(program, "upstream", [&]() -> PlacedProgram {
    if (!program.graph.outputNode()) return failed(program, "the graph has no output node");
    Selection selection = selectUpstreamWriteBacks(program, schemas);
    if (selection.failure) return failed(program, *selection.failure);
    // §2.1 step 4: every copy just before the output node, in spec order; copies-first tuple
    // with positional renaming (B2); then DCE (step 5).
    std::vector<PlannedCopy> plan;
    plan.reserve(selection.writeBacks.size());
    for (const SelectedWriteBack& writeBack : selection.writeBacks) {
      PlannedCopy copy;
      copy.writeBack = writeBack;
      copy.afterNode = outputIndex(program.graph);
      copy.rule = CopyRule::End;
      copy.text = "before the output: upstream inserts every write-back there, in output-spec order";
      plan.push_back(std::move(copy));
    }
    return realise(program, std::move(selection.skipped), std::move(plan), SameAnchorOrder::Request, schemas);
  });
}

PlacedProgram pr20744Model(const Program& program, Pr20744Version version, const SchemaTable& schemas) {
  return guarded(program, "pr20744", [&]() -> PlacedProgram {
    if (!program.graph.outputNode()) return failed(program, "the graph has no output node");
    const GraphFacts facts = analyse(program.graph);
    Selection selection = selectUpstreamWriteBacks(program, schemas);
    if (selection.failure) return failed(program, *selection.failure);
    // ff2892d4: `last_placeholder = [n for n in graph.nodes if n.op == "placeholder"][-1]` runs
    // before anything checks for write-backs (H7): no placeholders means IndexError, even with
    // nothing to write back. b6457f4: `placeholders[-1] if placeholders else None`.
    const std::optional<std::size_t> last = lastPlaceholder(program.graph);
    if (!last && noPlaceholderRaises(version)) return failed(program, "IndexError: list index out of range");

    std::vector<PlannedCopy> plan;
    plan.reserve(selection.writeBacks.size());
    const std::optional<std::string> dependence =
        firstDependence(program, facts, selection.writeBacks, version, schemas);
    std::vector<bool> aliases;  // insertionPoint's scratch
    for (const SelectedWriteBack& writeBack : selection.writeBacks) {
      if (dependence) {
        PlannedCopy copy;
        copy.writeBack = writeBack;
        copy.afterNode = outputIndex(program.graph);
        copy.rule = CopyRule::End;
        copy.text = "before the output, in output-spec order: the independence guard failed (" + *dependence + ")";
        plan.push_back(std::move(copy));
      } else {
        plan.push_back(insertionPoint(program, facts, last, writeBack, version, schemas, aliases));
      }
    }
    // The fallback inserts before the output node, in spec order; otherwise each copy is
    // `inserting_after(latest)`, which reverses copies that share an anchor. The output tuple
    // and the specs are upstream's (the PR keeps that code: B2 persists).
    const SameAnchorOrder sameAnchor = dependence ? SameAnchorOrder::Request : SameAnchorOrder::Reversed;
    return realise(program, std::move(selection.skipped), std::move(plan), sameAnchor, schemas);
  });
}

PlacedProgram draft13857Model(const Program& program, const SchemaTable& schemas) {
  return guarded(program, "draft13857", [&]() -> PlacedProgram {
    if (!program.graph.outputNode()) return failed(program, "the graph has no output node");
    const GraphFacts facts = analyse(program.graph);
    Selection selection = selectUpstreamWriteBacks(program, schemas);
    if (selection.failure) return failed(program, *selection.failure);
    std::vector<PlannedCopy> plan;
    plan.reserve(selection.writeBacks.size());
    // Every write-back targets a placeholder, so there is one whenever a copy is planned.
    const std::optional<std::size_t> last = lastPlaceholder(program.graph);
    for (const SelectedWriteBack& writeBack : selection.writeBacks)
      plan.push_back(draftInsertionPoint(program, facts, last, writeBack));
    // Assumption (the draft's diff is not available): like the PR, the draft inserts each copy
    // with `inserting_after(latest)`, so copies anchored at one node come out in reverse, and
    // keeps upstream's output tuple and spec renaming.
    return realise(program, std::move(selection.skipped), std::move(plan), SameAnchorOrder::Reversed, schemas);
  });
}

}  // namespace
}  // namespace models

PlacedProgram placeUpstream(const Program& program, const SchemaTable& schemas) {
  return models::upstreamModel(program, schemas);
}

PlacedProgram placePr20744(const Program& program, Pr20744Version version, const SchemaTable& schemas) {
  return models::pr20744Model(program, version, schemas);
}

PlacedProgram placeDraft13857(const Program& program, const SchemaTable& schemas) {
  return models::draft13857Model(program, schemas);
}

}  // namespace wb
