// core/rewrite.cpp: inserting write-back copies (see rewrite.h).
#include "core/rewrite.h"

#include <set>
#include <stdexcept>

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

  // Name and build every copy first, so names are fresh against the whole result.
  RewriteResult result;
  Graph scratch = in;
  std::vector<Node> copies;
  copies.reserve(requests.size());
  for (const CopyInsertion& req : requests) {
    const OutputSpec& spec = program.signature.outputs.at(req.outputIndex);
    const InputSpec* target = program.signature.mutatedInput(spec);
    if (!target) throw std::logic_error("insertWriteBacks: unresolved mutation target " + spec.target);
    Node copy;
    copy.name = freshName(scratch, "copy_");
    copy.op = NodeOp::CallFunction;
    copy.target = "aten::copy_";
    copy.args = {Arg::ref(target->name), returned.at(req.outputIndex)};
    if (const Node* value = in.find(spec.name)) copy.typeText = value->typeText;
    scratch.nodes.push_back(copy);  // reserve the name
    result.copyNames.push_back(copy.name);
    copies.push_back(std::move(copy));
  }

  // Lay out the nodes: each input node, then the copies anchored after it (request order).
  // Copies anchored at the output node go just before it.
  std::vector<std::vector<std::size_t>> after(in.nodes.size());
  for (std::size_t r = 0; r < requests.size(); ++r) after.at(requests[r].afterNode).push_back(r);
  Program& out = result.program;
  out = program;
  out.graph.nodes.clear();
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
