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

#include "core/name_index.h"
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
  std::set<std::string> written;
  for (std::size_t i = graph.nodes.size(); i-- > 0;) {
    const Node& node = graph.nodes[i];
    if (node.isOutput()) continue;
    if (!isCopy(node)) break;
    written.insert(node.args[0].text);
  }
  std::vector<Node> lifted;
  std::vector<Node> rest;
  std::vector<bool> isLifted(graph.nodes.size(), false);
  for (Node& node : graph.nodes) {
    if (node.op == NodeOp::GetAttr && written.count(node.name)) {
      isLifted[lifted.size() + rest.size()] = true;
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
  // The references' definition hints (Arg::definitionHint) follow their nodes to the new order.
  std::vector<std::uint32_t> movedTo(isLifted.size());
  std::uint32_t front = 0, back = static_cast<std::uint32_t>(lifted.size());
  for (std::size_t i = 0; i < isLifted.size(); ++i) movedTo[i] = isLifted[i] ? front++ : back++;
  for (Node& node : rest) lifted.push_back(std::move(node));
  graph.nodes = std::move(lifted);
  for (Node& node : graph.nodes) followMovedNodes(node, movedTo);
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
  std::set<std::string> nestedInOutput;
  for (const Arg& value : graph.returnedValues())
    if (value.isSequence()) forEachRef(value, [&](const std::string& name) { nestedInOutput.insert(name); });
  std::vector<std::size_t> block;
  std::set<std::string> copyNames;
  std::set<std::string> writtenPlaceholders;
  for (std::size_t i = graph.nodes.size(); i-- > 0;) {
    const Node& node = graph.nodes[i];
    if (node.isOutput()) continue;
    if (!isCopy(node)) break;
    auto input = inputOf.find(node.args[0].text);
    if (input == inputOf.end()) break;
    InputKind kind = input->second->kind;
    if (kind != InputKind::Buffer && kind != InputKind::UserInput) break;
    // A second write of the same placeholder, or a copy that a later copy reads, would change
    // meaning when lifted: stop the block there.
    if (writtenPlaceholders.count(node.args[0].text) || copyNames.count(node.args[1].text) ||
        nestedInOutput.count(node.name))
      break;
    bool usedByLaterCopy = false;
    for (std::size_t j : block)
      for (const Arg& a : graph.nodes[j].args)
        forEachRef(a, [&](const std::string& name) { usedByLaterCopy |= name == node.name; });
    if (usedByLaterCopy) break;
    writtenPlaceholders.insert(node.args[0].text);
    copyNames.insert(node.name);
    block.push_back(i);
  }
  std::reverse(block.begin(), block.end());
  return block;
}

OutputSpec userOutput(const Arg& value) {
  OutputSpec spec;
  spec.kind = OutputKind::UserOutput;
  if (value.isRef()) spec.name = value.text;
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
    for (const Arg& value : returned) signature.outputs.push_back(userOutput(value));
    return signature;
  }

  std::set<std::string> copyNames;
  std::vector<Arg> values;
  for (std::size_t i : copies) {
    const Node& copy = graph.nodes[i];
    copyNames.insert(copy.name);
    const InputSpec* input = nullptr;
    for (const InputSpec& spec : signature.inputs)
      if (spec.name == copy.args[0].text) input = &spec;
    OutputSpec spec;
    spec.name = copy.args[1].text;
    spec.kind = input->kind == InputKind::Buffer ? OutputKind::BufferMutation : OutputKind::UserInputMutation;
    spec.target = input->kind == InputKind::Buffer ? input->target : input->name;
    signature.outputs.push_back(spec);
    values.push_back(copy.args[1]);
  }
  for (const Arg& value : returned) {
    if (value.isRef() && copyNames.count(value.text)) continue;
    signature.outputs.push_back(userOutput(value));
    values.push_back(value);
  }
  std::vector<Node> kept;
  for (Node& node : graph.nodes)
    if (!copyNames.count(node.name)) kept.push_back(std::move(node));
  graph.nodes = std::move(kept);
  Node& output = graph.nodes.back();
  output.args = {Arg::tuple(std::move(values))};
  return signature;
}

}  // namespace wb::text
