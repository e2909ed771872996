// core/rewrite.cpp: inserting write-back copies (see rewrite.h).
#include "core/rewrite.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <set>
#include <stdexcept>
#include <string_view>
#include <utility>

#include "core/alias.h"

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

// The suffix s of a name freshName(graph, "copy_") could produce: "copy_" is 0, "copy__<s>" is
// s >= 1 written as std::to_string writes it; nullopt for every other name.
std::optional<std::size_t> copyNameSuffix(std::string_view name) {
  if (name == "copy_") return 0;
  if (!name.starts_with("copy__")) return std::nullopt;
  std::string_view digits = name.substr(6);
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
                      const std::vector<CopyInsertion>& requests, OutputOrder order) {
  auto& in = program.graph;
  std::vector<Arg> returned = in.returnedValues();  // becomes the new output tuple
  const std::vector<OutputSpec>& outputs = program.signature.outputs;
  const std::size_t k = requests.size();

  const std::vector<InputSpec>& inputs = program.signature.inputs;
  auto targetOf = [&](std::uint32_t s) { return std::string_view(inputs[s].target); };
  auto nameOf = [&](std::uint32_t s) { return std::string_view(inputs[s].name); };
  FlatNameIndex<decltype(targetOf)> buffers(targetOf, inputs.size());  // first match wins
  FlatNameIndex<decltype(nameOf)> userInputs(nameOf, inputs.size());
  for (std::size_t s = 0; s < inputs.size(); ++s) {
    if (inputs[s].kind == InputKind::Buffer) buffers.insert(static_cast<std::uint32_t>(s));
    if (inputs[s].kind == InputKind::UserInput) userInputs.insert(static_cast<std::uint32_t>(s));
  }

  // The copies, still without names or types: both depend on the whole input (a fresh name must
  // not collide with any node, a copy takes its value's type), which the layout loop below
  // visits anyway. A placement may insert 10^4 copies into 10^6 nodes, so the input is read in
  // that one pass only.
  RewriteResult result;
  std::vector<Node> copies;
  copies.reserve(k);
  std::size_t unhinted = 0;  // requests whose value node the caller did not give
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
    if (req.afterNode >= in.nodes.size()) throw std::out_of_range("insertWriteBacks: anchor out of range");
    Node copy;
    copy.op = NodeOp::CallFunction;
    copy.target = copyTarget;
    copy.args = {Arg::ref(inputs[target].name, target), returned.at(req.outputIndex)};  // input spec k is node k
    if (req.valueNode && *req.valueNode < in.nodes.size() &&
        in.nodes[*req.valueNode].name == outputs.at(req.outputIndex).name)
      copy.typeText = in.nodes[*req.valueNode].typeText;
    else
      ++unhinted;
    copies.push_back(std::move(copy));
  }

  // Lay out the nodes: each input node, then the copies anchored after it (request order).
  // Copies anchored at the output node go just before it. On the way, note the names a fresh
  // copy name could collide with and the first node named like each value.
  std::vector<std::size_t> byAnchor(k);
  for (std::size_t r = 0; r < k; ++r) byAnchor[r] = r;
  std::stable_sort(byAnchor.begin(), byAnchor.end(),
                   [&](std::size_t a, std::size_t b) { return requests[a].afterNode < requests[b].afterNode; });
  Program& out = result.program;
  // Everything but the nodes is moved or copied as is. The output specs are then renamed in
  // place (`outputs`, the input's, is not read again: it may have been moved).
  auto take = [&](auto& field) -> decltype(auto) {
    if constexpr (kConsume) return std::move(field); else return field;
  };
  out.signature = take(program.signature);
  std::vector<OutputSpec>& specs = out.signature.outputs;
  auto valueNameOf = [&](std::uint32_t r) { return std::string_view(specs.at(requests[r].outputIndex).name); };
  FlatNameIndex<decltype(valueNameOf)> valueIndex(valueNameOf, k);  // value name -> first request
  for (std::size_t r = 0; r < k; ++r) valueIndex.insert(static_cast<std::uint32_t>(r));
  constexpr std::size_t kNotFound = std::numeric_limits<std::size_t>::max();
  std::vector<std::size_t> valueNode(k, kNotFound);  // by first request: first node with the name
  std::vector<std::size_t> usedSuffixes;

  out.schemas = take(program.schemas);
  out.submodules = take(program.submodules);
  out.rangeConstraints = take(program.rangeConstraints);
  out.signatureInferred = program.signatureInferred;
  out.graph.nodes.reserve(in.nodes.size() + k);
  adviseHugePages(out.graph.nodes);
  result.copyPositions.resize(k);
  // A copied program's references keep valid definition hints (Arg::definitionHint): each
  // input node's new index, for the hints of the nodes after it. A consumed program's nodes are
  // moved without reading their arguments (on 10^6 nodes that would be another pass over them),
  // so its hints go stale, which only costs its readers a look-up.
  std::vector<std::uint32_t> movedTo;
  if constexpr (!kConsume) movedTo.resize(in.nodes.size());
  auto next = byAnchor.begin();
  constexpr std::size_t kLookahead = 8;  // the input is streamed: see AliasBuilder::run
  for (std::size_t i = 0; i < in.nodes.size(); ++i) {
    if (i + kLookahead < in.nodes.size()) prefetchNode(in.nodes[i + kLookahead]);
    const Node& node = in.nodes[i];
    if (node.name.starts_with("copy_"))
      if (std::optional<std::size_t> s = copyNameSuffix(node.name)) usedSuffixes.push_back(*s);
    if (unhinted > 0)
      if (const std::uint32_t r = valueIndex.find(node.name); r != valueIndex.kNone && valueNode[r] == kNotFound)
        valueNode[r] = out.graph.nodes.size();
    const bool isOutput = node.isOutput();
    auto layOut = [&](auto&& n, std::size_t from) {
      if constexpr (!kConsume) {
        if (from != kNotFound) movedTo[from] = static_cast<std::uint32_t>(out.graph.nodes.size());
        out.graph.nodes.push_back(std::forward<decltype(n)>(n));
        followMovedNodes(out.graph.nodes.back(), movedTo);
      } else {
        out.graph.nodes.push_back(std::forward<decltype(n)>(n));
      }
    };
    if (!isOutput) layOut(take(in.nodes[i]), i);
    for (; next != byAnchor.end() && requests[*next].afterNode == i; ++next) {
      result.copyPositions[*next] = out.graph.nodes.size();
      layOut(std::move(copies[*next]), kNotFound);
    }
    if (isOutput) layOut(take(in.nodes[i]), i);
  }

  // Name the copies and give them their values' types. Fresh names follow freshName's sequence
  // (copy_, copy__1, ...): names are only ever added, so each copy takes the first suffix unused
  // after the previous copy's.
  std::sort(usedSuffixes.begin(), usedSuffixes.end());
  std::size_t suffix = 0;  // 0: the bare base
  auto used = usedSuffixes.begin();
  auto nextName = [&]() {
    for (;; ++suffix) {
      while (used != usedSuffixes.end() && *used < suffix) ++used;
      if (used != usedSuffixes.end() && *used == suffix) continue;
      std::string name = suffix == 0 ? std::string("copy_") : "copy__" + std::to_string(suffix);
      ++suffix;
      return name;
    }
  };
  result.copyNames.reserve(k);
  for (std::size_t r = 0; r < k; ++r) {
    Node& copy = out.graph.nodes[result.copyPositions[r]];
    copy.name = nextName();
    if (unhinted > 0 && copy.typeText.empty())
      if (std::size_t v = valueNode[valueIndex.find(specs.at(requests[r].outputIndex).name)]; v != kNotFound)
        copy.typeText = out.graph.nodes[v].typeText;
    result.copyNames.push_back(copy.name);
  }

  // Rewrite the returned tuple and the specs.
  std::vector<Arg> values = std::move(returned);
  for (Arg& v : values) followMovedNodes(v, movedTo);  // nothing to follow if consumed
  if (order == OutputOrder::KeepPositions) {
    for (std::size_t r = 0; r < k; ++r) {
      values[requests[r].outputIndex] = Arg::ref(result.copyNames[r], static_cast<std::int64_t>(result.copyPositions[r]));
      specs[requests[r].outputIndex].name = result.copyNames[r];
    }
  } else {
    std::vector<bool> copied(values.size(), false);
    std::vector<Arg> reordered;
    for (std::size_t r = 0; r < k; ++r) {
      copied[requests[r].outputIndex] = true;
      reordered.push_back(Arg::ref(result.copyNames[r], static_cast<std::int64_t>(result.copyPositions[r])));
    }
    for (std::size_t i = 0; i < values.size(); ++i)
      if (!copied[i]) reordered.push_back(values[i]);
    // Positional renaming of every mutation spec, exactly as upstream does it.
    std::size_t nextSpec = 0;
    for (OutputSpec& spec : specs) {
      if (!isMutation(spec.kind)) continue;
      const Arg& a = reordered.at(nextSpec++);
      spec.name = a.isRef() ? a.text : std::string();
    }
    values = std::move(reordered);
  }
  Node& output = out.graph.nodes.back();
  output.args = {Arg::tuple(std::move(values))};
  return result;
}

}  // namespace

RewriteResult insertWriteBacks(const Program& program, const std::vector<CopyInsertion>& requests,
                               OutputOrder order) {
  return rewrite<false>(program, requests, order);
}

RewriteResult insertWriteBacks(Program&& program, const std::vector<CopyInsertion>& requests, OutputOrder order) {
  return rewrite<true>(program, requests, order);
}

}  // namespace wb
