// core/validate.cpp: the structural checks of a Program (DESIGN §2), reported all at once.
//
// Linear in the size of the program: node names go into one flat index (for duplicates), a
// reference is checked by comparing its index with its user's, argument trees are walked with an
// explicit stack (bounded depth), and the signature is matched by position.
#include "core/validate.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/name_index.h"
#include "core/shape_rules.h"

namespace wb {
namespace {

// Collects diagnostics up to a cap, then only counts them.
class Reporter {
 public:
  explicit Reporter(std::size_t maxErrors) : maxErrors_(maxErrors) {}

  // `where` is the node's place in the text it was read from, if known; whole-program checks
  // have none (line 0).
  void error(std::string message, SourceLocation where = {}) {
    if (errors_.size() >= maxErrors_) {
      ++dropped_;
      return;
    }
    Diagnostic d;
    d.line = where.line;
    d.column = where.column;
    d.message = std::move(message);
    errors_.push_back(std::move(d));
  }

  // Errors reported so far (kept or only counted).
  std::size_t count() const { return errors_.size() + dropped_; }

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

// Node name -> index of its first definition.
struct NodeName {
  const Node* nodes;  // the graph's first node (no vector to read its data pointer from again)
  std::string_view operator()(std::uint32_t id) const { return nodes[id].name; }
};
using FirstDefinition = FlatNameIndex<NodeName>;

// Which argument of a node is being checked, spelled out only for a diagnostic: a valid
// program (every program check() and the fuzzers validate) produces no text at all.
struct ArgumentRole {
  const Node& node;
  std::size_t index;
  std::string_view scope;
  SourceLocation where;
  std::size_t position;         // positional argument, unless `keyword` is set
  const std::string* keyword;   // keyword argument name
  std::string who() const { return describe(node, index, scope); }
  std::string role() const {
    return keyword ? "keyword argument " + quoted(*keyword) : "argument " + std::to_string(position);
  }
};

// Walks one argument tree without recursion: checks that every reference is to a node of the
// graph before the user, every list against the length cap, and the nesting against the depth
// cap. `stack` is scratch space, reused across arguments.
void checkArgument(const Arg& root, const ArgumentRole& at, std::span<const Node> nodes,
                   const ValidateLimits& limits, Reporter& report,
                   std::vector<std::pair<const Arg*, std::size_t>>& stack) {
  const std::size_t user = at.index;
  auto checkRef = [&](const Arg& arg) {
    const NodeId def = arg.node;
    if (def >= nodes.size())
      report.error(at.who() + " uses undefined value " +
                   (def == kNoNode ? std::string("(no node)") : "#" + std::to_string(def)) + " in " + at.role() +
                   " (the graph has " + std::to_string(nodes.size()) + " nodes)", at.where);
    else if (def == user)
      report.error(at.who() + " uses itself in " + at.role(), at.where);
    else if (def > user)
      report.error(at.who() + " uses " + quoted(nodes[def].name) + " before its definition (node #" +
                   std::to_string(def) + ") in " + at.role(), at.where);
  };
  if (root.kind == Arg::Kind::Ref) return checkRef(root);  // most arguments: no walk
  if (!root.isSequence()) return;
  stack.clear();
  stack.emplace_back(&root, 0);
  bool reportedLength = false, reportedDepth = false;
  while (!stack.empty()) {
    auto [arg, depth] = stack.back();
    stack.pop_back();
    if (arg->kind == Arg::Kind::Ref) {
      checkRef(*arg);
      continue;
    }
    if (!arg->isSequence()) continue;
    if (arg->items.size() > limits.maxListLength) {
      if (!reportedLength)
        report.error(at.who() + " has a list of " + std::to_string(arg->items.size()) + " items in " + at.role() +
                     " (the limit is " + std::to_string(limits.maxListLength) + ")", at.where);
      reportedLength = true;
      continue;  // not walked: the program is rejected anyway
    }
    if (depth + 1 > limits.maxNesting) {
      if (!reportedDepth)
        report.error(at.who() + " nests lists more than " + std::to_string(limits.maxNesting) + " deep in " + at.role(), at.where);
      reportedDepth = true;
      continue;
    }
    // Pushed in reverse so references are checked left to right.
    for (auto it = arg->items.rbegin(); it != arg->items.rend(); ++it) stack.emplace_back(&*it, depth + 1);
  }
}

// `locations`: where each node was defined in the text (empty when unknown, or for a submodule).
GraphFacts checkGraph(const Graph& graph, std::string_view scope, const ValidateLimits& limits,
                      std::span<const SourceLocation> locations, Reporter& report) {
  GraphFacts facts;
  auto at = [&](std::size_t i) { return i < locations.size() ? locations[i] : SourceLocation{}; };
  const std::string prefix = scope.empty() ? "" : "in submodule " + quoted(scope) + ": ";
  // A span: its size and data stay in registers across the loops, where the vector's would be
  // read again after every store (push_back, the index's slots) that might alias them.
  const std::span<const Node> nodes(graph.nodes);

  // Names: empty and duplicate (the text a program is written as refers to nodes by name).
  if (nodes.size() >= FirstDefinition::kNone) {
    report.error(prefix + "the graph has " + std::to_string(nodes.size()) + " nodes (too many)");
    return facts;
  }
  FirstDefinition firstIndex(NodeName{nodes.data()}, nodes.size());
  std::size_t placeholderCount = 0;
  // Each name goes to a random slot of the index: its hash is taken kAhead names early and its
  // slot prefetched, so that the insertion does not wait for memory (a graph of 10^6 nodes has
  // an index of 16 MB).
  constexpr std::size_t kAhead = 8;
  std::array<std::uint64_t, kAhead> hashes{};
  auto hashAhead = [&](std::size_t j) {
    if (j >= nodes.size()) return;
    hashes[j % kAhead] = hashName(nodes[j].name);
    firstIndex.prefetch(hashes[j % kAhead]);
  };
  for (std::size_t j = 0; j < kAhead; ++j) hashAhead(j);
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const Node& node = nodes[i];
    const std::uint64_t hash = hashes[i % kAhead];
    hashAhead(i + kAhead);
    placeholderCount += node.isPlaceholder();
    if (node.name.empty()) {
      report.error(describe(node, i, scope) + " has an empty name", at(i));
      continue;
    }
    const std::uint32_t first = firstIndex.insertHashed(static_cast<std::uint32_t>(i), hash);
    if (first != i) {
      report.error(prefix + "duplicate node name " + quoted(node.name) + " (nodes #" + std::to_string(first) +
                   " and #" + std::to_string(i) + ")", at(i));
    }
  }
  // The arguments a valid program has: a reference to an earlier node, a scalar, or a flat
  // list of those (`[y, sc]`, `[None, pos]`) within the limits. True means checkArgument would
  // report nothing; false means it must look (and say what is wrong, if anything).
  auto plainlyValid = [&](const Arg& arg, std::size_t i) {
    if (arg.kind == Arg::Kind::Ref) return arg.node < i;
    if (!arg.isSequence()) return true;
    if (arg.items.size() > limits.maxListLength || limits.maxNesting < 1) return false;
    for (const Arg& item : arg.items) {
      if (item.isSequence()) return false;
      if (item.kind == Arg::Kind::Ref && item.node >= i) return false;
    }
    return true;
  };

  // Placeholders first; exactly one output node, last. (Output nodes are counted rather than
  // listed: a valid program has one, and validate() runs up to twice per oracle check, so its
  // allocations show.)
  std::optional<std::size_t> firstNonPlaceholder;
  std::size_t outputCount = 0, firstOutputs[2] = {0, 0};
  facts.placeholders.reserve(placeholderCount);
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
    if (node.isOutput()) {
      if (outputCount < 2) firstOutputs[outputCount] = i;
      ++outputCount;
    }
  }
  if (outputCount == 0) report.error(prefix + "the graph has no output node");
  if (outputCount > 1)
    report.error(prefix + "the graph has " + std::to_string(outputCount) + " output nodes (" +
                 describe(nodes[firstOutputs[0]], firstOutputs[0], "") + " and " +
                 describe(nodes[firstOutputs[1]], firstOutputs[1], "") + (outputCount > 2 ? ", ..." : "") + ")");
  facts.outputIsLast = outputCount == 1 && firstOutputs[0] + 1 == nodes.size();
  if (!facts.outputIsLast)
    for (std::size_t i = 0; i + 1 < nodes.size(); ++i)
      if (nodes[i].isOutput())
        report.error(describe(nodes[i], i, scope) + " is not the last node (followed by " +
                     describe(nodes[i + 1], i + 1, "") + ")");

  // Per node: fields its op kind cannot carry, references, list sizes, share-alloc meta.
  std::vector<std::pair<const Arg*, std::size_t>> stack;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const Node& node = nodes[i];
    auto who = [&] { return describe(node, i, scope); };
    const SourceLocation where = at(i);
    switch (node.op) {
      case NodeOp::Placeholder:
      case NodeOp::GetAttr:
        if (!node.args.empty() || !node.kwargs.empty()) report.error(who() + " has arguments", where);
        if (node.op == NodeOp::GetAttr && node.target.empty()) report.error(who() + " has no attribute path", where);
        break;
      case NodeOp::CallFunction:
      case NodeOp::CallModule:
        if (node.target.empty()) report.error(who() + " has no target", where);
        break;
      case NodeOp::Output:
        if (node.args.size() != 1)
          report.error(who() + " must have exactly one argument (a tuple, a list or a single value), has " +
                       std::to_string(node.args.size()), where);
        if (!node.kwargs.empty()) report.error(who() + " has keyword arguments", where);
        break;
    }
    for (std::size_t a = 0; a < node.args.size(); ++a) {
      // Most arguments are settled here; checkArgument looks again at the others and says what
      // is wrong with them (or walks a nested list).
      if (plainlyValid(node.args[a], i)) continue;
      checkArgument(node.args[a], ArgumentRole{node, i, scope, where, a, nullptr}, nodes, limits, report, stack);
    }
    for (const auto& [key, value] : node.kwargs) {
      if (plainlyValid(value, i)) continue;
      checkArgument(value, ArgumentRole{node, i, scope, where, 0, &key}, nodes, limits, report, stack);
    }

    if (node.meta.empty()) continue;  // nearly every node: no lookup
    if (auto it = node.meta.find("_share_alloc_with_arg_idx"); it != node.meta.end()) {
      std::optional<int> k = node.shareAllocArgIndex();
      const std::string shown = "_share_alloc_with_arg_idx=" + it->second;
      if (!k)
        report.error(who() + " has " + shown + ", which is not a non-negative integer", where);
      else if (static_cast<std::size_t>(*k) >= node.args.size())
        report.error(who() + " has " + shown + " but only " + std::to_string(node.args.size()) + " argument(s)", where);
      else if (!node.args[*k].isRef())
        report.error(who() + " has " + shown + " but argument " + std::to_string(*k) +
                     " is not a node (the result would share its storage)", where);
    }
  }
  return facts;
}

// The annotated shapes against the shape rules, in a graph whose references are valid (the
// checks above found nothing wrong with it).
void checkShapes(const Graph& graph, std::string_view scope, std::span<const SourceLocation> locations,
                 Reporter& report) {
  for (ShapeContradiction& c : checkAnnotatedShapes(graph))
    report.error(describe(graph.nodes[c.node], c.node, scope) + ": " + c.message,
                 c.node < locations.size() ? locations[c.node] : SourceLocation{});
}

// Signature::mutatedInput, for every output spec of a signature: a large program (10^4 buffers,
// each mutated) would otherwise scan the input specs once per mutation. Small signatures are
// scanned as before (no index to allocate).
class MutatedInputs {
 public:
  explicit MutatedInputs(const Signature& signature)
      : signature_(signature),
        indexed_(signature.inputs.size() * signature.outputs.size() > kScanLimit) {
    if (!indexed_) return;
    buffers_.emplace(KeyOf{&signature.inputs, false}, signature.inputs.size());
    userInputs_.emplace(KeyOf{&signature.inputs, true}, signature.inputs.size());
    for (std::size_t i = 0; i < signature.inputs.size(); ++i) {
      const InputKind kind = signature.inputs[i].kind;
      // The first spec of each key stays, as findInput finds the first.
      if (kind == InputKind::Buffer) buffers_->insert(static_cast<std::uint32_t>(i));
      if (kind == InputKind::UserInput) userInputs_->insert(static_cast<std::uint32_t>(i));
    }
  }

  const InputSpec* operator()(const OutputSpec& spec) const {
    if (!indexed_) return signature_.mutatedInput(spec);
    std::uint32_t id = Index::kNone;
    if (spec.kind == OutputKind::BufferMutation) id = buffers_->find(spec.target);
    if (spec.kind == OutputKind::UserInputMutation) id = userInputs_->find(spec.target);
    return id == Index::kNone ? nullptr : &signature_.inputs[id];
  }

 private:
  static constexpr std::size_t kScanLimit = 4096;
  // A buffer's key is its target; a user input's, its name (Signature::findInput).
  struct KeyOf {
    const std::vector<InputSpec>* inputs;
    bool byName;
    std::string_view operator()(std::uint32_t id) const {
      const InputSpec& spec = (*inputs)[id];
      return byName ? spec.name : spec.target;
    }
  };
  using Index = FlatNameIndex<KeyOf>;
  const Signature& signature_;
  bool indexed_;
  std::optional<Index> buffers_;
  std::optional<Index> userInputs_;
};

// Whether `value`'s annotated shape broadcasts into `target`'s (trailing dimensions equal, or 1
// in the value). Unknown or symbolic shapes are taken to fit: only what is annotated is checked.
bool trailingDimsFit(std::span<const std::int64_t> value, std::span<const std::int64_t> target) {
  if (value.size() > target.size()) return false;
  for (std::size_t k = 1; k <= value.size(); ++k) {
    const std::int64_t vd = value[value.size() - k], td = target[target.size() - k];
    if (vd != td && vd != 1) return false;
  }
  return true;
}

bool broadcastsInto(const Node& value, const Node& target) {
  // Static shapes, the usual case, without building TensorTypes; the rest as TensorType reads it.
  const std::optional<StaticShape> vs = parseStaticShape(value.typeText), ts = parseStaticShape(target.typeText);
  if (vs && ts) return trailingDimsFit(vs->view(), ts->view());
  const std::optional<TensorType> v = value.tensorType(), t = target.tensorType();
  if (!v || !t) return true;
  for (const Dim& d : v->shape) if (!d.isStatic()) return true;
  for (const Dim& d : t->shape) if (!d.isStatic()) return true;
  std::vector<std::int64_t> vd, td;
  for (const Dim& d : v->shape) vd.push_back(d.size);
  for (const Dim& d : t->shape) td.push_back(d.size);
  return trailingDimsFit(vd, td);
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
  // The specs with a target, sorted by (kind, target) and, within one, by position: each
  // run of equal keys is one target, its first spec the one the others repeat. The keys are
  // compared in place: no key strings are built.
  std::vector<std::uint32_t> byTarget;
  byTarget.reserve(signature.inputs.size());
  for (std::size_t i = 0; i < signature.inputs.size(); ++i)
    if (!signature.inputs[i].target.empty()) byTarget.push_back(static_cast<std::uint32_t>(i));
  auto keyOf = [&](std::uint32_t i) {
    return std::pair<InputKind, std::string_view>(signature.inputs[i].kind, signature.inputs[i].target);
  };
  auto byKey = [&](std::uint32_t a, std::uint32_t b) { return keyOf(a) < keyOf(b); };
  if (byTarget.size() > 32) {
    std::stable_sort(byTarget.begin(), byTarget.end(), byKey);
  } else {  // insertion sort, stable too: a handful of specs, and std::stable_sort allocates
    for (std::size_t i = 1; i < byTarget.size(); ++i)
      for (std::size_t j = i; j > 0 && byKey(byTarget[j], byTarget[j - 1]); --j) std::swap(byTarget[j], byTarget[j - 1]);
  }
  std::vector<std::pair<std::uint32_t, std::uint32_t>> repeats;  // (spec, the first with its key)
  for (std::size_t k = 1, first = 0; k < byTarget.size(); ++k) {
    if (keyOf(byTarget[k]) != keyOf(byTarget[first])) first = k;
    else repeats.emplace_back(byTarget[k], byTarget[first]);
  }
  std::sort(repeats.begin(), repeats.end());  // reported in the order of the specs
  for (const auto& [i, first] : repeats) {
    const InputSpec& spec = signature.inputs[i];
    report.error("input specs #" + std::to_string(first) + " and #" + std::to_string(i) + " are both " +
                 std::string(toString(spec.kind)) + " with target " + quoted(spec.target));
  }

  // Output specs: one per returned value, naming that value (empty for a constant).
  if (facts.outputIsLast && graph.nodes.back().args.size() == 1) {
    const std::span<const Arg> returned = graph.returnedArgs();
    if (signature.outputs.size() != returned.size())
      report.error("the signature has " + std::to_string(signature.outputs.size()) +
                   " output spec(s) but the graph returns " + std::to_string(returned.size()) + " value(s)");
    for (std::size_t i = 0; i < std::min(signature.outputs.size(), returned.size()); ++i) {
      const OutputSpec& spec = signature.outputs[i];
      const bool isNode = returned[i].isRef() && returned[i].node < graph.nodes.size();
      const std::string_view expected = isNode ? std::string_view(graph.nodes[returned[i].node].name) : std::string_view();
      if (spec.name == expected) continue;
      std::string what = isNode ? quoted(expected) : returned[i].isRef() ? "no node" : "a constant";
      report.error("output spec #" + std::to_string(i) + " (" + std::string(toString(spec.kind)) + ") names " +
                   quoted(spec.name) + " but the graph returns " + what + " at position " + std::to_string(i));
    }
  }

  const std::span<const Arg> returned =
      facts.outputIsLast && graph.nodes.back().args.size() == 1 ? graph.returnedArgs() : std::span<const Arg>();
  // Mutation targets resolve, and no input is the target of two mutations: per input spec,
  // the first output spec that mutates it.
  constexpr std::size_t kNotMutated = static_cast<std::size_t>(-1);
  std::vector<std::size_t> mutatedBy;
  MutatedInputs mutatedInputs(signature);
  for (std::size_t i = 0; i < signature.outputs.size(); ++i) {
    const OutputSpec& spec = signature.outputs[i];
    if (!isMutation(spec.kind)) continue;
    const InputSpec* input = mutatedInputs(spec);
    if (!input) {
      std::string_view wanted = spec.kind == OutputKind::BufferMutation ? "no BUFFER input has that target"
                                                                        : "no USER_INPUT has that name";
      report.error("output spec #" + std::to_string(i) + " (" + std::string(toString(spec.kind)) + " of " +
                   quoted(spec.name) + ") targets " + quoted(spec.target) + ", but " + std::string(wanted));
      continue;
    }
    // The write-back copy_(target, value) broadcasts the value into the target: a value whose
    // shape does not broadcast to the target's has no write-back (export never makes one).
    const std::size_t j = static_cast<std::size_t>(input - signature.inputs.data());
    if (i < returned.size() && returned[i].isRef() && returned[i].node < graph.nodes.size() &&
        j < facts.placeholders.size() && graph.nodes[facts.placeholders[j]].name == input->name) {
      const Node& value = graph.nodes[returned[i].node];
      const Node& target = graph.nodes[facts.placeholders[j]];
      if (!broadcastsInto(value, target))
        report.error("output spec #" + std::to_string(i) + " (" + std::string(toString(spec.kind)) + " of " +
                     quoted(spec.name) + ") writes " + quoted(value.typeText) + " back into " + quoted(target.name) +
                     " (" + quoted(target.typeText) + "): the shape does not broadcast to the target's");
    }
    if (mutatedBy.empty()) mutatedBy.assign(signature.inputs.size(), kNotMutated);
    std::size_t& first = mutatedBy[static_cast<std::size_t>(input - signature.inputs.data())];
    if (first == kNotMutated) first = i;
    else
      report.error("output specs #" + std::to_string(first) + " and #" + std::to_string(i) + " both mutate " +
                   quoted(spec.target));
  }
}

}  // namespace

std::vector<Diagnostic> validate(const Program& program) { return validate(program, ValidateLimits{}, {}); }

std::vector<Diagnostic> validate(const Program& program, const ValidateLimits& limits) {
  return validate(program, limits, {});
}

std::vector<Diagnostic> validate(const Program& program, const ValidateLimits& limits,
                                 std::span<const SourceLocation> nodeLocations) {
  Reporter report(limits.maxErrors);
  std::size_t before = report.count();
  GraphFacts facts = checkGraph(program.graph, "", limits, nodeLocations, report);
  if (report.count() == before) checkShapes(program.graph, "", nodeLocations, report);
  checkSignature(program, facts, report);
  for (const Submodule& sub : program.submodules) {
    before = report.count();
    checkGraph(sub.graph, sub.name, limits, {}, report);
    if (report.count() == before) checkShapes(sub.graph, sub.name, {}, report);
  }
  return std::move(report).finish();
}

}  // namespace wb
