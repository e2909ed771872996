// core/validate.cpp: the structural checks of a Program (DESIGN §2), reported all at once.
//
// Cost is linear in the size of the program: node names go into one hash map, argument trees
// are walked with an explicit stack (bounded depth), and the signature is matched by position.
#include "core/validate.h"

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

namespace wb {
namespace {

// Collects diagnostics up to a cap, then only counts them.
class Reporter {
 public:
  explicit Reporter(std::size_t maxErrors) : maxErrors_(maxErrors) {}

  void error(std::string message) {
    if (errors_.size() >= maxErrors_) {
      ++dropped_;
      return;
    }
    Diagnostic d;
    d.line = 0;  // whole-program checks have no source position
    d.message = std::move(message);
    errors_.push_back(std::move(d));
  }

  std::vector<Diagnostic> finish() && {
    if (dropped_ > 0) {
      Diagnostic d;
      d.message = std::to_string(dropped_) + " more structural error(s) not shown";
      errors_.push_back(std::move(d));
    }
    return std::move(errors_);
  }

 private:
  std::size_t maxErrors_;
  std::size_t dropped_ = 0;
  std::vector<Diagnostic> errors_;
};

std::string quoted(std::string_view s) { return "'" + std::string(s) + "'"; }

// "node 'add'", "placeholder 'x'", "output node 'output'", or "node #3" for a node without a
// name; `scope` names the submodule the node is in.
std::string describe(const Node& node, std::size_t index, std::string_view scope) {
  std::string out = scope.empty() ? "" : "in submodule " + quoted(scope) + ": ";
  switch (node.op) {
    case NodeOp::CallFunction: out += "node "; break;
    case NodeOp::Placeholder: out += "placeholder "; break;
    case NodeOp::GetAttr: out += "get_attr node "; break;
    case NodeOp::CallModule: out += "call_module node "; break;
    case NodeOp::Output: out += "output node "; break;
  }
  return out + (node.name.empty() ? "#" + std::to_string(index) : quoted(node.name));
}

// What validate learns about a graph that the signature checks need.
struct GraphFacts {
  std::vector<std::size_t> placeholders;  // indices, in order
  bool outputIsLast = false;              // exactly one output node, and it is the last node
};

// Walks one argument tree without recursion: checks every reference against the names defined
// before `user`, every list against the length cap, and the nesting against the depth cap.
void checkArgument(const Arg& root, std::size_t user, const std::string& who, std::string_view role,
                   const std::unordered_map<std::string_view, std::size_t>& firstIndex,
                   const ValidateLimits& limits, Reporter& report) {
  std::vector<std::pair<const Arg*, std::size_t>> stack{{&root, 0}};
  bool reportedLength = false, reportedDepth = false;
  while (!stack.empty()) {
    auto [arg, depth] = stack.back();
    stack.pop_back();
    if (arg->kind == Arg::Kind::Ref) {
      auto it = firstIndex.find(arg->text);
      if (it == firstIndex.end())
        report.error(who + " uses undefined value " + quoted(arg->text) + " in " + std::string(role));
      else if (it->second == user)
        report.error(who + " uses itself in " + std::string(role));
      else if (it->second > user)
        report.error(who + " uses " + quoted(arg->text) + " before its definition (node #" +
                     std::to_string(it->second) + ") in " + std::string(role));
      continue;
    }
    if (!arg->isSequence()) continue;
    if (arg->items.size() > limits.maxListLength) {
      if (!reportedLength)
        report.error(who + " has a list of " + std::to_string(arg->items.size()) + " items in " +
                     std::string(role) + " (the limit is " + std::to_string(limits.maxListLength) + ")");
      reportedLength = true;
      continue;  // not walked: the program is rejected anyway
    }
    if (depth + 1 > limits.maxNesting) {
      if (!reportedDepth)
        report.error(who + " nests lists more than " + std::to_string(limits.maxNesting) +
                     " deep in " + std::string(role));
      reportedDepth = true;
      continue;
    }
    // Pushed in reverse so references are checked left to right.
    for (auto it = arg->items.rbegin(); it != arg->items.rend(); ++it) stack.emplace_back(&*it, depth + 1);
  }
}

GraphFacts checkGraph(const Graph& graph, std::string_view scope, const ValidateLimits& limits,
                      Reporter& report) {
  GraphFacts facts;
  const std::string prefix = scope.empty() ? "" : "in submodule " + quoted(scope) + ": ";
  const std::vector<Node>& nodes = graph.nodes;

  // Names: empty and duplicate. The first definition of a name is the one uses resolve to.
  std::unordered_map<std::string_view, std::size_t> firstIndex;
  firstIndex.reserve(nodes.size());
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const Node& node = nodes[i];
    if (node.name.empty()) {
      report.error(describe(node, i, scope) + " has an empty name");
      continue;
    }
    auto [it, inserted] = firstIndex.emplace(node.name, i);
    if (!inserted)
      report.error(prefix + "duplicate node name " + quoted(node.name) + " (nodes #" +
                   std::to_string(it->second) + " and #" + std::to_string(i) + ")");
  }

  // Placeholders first; exactly one output node, last.
  std::optional<std::size_t> firstNonPlaceholder;
  std::vector<std::size_t> outputs;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const Node& node = nodes[i];
    if (node.isPlaceholder()) {
      facts.placeholders.push_back(i);
      if (firstNonPlaceholder)
        report.error(describe(node, i, scope) + " comes after " +
                     describe(nodes[*firstNonPlaceholder], *firstNonPlaceholder, "") +
                     "; placeholders must come first");
    } else if (!firstNonPlaceholder) {
      firstNonPlaceholder = i;
    }
    if (node.isOutput()) outputs.push_back(i);
  }
  if (outputs.empty()) report.error(prefix + "the graph has no output node");
  if (outputs.size() > 1)
    report.error(prefix + "the graph has " + std::to_string(outputs.size()) + " output nodes (" +
                 describe(nodes[outputs[0]], outputs[0], "") + " and " +
                 describe(nodes[outputs[1]], outputs[1], "") + (outputs.size() > 2 ? ", ..." : "") + ")");
  for (std::size_t i : outputs)
    if (i + 1 != nodes.size())
      report.error(describe(nodes[i], i, scope) + " is not the last node (followed by " +
                   describe(nodes[i + 1], i + 1, "") + ")");
  facts.outputIsLast = outputs.size() == 1 && outputs[0] + 1 == nodes.size();

  // Per node: fields its op kind cannot carry, references, list sizes, share-alloc meta.
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const Node& node = nodes[i];
    const std::string who = describe(node, i, scope);
    switch (node.op) {
      case NodeOp::Placeholder:
      case NodeOp::GetAttr:
        if (!node.args.empty() || !node.kwargs.empty()) report.error(who + " has arguments");
        if (node.op == NodeOp::GetAttr && node.target.empty()) report.error(who + " has no attribute path");
        break;
      case NodeOp::CallFunction:
      case NodeOp::CallModule:
        if (node.target.empty()) report.error(who + " has no target");
        break;
      case NodeOp::Output:
        if (node.args.size() != 1)
          report.error(who + " must have exactly one argument (a tuple, a list or a single value), has " +
                       std::to_string(node.args.size()));
        if (!node.kwargs.empty()) report.error(who + " has keyword arguments");
        break;
    }
    for (std::size_t a = 0; a < node.args.size(); ++a)
      checkArgument(node.args[a], i, who, "argument " + std::to_string(a), firstIndex, limits, report);
    for (const auto& [key, value] : node.kwargs)
      checkArgument(value, i, who, "keyword argument " + quoted(key), firstIndex, limits, report);

    if (auto it = node.meta.find("_share_alloc_with_arg_idx"); it != node.meta.end()) {
      std::optional<int> k = node.shareAllocArgIndex();
      const std::string shown = "_share_alloc_with_arg_idx=" + it->second;
      if (!k)
        report.error(who + " has " + shown + ", which is not a non-negative integer");
      else if (static_cast<std::size_t>(*k) >= node.args.size())
        report.error(who + " has " + shown + " but only " + std::to_string(node.args.size()) + " argument(s)");
      else if (!node.args[*k].isRef())
        report.error(who + " has " + shown + " but argument " + std::to_string(*k) +
                     " is not a node (the result would share its storage)");
    }
  }
  return facts;
}

void checkSignature(const Program& program, const GraphFacts& facts, Reporter& report) {
  const Graph& graph = program.graph;
  const Signature& signature = program.signature;

  // Input specs: one per placeholder, in order.
  if (signature.inputs.size() != facts.placeholders.size())
    report.error("the signature has " + std::to_string(signature.inputs.size()) +
                 " input spec(s) but the graph has " + std::to_string(facts.placeholders.size()) +
                 " placeholder(s)");
  std::size_t common = std::min(signature.inputs.size(), facts.placeholders.size());
  for (std::size_t i = 0; i < common; ++i) {
    const std::string& placeholder = graph.nodes[facts.placeholders[i]].name;
    if (signature.inputs[i].name != placeholder)
      report.error("input spec #" + std::to_string(i) + " (" + std::string(toString(signature.inputs[i].kind)) +
                   ") names " + quoted(signature.inputs[i].name) + " but placeholder #" +
                   std::to_string(i) + " is " + quoted(placeholder));
  }
  for (std::size_t i = common; i < signature.inputs.size(); ++i)
    report.error("input spec #" + std::to_string(i) + " names " + quoted(signature.inputs[i].name) +
                 ", which is not a placeholder");

  // Targets are unique per kind (a buffer FQN may equal a user input's name: different kinds).
  std::unordered_map<std::string, std::size_t> seenTargets;
  for (std::size_t i = 0; i < signature.inputs.size(); ++i) {
    const InputSpec& spec = signature.inputs[i];
    if (spec.target.empty()) continue;
    std::string key = std::string(toString(spec.kind)) + ":" + spec.target;
    auto [it, inserted] = seenTargets.emplace(std::move(key), i);
    if (!inserted)
      report.error("input specs #" + std::to_string(it->second) + " and #" + std::to_string(i) +
                   " are both " + std::string(toString(spec.kind)) + " with target " + quoted(spec.target));
  }

  // Output specs: one per returned value, naming that value (empty for a constant).
  if (facts.outputIsLast && graph.nodes.back().args.size() == 1) {
    std::vector<Arg> returned = graph.returnedValues();
    if (signature.outputs.size() != returned.size())
      report.error("the signature has " + std::to_string(signature.outputs.size()) +
                   " output spec(s) but the graph returns " + std::to_string(returned.size()) + " value(s)");
    for (std::size_t i = 0; i < std::min(signature.outputs.size(), returned.size()); ++i) {
      const OutputSpec& spec = signature.outputs[i];
      const std::string expected = returned[i].isRef() ? returned[i].text : std::string();
      if (spec.name == expected) continue;
      std::string what = returned[i].isRef() ? quoted(expected) : "a constant";
      report.error("output spec #" + std::to_string(i) + " (" + std::string(toString(spec.kind)) + ") names " +
                   quoted(spec.name) + " but the graph returns " + what + " at position " + std::to_string(i));
    }
  }

  // Mutation targets resolve, and no input is the target of two mutations.
  std::unordered_map<const InputSpec*, std::size_t> mutated;
  for (std::size_t i = 0; i < signature.outputs.size(); ++i) {
    const OutputSpec& spec = signature.outputs[i];
    if (!isMutation(spec.kind)) continue;
    const InputSpec* input = signature.mutatedInput(spec);
    if (!input) {
      std::string_view wanted = spec.kind == OutputKind::BufferMutation ? "no BUFFER input has that target"
                                                                        : "no USER_INPUT has that name";
      report.error("output spec #" + std::to_string(i) + " (" + std::string(toString(spec.kind)) + " of " +
                   quoted(spec.name) + ") targets " + quoted(spec.target) + ", but " + std::string(wanted));
      continue;
    }
    auto [it, inserted] = mutated.emplace(input, i);
    if (!inserted)
      report.error("output specs #" + std::to_string(it->second) + " and #" + std::to_string(i) +
                   " both mutate " + quoted(spec.target));
  }
}

}  // namespace

std::vector<Diagnostic> validate(const Program& program) { return validate(program, ValidateLimits{}); }

std::vector<Diagnostic> validate(const Program& program, const ValidateLimits& limits) {
  Reporter report(limits.maxErrors);
  GraphFacts facts = checkGraph(program.graph, "", limits, report);
  checkSignature(program, facts, report);
  for (const Submodule& sub : program.submodules) checkGraph(sub.graph, sub.name, limits, report);
  return std::move(report).finish();
}

}  // namespace wb
