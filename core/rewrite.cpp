// core/rewrite.cpp: inserting write-back copies (see rewrite.h).
#include "core/rewrite.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <set>
#include <stdexcept>
#include <string_view>
#include <utility>

#include "core/name_index.h"

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

namespace {

std::string_view copyNameBase(CopyNames names) { return names == CopyNames::Fx ? "copy__default" : "copy_"; }

// The suffix s of a name freshName(graph, base) could produce: `base` is 0, "<base>_<s>" is
// s >= 1 written as std::to_string writes it; nullopt for every other name.
std::optional<std::size_t> copyNameSuffix(std::string_view name, std::string_view base) {
  if (name == base) return 0;
  if (name.size() <= base.size() + 1 || !name.starts_with(base) || name[base.size()] != '_') return std::nullopt;
  std::string_view digits = name.substr(base.size() + 1);
  if (digits.empty() || digits.front() == '0') return std::nullopt;
  std::size_t value = 0;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec != std::errc() || ptr != digits.data() + digits.size()) return std::nullopt;
  return value;
}

// One implementation for both overloads: `kConsume` moves the input's nodes and signature
// into the result (the caller passed an rvalue), otherwise they are copied, each node once.
template <bool kConsume>
RewriteResult rewrite(std::conditional_t<kConsume, Program&, const Program&> program,
                      const std::vector<CopyInsertion>& requests, OutputOrder order, CopyNames names) {
  const std::string_view base = copyNameBase(names);
  auto& in = program.graph;
  const std::size_t n = in.nodes.size();
  const std::vector<OutputSpec>& outputs = program.signature.outputs;
  const std::size_t k = requests.size();
  if (n + k >= kNoNode) throw std::length_error("insertWriteBacks: too many nodes");

  const std::vector<InputSpec>& inputs = program.signature.inputs;
  auto targetOf = [&](std::uint32_t s) { return std::string_view(inputs[s].target); };
  auto nameOf = [&](std::uint32_t s) { return std::string_view(inputs[s].name); };
  FlatNameIndex<decltype(targetOf)> buffers(targetOf, inputs.size());  // first match wins
  FlatNameIndex<decltype(nameOf)> userInputs(nameOf, inputs.size());
  for (std::size_t s = 0; s < inputs.size(); ++s) {
    if (inputs[s].kind == InputKind::Buffer) buffers.insert(static_cast<std::uint32_t>(s));
    if (inputs[s].kind == InputKind::UserInput) userInputs.insert(static_cast<std::uint32_t>(s));
  }

  // The edit numbers copy r as node n + r: the copies, the new output tuple and every input
  // node refer to nodes in that numbering until the layout loop renumbers them (oldToNew).
  // The copies are still without names: a fresh name must not collide with any node, which the
  // layout loop finds out on its way.
  RewriteResult result;
  std::vector<Arg> values = in.returnedValues();  // becomes the new output tuple
  std::vector<Node> copies;
  copies.reserve(k);
  const SharedString copyTarget("aten::copy_");  // one block for every copy
  for (std::size_t r = 0; r < k; ++r) {
    const CopyInsertion& req = requests[r];
    const OutputSpec& spec = outputs.at(req.outputIndex);
    std::uint32_t target = kNoNode;
    if (spec.kind == OutputKind::BufferMutation)
      target = buffers.find(spec.target);
    else if (spec.kind == OutputKind::UserInputMutation)
      target = userInputs.find(spec.target);
    if (target == kNoNode) throw std::logic_error("insertWriteBacks: unresolved mutation target " + spec.target);
    if (req.afterNode >= n) throw std::out_of_range("insertWriteBacks: anchor out of range");
    const Arg& value = values.at(req.outputIndex);
    Node copy;
    copy.op = NodeOp::CallFunction;
    copy.target = copyTarget;
    copy.args = {Arg::ref(target), value};  // input spec s is placeholder node s
    // copy_ returns its first argument, so the copy has the target's type: the value may
    // broadcast into it (i64[1] into i64[0]) or differ in dtype.
    if (target < n) copy.typeText = in.nodes[target].typeText;
    copies.push_back(std::move(copy));
  }
  if (order == OutputOrder::KeepPositions) {
    for (std::size_t r = 0; r < k; ++r) values[requests[r].outputIndex] = Arg::ref(static_cast<NodeId>(n + r));
  } else {
    std::vector<bool> copied(values.size(), false);
    std::vector<Arg> reordered;
    reordered.reserve(values.size());
    for (std::size_t r = 0; r < k; ++r) {
      copied[requests[r].outputIndex] = true;
      reordered.push_back(Arg::ref(static_cast<NodeId>(n + r)));
    }
    for (std::size_t i = 0; i < values.size(); ++i)
      if (!copied[i]) reordered.push_back(std::move(values[i]));
    values = std::move(reordered);
  }

  // Lay out the nodes: each input node, then the copies anchored after it (request order).
  // Copies anchored at the output node go just before it. On the way, note the names a fresh
  // copy name could collide with.
  std::vector<std::size_t> byAnchor(k);
  for (std::size_t r = 0; r < k; ++r) byAnchor[r] = r;
  auto earlier = [&](std::size_t a, std::size_t b) { return requests[a].afterNode < requests[b].afterNode; };
  if (k <= 16) {
    // Stable insertion sort: std::stable_sort allocates a buffer, and most programs have a few
    // write-backs.
    for (std::size_t r = 1; r < k; ++r)
      for (std::size_t j = r; j > 0 && earlier(byAnchor[j], byAnchor[j - 1]); --j) std::swap(byAnchor[j], byAnchor[j - 1]);
  } else {
    std::stable_sort(byAnchor.begin(), byAnchor.end(), earlier);
  }
  Program& out = result.program;
  auto take = [&](auto& field) -> decltype(auto) {
    if constexpr (kConsume) return std::move(field); else return field;
  };
  out.signature = take(program.signature);
  out.schemas = take(program.schemas);
  out.submodules = take(program.submodules);
  out.rangeConstraints = take(program.rangeConstraints);
  out.signatureInferred = program.signatureInferred;
  out.graph.nodes.reserve(n + k);
  result.copyPositions.resize(k);
  std::vector<std::size_t> usedSuffixes;
  std::vector<NodeId> oldToNew(n + k, kNoNode);
  // References point to earlier nodes, so each node is renumbered as it is laid out. Until the
  // first copy, every node keeps its index and nothing needs renumbering.
  bool shifted = false;
  auto layOut = [&](auto&& node, std::size_t from) {
    oldToNew[from] = static_cast<NodeId>(out.graph.nodes.size());
    out.graph.nodes.push_back(std::forward<decltype(node)>(node));
    if (shifted) renumberReferences(std::span<Node>(&out.graph.nodes.back(), 1), oldToNew);
  };
  auto next = byAnchor.begin();
  // The input is streamed: nodes and, for the renumbering, their arguments are prefetched ahead.
  constexpr std::size_t kLookahead = 8;
  for (std::size_t i = 0; i < n; ++i) {
    if (i + 2 * kLookahead < n) prefetchNode(in.nodes[i + 2 * kLookahead]);
    if (shifted && i + kLookahead < n) prefetchArgs(in.nodes[i + kLookahead]);
    const Node& node = in.nodes[i];
    if (node.name.starts_with(base))
      if (std::optional<std::size_t> s = copyNameSuffix(node.name, base)) usedSuffixes.push_back(*s);
    const bool isOutput = node.isOutput();
    if (!isOutput) layOut(take(in.nodes[i]), i);
    for (; next != byAnchor.end() && requests[*next].afterNode == i; ++next) {
      result.copyPositions[*next] = out.graph.nodes.size();
      shifted = true;
      layOut(std::move(copies[*next]), n + *next);
    }
    if (isOutput) {
      Node output = take(in.nodes[i]);
      output.args.clear();  // not `= {...}`: an initializer list would copy the tuple
      output.args.push_back(Arg::tuple(std::move(values)));
      shifted = true;  // the tuple refers to the copies by their numbers in the edit
      layOut(std::move(output), i);
    }
  }

  // Name the copies. Fresh names follow freshName's sequence (base, base_1, ...): names are
  // only ever added, so each copy takes the first suffix unused after the previous copy's.
  std::sort(usedSuffixes.begin(), usedSuffixes.end());
  std::size_t suffix = 0;  // 0: the bare base
  auto used = usedSuffixes.begin();
  auto nextName = [&]() {
    for (;; ++suffix) {
      while (used != usedSuffixes.end() && *used < suffix) ++used;
      if (used != usedSuffixes.end() && *used == suffix) continue;
      std::string name(base);
      if (suffix != 0) name += "_" + std::to_string(suffix);
      ++suffix;
      return name;
    }
  };
  result.copyNames.reserve(k);
  for (std::size_t r = 0; r < k; ++r) {
    Node& copy = out.graph.nodes[result.copyPositions[r]];
    copy.name = nextName();
    result.copyNames.push_back(copy.name);
  }

  // The specs name what the output returns.
  std::vector<OutputSpec>& specs = out.signature.outputs;
  if (order == OutputOrder::KeepPositions) {
    for (std::size_t r = 0; r < k; ++r) specs[requests[r].outputIndex].name = result.copyNames[r];
  } else {
    // Positional renaming of every mutation spec, exactly as upstream does it.
    const std::span<const Arg> returned = out.graph.returnedArgs();
    std::size_t nextSpec = 0;
    for (OutputSpec& spec : specs) {
      if (!isMutation(spec.kind)) continue;
      if (nextSpec >= returned.size()) throw std::out_of_range("insertWriteBacks: more mutation specs than outputs");
      const Arg& a = returned[nextSpec++];
      spec.name = a.isRef() ? out.graph.nodes[a.node].name : std::string();
    }
  }
  return result;
}

}  // namespace

RewriteResult insertWriteBacks(const Program& program, const std::vector<CopyInsertion>& requests,
                               OutputOrder order, CopyNames names) {
  return rewrite<false>(program, requests, order, names);
}

RewriteResult insertWriteBacks(Program&& program, const std::vector<CopyInsertion>& requests, OutputOrder order,
                               CopyNames names) {
  return rewrite<true>(program, requests, order, names);
}

}  // namespace wb
