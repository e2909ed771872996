// core/rewrite.cpp: inserting write-back copies (see rewrite.h).
#include "core/rewrite.h"

#include <set>
#include <stdexcept>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

namespace wb {

std::string freshName(const Graph& graph, const std::string& base) {
  std::set<std::string, std::less<>> used;
  for (const Node& n : graph.nodes) used.insert(n.name);
  if (!used.count(base)) return base;
  for (std::size_t i = 1;; ++i) {
    std::string candidate = base + "_" + std::to_string(i);
    if (!used.count(candidate)) return candidate;
  }
}

RewriteResult insertWriteBacks(const Program& program, const std::vector<CopyInsertion>& requests,
                               OutputOrder order) {
  const Graph& in = program.graph;
  const std::vector<Arg> returned = in.returnedValues();

  // Name and build every copy first, so names are fresh against the whole result. A placement
  // may insert 10^4 copies into 10^6 nodes, so the input is scanned once: for the names a
  // fresh copy name could collide with, and for the nodes whose type a copy takes. Fresh names
  // follow freshName's sequence (copy_, copy__1, ...): names are only ever added, so each copy
  // takes the first unused candidate after the previous one.
  std::unordered_map<std::string_view, const Node*> valueNodes;  // first node with that name
  for (const CopyInsertion& req : requests) valueNodes.emplace(program.signature.outputs.at(req.outputIndex).name, nullptr);
  std::unordered_set<std::string> taken;  // names of the form copy_* in use
  for (const Node& n : in.nodes) {
    if (n.name.starts_with("copy_")) taken.insert(n.name);
    if (auto it = valueNodes.find(n.name); it != valueNodes.end() && !it->second) it->second = &n;
  }
  std::unordered_map<std::string_view, const InputSpec*> buffers, userInputs;  // first match wins
  for (const InputSpec& s : program.signature.inputs) {
    if (s.kind == InputKind::Buffer) buffers.emplace(s.target, &s);
    if (s.kind == InputKind::UserInput) userInputs.emplace(s.name, &s);
  }
  std::size_t suffix = 0;  // 0: the bare base
  auto nextName = [&]() {
    for (;; ++suffix) {
      std::string candidate = suffix == 0 ? std::string("copy_") : "copy__" + std::to_string(suffix);
      if (taken.insert(candidate).second) {
        ++suffix;
        return candidate;
      }
    }
  };

  RewriteResult result;
  std::vector<Node> copies;
  copies.reserve(requests.size());
  for (const CopyInsertion& req : requests) {
    const OutputSpec& spec = program.signature.outputs.at(req.outputIndex);
    const InputSpec* target = nullptr;
    if (spec.kind == OutputKind::BufferMutation) {
      if (auto it = buffers.find(spec.target); it != buffers.end()) target = it->second;
    } else if (spec.kind == OutputKind::UserInputMutation) {
      if (auto it = userInputs.find(spec.target); it != userInputs.end()) target = it->second;
    }
    if (!target) throw std::logic_error("insertWriteBacks: unresolved mutation target " + spec.target);
    Node copy;
    copy.name = nextName();
    copy.op = NodeOp::CallFunction;
    copy.target = "aten::copy_";
    copy.args = {Arg::ref(target->name), returned.at(req.outputIndex)};
    if (const Node* value = valueNodes.at(spec.name)) copy.typeText = value->typeText;
    result.copyNames.push_back(copy.name);
    copies.push_back(std::move(copy));
  }

  // Lay out the nodes: each input node, then the copies anchored after it (request order).
  // Copies anchored at the output node go just before it.
  std::vector<std::vector<std::size_t>> after(in.nodes.size());
  for (std::size_t r = 0; r < requests.size(); ++r) after.at(requests[r].afterNode).push_back(r);
  Program& out = result.program;
  // Everything but the nodes is copied as is (the nodes are laid out below, copied once).
  out.signature = program.signature;
  out.schemas = program.schemas;
  out.submodules = program.submodules;
  out.rangeConstraints = program.rangeConstraints;
  out.signatureInferred = program.signatureInferred;
  out.graph.nodes.reserve(in.nodes.size() + copies.size());
  for (std::size_t i = 0; i < in.nodes.size(); ++i) {
    const bool isOutput = in.nodes[i].isOutput();
    if (!isOutput) out.graph.nodes.push_back(in.nodes[i]);
    for (std::size_t r : after[i]) out.graph.nodes.push_back(copies[r]);
    if (isOutput) out.graph.nodes.push_back(in.nodes[i]);
  }

  // Rewrite the returned tuple and the specs.
  std::vector<Arg> values = returned;
  std::vector<OutputSpec> specs = program.signature.outputs;
  if (order == OutputOrder::KeepPositions) {
    for (std::size_t r = 0; r < requests.size(); ++r) {
      values[requests[r].outputIndex] = Arg::ref(copies[r].name);
      specs[requests[r].outputIndex].name = copies[r].name;
    }
  } else {
    std::vector<bool> copied(values.size(), false);
    std::vector<Arg> reordered;
    for (std::size_t r = 0; r < requests.size(); ++r) {
      copied[requests[r].outputIndex] = true;
      reordered.push_back(Arg::ref(copies[r].name));
    }
    for (std::size_t i = 0; i < values.size(); ++i)
      if (!copied[i]) reordered.push_back(values[i]);
    // Positional renaming of every mutation spec, exactly as upstream does it.
    std::size_t next = 0;
    for (OutputSpec& spec : specs) {
      if (!isMutation(spec.kind)) continue;
      const Arg& a = reordered.at(next++);
      spec.name = a.isRef() ? a.text : std::string();
    }
    values = std::move(reordered);
  }
  Node& output = out.graph.nodes.back();
  output.args = {Arg::tuple(std::move(values))};
  out.signature.outputs = std::move(specs);
  return result;
}

}  // namespace wb
