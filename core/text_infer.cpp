// core/text_infer.cpp: the signature the reader infers when the text has none (DESIGN §3).
//
// Placeholders become inputs by FX's naming convention (b_* buffers, p_* parameters, c_* and
// _lifted_tensor_constant* constants, the rest user inputs). A trailing block of
// `copy_(placeholder, value)` nodes -- the write-backs that functionalization, AOTAutograd or the
// upstream pass already put there -- is lifted into mutation outputs, as torch.export would have
// produced them: the copies go away, and each becomes a BUFFER_MUTATION or USER_INPUT_MUTATION
// output whose value is the copy's source, placed first (export's convention: mutations before
// user outputs).
#include <algorithm>
#include <set>
#include <unordered_map>
#include <utility>

#include "core/ir.h"
#include "core/text_syntax.h"

namespace wb::text {

namespace {

bool startsWith(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

bool isCopy(const Node& node) {
  return node.op == NodeOp::CallFunction && node.target == "aten::copy_" && node.args.size() >= 2 &&
         node.args[0].isRef() && node.args[1].isRef();
}

InputSpec specFromName(const std::string& nodeName, const std::string& printedName) {
  InputSpec spec;
  spec.name = nodeName;
  if (startsWith(printedName, "b_") && printedName.size() > 2) {
    spec.kind = InputKind::Buffer;
    spec.target = printedName.substr(2);
    spec.persistent = true;
  } else if (startsWith(printedName, "p_") && printedName.size() > 2) {
    spec.kind = InputKind::Parameter;
    spec.target = printedName.substr(2);
  } else if (startsWith(printedName, "c_") && printedName.size() > 2) {
    spec.kind = InputKind::ConstantTensor;
    spec.target = printedName.substr(2);
  } else if (startsWith(printedName, "_lifted_tensor_constant")) {
    spec.kind = InputKind::ConstantTensor;
    spec.target = printedName;
  }
  return spec;
}

// Unlifted code (`ep.module()`) reads a buffer as `self.a.b`; when a trailing copy_ writes it,
// the get_attr is a mutated buffer. It becomes a BUFFER placeholder (keeping its code name, so
// no reference changes) moved in front of the other placeholders, where export puts buffers.
void liftMutatedAttributes(Graph& graph, InferenceHints& hints) {
  std::set<NodeId> written;
  for (std::size_t i = graph.nodes.size(); i-- > 0;) {
    const Node& node = graph.nodes[i];
    if (node.isOutput()) continue;
    if (!isCopy(node)) break;
    written.insert(node.args[0].node);
  }
  std::vector<Node> lifted;
  std::vector<Node> rest;
  std::vector<bool> isLifted(graph.nodes.size(), false);
  for (Node& node : graph.nodes) {
    const NodeId index = static_cast<NodeId>(lifted.size() + rest.size());
    if (node.op == NodeOp::GetAttr && written.count(index)) {
      isLifted[index] = true;
      InputSpec spec;
      spec.kind = InputKind::Buffer;
      spec.name = node.name;
      spec.target = node.target;
      spec.persistent = true;
      hints.knownInputs[node.name] = spec;
      node.op = NodeOp::Placeholder;
      node.target = node.name;
      lifted.push_back(std::move(node));
    } else {
      rest.push_back(std::move(node));
    }
  }
  if (lifted.empty()) {
    graph.nodes = std::move(rest);
    return;
  }
  std::vector<NodeId> movedTo(isLifted.size());
  NodeId front = 0, back = static_cast<NodeId>(lifted.size());
  for (std::size_t i = 0; i < isLifted.size(); ++i) movedTo[i] = isLifted[i] ? front++ : back++;
  for (Node& node : rest) lifted.push_back(std::move(node));
  graph.nodes = std::move(lifted);
  renumberReferences(graph, movedTo);
}

std::vector<InputSpec> inferInputs(const Graph& graph, const InferenceHints& hints) {
  std::vector<InputSpec> inputs;
  for (const Node& node : graph.nodes) {
    if (!node.isPlaceholder()) continue;
    if (auto known = hints.knownInputs.find(node.name); known != hints.knownInputs.end()) {
      inputs.push_back(known->second);
      continue;
    }
    auto printed = hints.printedPlaceholderTargets.find(node.name);
    inputs.push_back(specFromName(node.name, printed != hints.printedPlaceholderTargets.end() ? printed->second : node.name));
  }
  return inputs;
}

// The indices of the trailing copies that can be lifted, in graph order.
std::vector<std::size_t> liftableCopies(const Graph& graph, const std::vector<InputSpec>& inputs) {
  std::unordered_map<std::string, const InputSpec*> inputOf;
  for (const InputSpec& spec : inputs) inputOf.emplace(spec.name, &spec);
  // A copy that the output uses inside a nested list or tuple cannot be dropped from it.
  std::set<NodeId> nestedInOutput;
  for (const Arg& value : graph.returnedValues())
    if (value.isSequence()) forEachRef(value, [&](NodeId id) { nestedInOutput.insert(id); });
  std::vector<std::size_t> block;
  std::set<NodeId> copies;
  std::set<NodeId> writtenPlaceholders;
  for (std::size_t i = graph.nodes.size(); i-- > 0;) {
    const Node& node = graph.nodes[i];
    if (node.isOutput()) continue;
    if (!isCopy(node)) break;
    auto input = inputOf.find(graph.nodes[node.args[0].node].name);
    if (input == inputOf.end()) break;
    InputKind kind = input->second->kind;
    if (kind != InputKind::Buffer && kind != InputKind::UserInput) break;
    // A second write of the same placeholder, or a copy that a later copy reads, would change
    // meaning when lifted: stop the block there.
    if (writtenPlaceholders.count(node.args[0].node) || copies.count(node.args[1].node) ||
        nestedInOutput.count(static_cast<NodeId>(i)))
      break;
    bool usedByLaterCopy = false;
    auto isThisCopy = [&](NodeId id) { usedByLaterCopy |= id == i; };
    for (std::size_t j : block) {
      for (const Arg& a : graph.nodes[j].args) forEachRef(a, isThisCopy);
      for (const auto& kv : graph.nodes[j].kwargs) forEachRef(kv.second, isThisCopy);
    }
    if (usedByLaterCopy) break;
    writtenPlaceholders.insert(node.args[0].node);
    copies.insert(static_cast<NodeId>(i));
    block.push_back(i);
  }
  std::reverse(block.begin(), block.end());
  return block;
}

OutputSpec userOutput(const Graph& graph, const Arg& value) {
  OutputSpec spec;
  spec.kind = OutputKind::UserOutput;
  if (value.isRef()) spec.name = graph.nodes[value.node].name;
  return spec;
}

}  // namespace

Signature inferSignature(Graph& graph, InferenceHints hints) {
  liftMutatedAttributes(graph, hints);
  Signature signature;
  signature.inputs = inferInputs(graph, hints);
  std::vector<std::size_t> copies = liftableCopies(graph, signature.inputs);
  std::vector<Arg> returned = graph.returnedValues();
  if (copies.empty() || !graph.outputNode()) {
    for (const Arg& value : returned) signature.outputs.push_back(userOutput(graph, value));
    return signature;
  }

  std::vector<bool> isLifted(graph.nodes.size(), false);
  std::vector<Arg> values;
  for (std::size_t i : copies) {
    const Node& copy = graph.nodes[i];
    isLifted[i] = true;
    const InputSpec* input = nullptr;
    for (const InputSpec& spec : signature.inputs)
      if (spec.name == graph.nodes[copy.args[0].node].name) input = &spec;
    OutputSpec spec;
    spec.name = graph.nodes[copy.args[1].node].name;
    spec.kind = input->kind == InputKind::Buffer ? OutputKind::BufferMutation : OutputKind::UserInputMutation;
    spec.target = input->kind == InputKind::Buffer ? input->target : input->name;
    signature.outputs.push_back(spec);
    values.push_back(copy.args[1]);
  }
  for (const Arg& value : returned) {
    if (value.isRef() && isLifted[value.node]) continue;
    signature.outputs.push_back(userOutput(graph, value));
    values.push_back(value);
  }
  graph.nodes.back().args = {Arg::tuple(std::move(values))};
  eraseNodes(graph, isLifted);  // nothing but the output used the copies
  return signature;
}

}  // namespace wb::text
