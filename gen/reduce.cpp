// gen/reduce.cpp: the fixpoint graph reducer (see reduce.h for the steps).
//
// Each step is a lazily indexed family of candidates, make(program, i); a candidate is kept
// when it validates and is still interesting. After a kept candidate the same index is tried
// again on the new program (the family has shifted); a full pass with nothing kept is the
// fixpoint, so the result is 1-minimal for the steps.
#include "gen/reduce.h"

#include <algorithm>
#include <array>
#include <bit>
#include <map>
#include <optional>
#include <set>

#include "core/validate.h"
#include "gen/program_builder.h"

namespace wb::gen {

namespace {

// Renames the output specs that name a node per `renames` (references hold indices).
void renameOutputSpecs(Program& p, const std::map<std::string, std::string>& renames) {
  for (OutputSpec& spec : p.signature.outputs)
    if (auto it = renames.find(spec.name); it != renames.end()) spec.name = it->second;
}

bool uses(const Node& n, std::size_t index) {
  bool found = false;
  auto check = [&](NodeId r) { found |= r == index; };
  for (const Arg& a : n.args) forEachRef(a, check);
  for (const auto& kv : n.kwargs) forEachRef(kv.second, check);
  return found;
}

std::size_t placeholderCount(const Program& p) {
  std::size_t k = 0;
  while (k < p.graph.nodes.size() && p.graph.nodes[k].isPlaceholder()) ++k;
  return k;
}

CompactVector<Arg>* outputItems(Program& p) {
  if (p.graph.nodes.empty() || !p.graph.nodes.back().isOutput()) return nullptr;
  Node& out = p.graph.nodes.back();
  if (out.args.empty() || !out.args[0].isSequence()) return nullptr;
  return &out.args[0].items;
}

std::size_t outputCount(const Program& p) { return p.signature.outputs.size(); }

// Removes node `index` (and its input spec for a placeholder). Its uses refer to the earlier
// node `redirect` instead (and the output specs naming it name that one); without one, a node
// still used is not removed (false): the candidate would not be a valid program.
bool eraseNode(Program& p, std::size_t index, std::optional<std::size_t> redirect = std::nullopt) {
  Graph& g = p.graph;
  if (!redirect)
    for (std::size_t u = index + 1; u < g.nodes.size(); ++u)
      if (uses(g.nodes[u], index)) return false;
  const Node& n = g.nodes[index];
  if (n.isPlaceholder()) {
    auto& ins = p.signature.inputs;
    ins.erase(std::remove_if(ins.begin(), ins.end(), [&](const InputSpec& s) { return s.name == n.name; }), ins.end());
  }
  if (redirect) renameOutputSpecs(p, {{n.name, g.nodes[*redirect].name}});
  std::vector<NodeId> oldToNew(g.nodes.size());
  for (std::size_t i = 0; i < oldToNew.size(); ++i) oldToNew[i] = static_cast<NodeId>(i < index ? i : i - 1);
  oldToNew[index] = redirect ? static_cast<NodeId>(*redirect) : kNoNode;
  g.nodes.erase(g.nodes.begin() + static_cast<std::ptrdiff_t>(index));
  renumberReferences(g, oldToNew);
  return true;
}

bool isBody(const Node& n) { return !n.isPlaceholder() && !n.isOutput(); }

// --- steps -------------------------------------------------------------------------------------

std::optional<Program> dropOutput(const Program& p, std::size_t i) {
  Program c = p;
  auto* items = outputItems(c);
  if (!items || i >= items->size() || i >= c.signature.outputs.size()) return std::nullopt;
  items->erase(items->begin() + static_cast<std::ptrdiff_t>(i));
  c.signature.outputs.erase(c.signature.outputs.begin() + static_cast<std::ptrdiff_t>(i));
  return c;
}

// Candidate i drops the last B, B/2, B/4, ..., 1 body nodes (B = body size).
std::optional<Program> truncateTail(const Program& p, std::size_t i) {
  const std::size_t body = bodyNodeCount(p);
  std::size_t drop = body;
  for (std::size_t k = 0; k < i && drop > 0; ++k) drop /= 2;
  if (drop == 0 || (i > 0 && drop == (body >> (i - 1)))) return std::nullopt;
  Program c = p;
  const std::size_t output = c.graph.nodes.size() - 1;
  std::size_t first = output;  // the removed nodes are [first, output)
  while (drop > 0 && first > 0 && isBody(c.graph.nodes[first - 1])) {
    --first;
    --drop;
  }
  if (first == output) return std::nullopt;
  auto* items = outputItems(c);
  if (!items) return std::nullopt;
  for (std::size_t k = items->size(); k-- > 0;) {
    const Arg& a = (*items)[k];
    if (a.isRef() && a.node >= first && a.node < output) {
      items->erase(items->begin() + static_cast<std::ptrdiff_t>(k));
      if (k < c.signature.outputs.size())
        c.signature.outputs.erase(c.signature.outputs.begin() + static_cast<std::ptrdiff_t>(k));
    }
  }
  // A removed node the output still uses (inside a list) leaves no valid program.
  for (std::size_t r = first; r < output; ++r)
    if (uses(c.graph.nodes[output], r)) return std::nullopt;
  std::vector<bool> erased(c.graph.nodes.size(), false);
  for (std::size_t r = first; r < output; ++r) erased[r] = true;
  eraseNodes(c.graph, erased);
  return c;
}

// Candidate i removes node i (counted from the end, so uses go before definitions).
std::optional<Program> removeNode(const Program& p, std::size_t i) {
  if (p.graph.nodes.size() < 2 || i + 1 >= p.graph.nodes.size()) return std::nullopt;
  const std::size_t index = p.graph.nodes.size() - 2 - i;
  Program c = p;
  if (!eraseNode(c, index)) return std::nullopt;
  return c;
}

// The (node, argument) pairs a bypass can use: call nodes whose type equals an argument's.
std::vector<std::pair<std::size_t, std::size_t>> bypassPairs(const Program& p) {
  std::vector<std::pair<std::size_t, std::size_t>> pairs;
  for (std::size_t i = 0; i < p.graph.nodes.size(); ++i) {
    const Node& n = p.graph.nodes[i];
    if (n.op != NodeOp::CallFunction || n.typeText.empty()) continue;
    std::set<NodeId> seen;
    for (const Arg& a : n.args)
      forEachRef(a, [&](NodeId r) {
        if (r < i && p.graph.nodes[r].typeText == n.typeText && seen.insert(r).second) pairs.emplace_back(i, r);
      });
  }
  return pairs;
}

std::optional<Program> bypass(const Program& p, std::size_t i) {
  auto pairs = bypassPairs(p);
  if (i >= pairs.size()) return std::nullopt;
  Program c = p;
  const auto [index, replacement] = pairs[i];
  eraseNode(c, index, replacement);
  return c;
}

std::vector<std::size_t> replaceableNodes(const Program& p) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < p.graph.nodes.size(); ++i) {
    const Node& n = p.graph.nodes[i];
    if (!isBody(n) || n.typeText.empty()) continue;
    if (auto t = n.tensorType(); t && t->isStatic()) out.push_back(i);
  }
  return out;
}

std::optional<Program> toInput(const Program& p, std::size_t i) {
  auto nodes = replaceableNodes(p);
  if (i >= nodes.size()) return std::nullopt;
  Program c = p;
  const std::size_t from = nodes[i];
  Node placeholder;
  placeholder.name = c.graph.nodes[from].name;
  placeholder.op = NodeOp::Placeholder;
  placeholder.target = placeholder.name;
  placeholder.typeText = c.graph.nodes[from].typeText;
  // The node moves to the end of the placeholders, the nodes between move one down.
  const std::size_t at = placeholderCount(c);
  std::vector<NodeId> oldToNew(c.graph.nodes.size());
  for (std::size_t k = 0; k < oldToNew.size(); ++k)
    oldToNew[k] = static_cast<NodeId>(k < at || k > from ? k : k == from ? at : k + 1);
  auto begin = c.graph.nodes.begin();
  std::rotate(begin + static_cast<std::ptrdiff_t>(at), begin + static_cast<std::ptrdiff_t>(from),
              begin + static_cast<std::ptrdiff_t>(from + 1));
  InputSpec spec;
  spec.kind = InputKind::UserInput;
  spec.name = placeholder.name;
  c.graph.nodes[at] = std::move(placeholder);
  renumberReferences(c.graph, oldToNew);
  c.signature.inputs.insert(c.signature.inputs.begin() + static_cast<std::ptrdiff_t>(std::min(at, c.signature.inputs.size())), spec);
  return c;
}

// A simpler op with the same signature (an acyclic map, so simplification terminates).
std::optional<std::string> simplerOp(const std::string& target) {
  static const std::map<std::string, std::string> kSimpler = {
      {"aten::sub.Tensor", "aten::add.Tensor"},  {"aten::mul.Tensor", "aten::add.Tensor"},
      {"aten::div.Tensor", "aten::add.Tensor"},  {"aten::sub_.Tensor", "aten::add_.Tensor"},
      {"aten::mul_.Tensor", "aten::add_.Tensor"}, {"aten::div_.Tensor", "aten::add_.Tensor"},
      {"aten::sigmoid", "aten::relu"},           {"aten::gelu", "aten::relu"},
      {"aten::silu", "aten::relu"},              {"aten::tanh", "aten::relu"},
      {"aten::rsqrt", "aten::relu"},             {"aten::clone", "aten::relu"},
      {"aten::_foreach_mul_.Scalar", "aten::_foreach_add_.Scalar"},
      {"aten::sub.Scalar", "aten::mul.Scalar"},  {"aten::div.Scalar", "aten::mul.Scalar"},
      {"dim_order_ops::_clone_dim_order", "aten::relu"},
  };
  auto it = kSimpler.find(target);
  if (it == kSimpler.end() || it->second == target) return std::nullopt;
  return it->second;
}

std::optional<Program> simplifyOp(const Program& p, std::size_t i) {
  std::size_t k = 0;
  for (std::size_t n = 0; n < p.graph.nodes.size(); ++n) {
    const auto simpler = simplerOp(p.graph.nodes[n].target);
    if (!simpler || k++ != i) continue;
    Program c = p;
    Node& node = c.graph.nodes[n];
    node.target = *simpler;
    if (*simpler == "aten::relu") {  // unary: keep self only
      node.args.resize(std::min<std::size_t>(node.args.size(), 1));
      node.kwargs.clear();
    }
    return c;
  }
  return std::nullopt;
}

std::optional<Program> dropMeta(const Program& p, std::size_t i) {
  std::size_t k = 0;
  for (std::size_t n = 0; n < p.graph.nodes.size(); ++n) {
    if (p.graph.nodes[n].meta.empty() || k++ != i) continue;
    Program c = p;
    c.graph.nodes[n].meta.clear();
    return c;
  }
  return std::nullopt;
}

// The integer arguments (top level and one list level deep) that are not yet 0.
struct IntSite {
  std::size_t node, arg;
  std::optional<std::size_t> item;
};
std::vector<IntSite> intSites(const Program& p) {
  std::vector<IntSite> sites;
  for (std::size_t n = 0; n < p.graph.nodes.size(); ++n) {
    const Node& node = p.graph.nodes[n];
    if (node.op != NodeOp::CallFunction || node.target == "operator.getitem") continue;
    for (std::size_t a = 0; a < node.args.size(); ++a) {
      const Arg& arg = node.args[a];
      if (arg.kind == Arg::Kind::Int && arg.integer != 0) sites.push_back({n, a, std::nullopt});
      if (arg.isSequence())
        for (std::size_t j = 0; j < arg.items.size(); ++j)
          if (arg.items[j].kind == Arg::Kind::Int && arg.items[j].integer != 0) sites.push_back({n, a, j});
    }
  }
  return sites;
}

// Candidate 2k sets site k to 0; candidate 2k+1 halves it.
std::optional<Program> shrinkConstant(const Program& p, std::size_t i) {
  auto sites = intSites(p);
  if (i / 2 >= sites.size()) return std::nullopt;
  const IntSite s = sites[i / 2];
  Program c = p;
  Arg& arg = c.graph.nodes[s.node].args[s.arg];
  Arg& target = s.item ? arg.items[*s.item] : arg;
  if (i % 2 == 0) {
    target.integer = 0;
  } else {
    if (target.integer / 2 == 0) return std::nullopt;
    target.integer /= 2;
  }
  return c;
}

// Canonical short names: buffers b_<fqn>, parameters p_<fqn>, the rest FX names of targets.
std::optional<Program> renameAll(const Program& p, std::size_t i) {
  if (i > 0) return std::nullopt;
  const SchemaTable noSchemas;
  ProgramBuilder names(noSchemas);
  std::map<std::string, std::string> renames;
  auto flat = [](std::string s) {
    for (char& ch : s)
      if (ch == '.') ch = '_';
    return s;
  };
  for (const Node& n : p.graph.nodes) {
    if (n.isOutput()) continue;
    std::string base;
    if (n.isPlaceholder()) {
      const InputSpec* spec = p.signature.inputForPlaceholder(n.name);
      if (spec && spec->kind == InputKind::Buffer) base = "b_" + flat(spec->target);
      else if (spec && spec->kind == InputKind::Parameter) base = "p_" + flat(spec->target);
      else if (spec && spec->kind == InputKind::UserInput) base = "x";
      else base = n.name;
    } else if (n.op == NodeOp::GetAttr) {
      base = n.name;
    } else {
      base = baseNameOfTarget(n.target);
    }
    renames[n.name] = names.freshName(base);
  }
  bool changed = false;
  for (const auto& [from, to] : renames) changed = changed || from != to;
  if (!changed) return std::nullopt;
  Program c = p;
  for (Node& n : c.graph.nodes) {
    if (n.isOutput()) continue;
    const std::string& to = renames.at(n.name);
    if (n.isPlaceholder() || n.op == NodeOp::GetAttr) n.target = to;
    n.name = to;
  }
  renameOutputSpecs(c, renames);
  for (InputSpec& in : c.signature.inputs)
    if (auto it = renames.find(in.name); it != renames.end()) in.name = it->second;
  for (OutputSpec& out : c.signature.outputs)
    if (out.kind == OutputKind::UserInputMutation)
      if (auto it = renames.find(out.target); it != renames.end()) out.target = it->second;
  return c;
}

struct Step {
  const char* name;
  std::optional<Program> (*make)(const Program&, std::size_t);
  std::size_t (*count)(const Program&);
};

std::size_t nodeCount(const Program& p) { return p.graph.nodes.size(); }
std::size_t tailCount(const Program& p) { return 2 + 2 * static_cast<std::size_t>(std::bit_width(p.graph.nodes.size())); }
std::size_t bypassCount(const Program& p) { return bypassPairs(p).size(); }
std::size_t replaceableCount(const Program& p) { return replaceableNodes(p).size(); }
std::size_t siteCount(const Program& p) { return 2 * intSites(p).size(); }
std::size_t one(const Program&) { return 1; }

const std::array<Step, kReductionSteps>& steps() {
  static constexpr std::array<Step, kReductionSteps> kSteps = {{
      {"drop-output", dropOutput, outputCount},  {"truncate-tail", truncateTail, tailCount},
      {"remove-node", removeNode, nodeCount},    {"bypass", bypass, bypassCount},
      {"to-input", toInput, replaceableCount},   {"simplify-op", simplifyOp, nodeCount},
      {"drop-meta", dropMeta, nodeCount},        {"shrink-constant", shrinkConstant, siteCount},
      {"rename", renameAll, one},
  }};
  return kSteps;
}

}  // namespace

ReduceResult reduce(const Program& program, const Interestingness& interesting, const ReduceOptions& options) {
  ReduceResult result;
  result.program = program;
  ++result.tests;
  if (!validate(program).empty() || !interesting(program)) return result;
  bool progress = true;
  while (progress) {
    progress = false;
    for (const Step& step : steps()) {
      for (std::size_t i = 0; i < step.count(result.program); ++i) {
        std::optional<Program> candidate = step.make(result.program, i);
        if (!candidate || *candidate == result.program || !validate(*candidate).empty()) continue;
        if (result.tests >= options.maxTests) return result;
        ++result.tests;
        if (!interesting(*candidate)) continue;
        result.program = std::move(*candidate);
        ++result.accepted;
        result.log.push_back(std::string(step.name) + " " + std::to_string(i));
        progress = true;
        --i;  // the family shifted: try the same index again (unsigned wrap is undone by ++i)
      }
    }
  }
  result.fixpoint = true;
  return result;
}

std::vector<Program> reductionCandidates(const Program& program) {
  std::vector<Program> out;
  for (const Step& step : steps())
    for (std::size_t i = 0; i < step.count(program); ++i)
      if (auto c = step.make(program, i); c && !(*c == program) && validate(*c).empty()) out.push_back(std::move(*c));
  return out;
}

std::size_t reductionCandidateCount(const Program& program, std::size_t step) {
  return step < kReductionSteps ? steps()[step].count(program) : 0;
}

std::optional<Program> reductionCandidate(const Program& program, std::size_t step, std::size_t i) {
  // Every step's make() answers nullopt past its family, so the count is not worked out again.
  if (step >= kReductionSteps) return std::nullopt;
  return steps()[step].make(program, i);
}

}  // namespace wb::gen
