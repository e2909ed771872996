// fuzz/mutator.cpp: graph edits for text_program_fuzzer's custom mutator (fuzz/mutator.h).
//
// Every edit works on the Program, never on the text, and keeps types consistent by matching
// annotations exactly (the same "f32[2, 3]" string): an edit never needs shape inference, and
// validate() afterwards rejects whatever structural rule an edit might still break.
#include "fuzz/mutator.h"

#include <algorithm>
#include <cstddef>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/placement.h"
#include "core/text.h"
#include "core/validate.h"
#include "fuzz/fuzz_checks.h"
#include "gen/choices.h"
#include "gen/reduce.h"

namespace wb::fuzz {

namespace {

using gen::RandomChoices;

// Index of the first non-placeholder node (where body nodes may be inserted from).
std::size_t bodyStart(const Graph& g) {
  std::size_t i = 0;
  while (i < g.nodes.size() && g.nodes[i].isPlaceholder()) ++i;
  return i;
}

// Nodes before `limit` that produce a tensor of type `type` (by annotation).
std::vector<std::size_t> valuesOfType(const Graph& g, std::size_t limit, const std::string& type) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < limit && i < g.nodes.size(); ++i)
    if (!g.nodes[i].isOutput() && !g.nodes[i].typeText.empty() && g.nodes[i].typeText == type &&
        g.nodes[i].tensorType())
      out.push_back(i);
  return out;
}

// Tensor-typed values (any type) before `limit`.
std::vector<std::size_t> tensorValues(const Graph& g, std::size_t limit) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < limit && i < g.nodes.size(); ++i)
    if (!g.nodes[i].isOutput() && g.nodes[i].tensorType()) out.push_back(i);
  return out;
}

std::string freshName(const Graph& g, const std::string& base) {
  for (int k = 0;; ++k) {
    std::string name = k == 0 ? base : base + "_" + std::to_string(k);
    if (g.find(name) == nullptr && name != "output") return name;
  }
}

// A position in [first, end] (end: just before the output node).
std::size_t insertionPoint(std::size_t first, std::size_t end, RandomChoices& ch) {
  return static_cast<std::size_t>(ch.pick(static_cast<std::int64_t>(std::min(first, end)), static_cast<std::int64_t>(end)));
}

Node callNode(std::string name, std::string target, std::vector<Arg> args, std::string type) {
  return Node::call(std::move(name), std::move(target), std::move(args), {}, std::move(type));
}

// The number of values the output node returns (its flat tuple's, or 0 or 1 without one).
std::size_t returnedCount(const Program& p) {
  const Node& out = p.graph.nodes.back();
  if (out.args.empty()) return 0;
  return out.args[0].isSequence() ? out.args[0].items.size() : 1;
}

// The output node's flat tuple, made explicit so it can be edited.
CompactVector<Arg>& outputTuple(Program& p) {
  Node& out = p.graph.nodes.back();
  if (out.args.empty() || !out.args[0].isSequence()) {
    std::vector<Arg> items;
    if (!out.args.empty()) items.push_back(out.args[0]);
    out.args = {Arg::tuple(std::move(items))};
  }
  return out.args[0].items;
}

bool addNode(Program& p, RandomChoices& ch) {
  Graph& g = p.graph;
  const std::size_t end = g.nodes.size() - 1;  // the output node
  std::vector<std::size_t> values = tensorValues(g, end);
  if (values.empty()) return false;
  const std::size_t ia = ch.element(values);
  const Node& a = g.nodes[ia];
  std::vector<std::size_t> same = valuesOfType(g, end, a.typeText);
  const std::size_t ib = ch.element(same);
  const std::size_t first = std::max({ia + 1, ib + 1, bodyStart(g)});
  const Arg refA = Arg::ref(static_cast<NodeId>(ia)), refB = Arg::ref(static_cast<NodeId>(ib));
  static constexpr const char* kUnary[] = {"aten::neg", "aten::relu", "aten::clone"};
  static constexpr const char* kBinary[] = {"aten::add.Tensor", "aten::mul.Tensor"};
  Node n;
  if (ch.flip(0.5)) {
    const std::string target = kBinary[ch.pick(0, 1)];
    n = callNode(freshName(g, target == "aten::add.Tensor" ? "add" : "mul"), target, {refA, refB},
                 a.typeText);
  } else {
    const std::string target = kUnary[ch.pick(0, 2)];
    n = callNode(freshName(g, target.substr(6)), target, {refA}, a.typeText);
  }
  const std::size_t at = insertionPoint(first, end, ch);
  insertNode(g, at, std::move(n));
  // Sometimes return it, so the new value is observed.
  if (ch.flip(0.5)) {
    outputTuple(p).push_back(Arg::ref(static_cast<NodeId>(at)));
    p.signature.outputs.push_back({OutputKind::UserOutput, g.nodes[at].name, ""});
  }
  return true;
}

// Every reference inside a node's arguments, as pointers to edit in place.
void collectRefs(std::span<Arg> args, std::vector<Arg*>& out) {
  for (Arg& a : args) {
    if (a.isRef()) out.push_back(&a);
    else if (a.isSequence()) collectRefs(a.items, out);
  }
}

bool retarget(Program& p, RandomChoices& ch) {
  Graph& g = p.graph;
  std::vector<std::size_t> calls;
  for (std::size_t i = 0; i < g.nodes.size(); ++i)
    if (g.nodes[i].op == NodeOp::CallFunction) calls.push_back(i);
  if (calls.empty()) return false;
  const std::size_t i = ch.element(calls);
  std::vector<Arg*> refs;
  collectRefs(g.nodes[i].args, refs);
  if (refs.empty()) return false;
  Arg* ref = refs[ch.index(refs.size())];
  if (ref->node >= g.nodes.size()) return false;
  const Node* old = &g.nodes[ref->node];
  if (old->typeText.empty()) return false;
  std::vector<std::size_t> same = valuesOfType(g, i, old->typeText);
  if (same.size() < 2) return false;
  ref->node = static_cast<NodeId>(ch.element(same));
  return true;
}

bool toggleInplace(Program& p, const SchemaTable& schemas, RandomChoices& ch) {
  Graph& g = p.graph;
  std::vector<std::pair<std::size_t, std::string>> candidates;
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (n.op != NodeOp::CallFunction || n.target.rfind("aten::", 0) != 0) continue;
    const std::string rest = n.target.substr(6);
    const std::size_t dot = rest.find('.');
    const std::string base = rest.substr(0, dot), overload = dot == std::string::npos ? "" : rest.substr(dot);
    const std::string other =
        "aten::" + (base.size() > 1 && base.back() == '_' ? base.substr(0, base.size() - 1) : base + "_") + overload;
    if (schemas.find(other) != nullptr) candidates.emplace_back(i, other);
  }
  if (candidates.empty()) return false;
  const auto& [i, other] = candidates[ch.index(candidates.size())];
  g.nodes[i].target = other;
  return true;
}

bool addView(Program& p, RandomChoices& ch) {
  Graph& g = p.graph;
  const std::size_t end = g.nodes.size() - 1;
  std::vector<std::size_t> values = tensorValues(g, end);
  if (values.empty()) return false;
  const std::size_t baseIndex = ch.element(values);
  const Node& base = g.nodes[baseIndex];
  const Arg baseRef = Arg::ref(static_cast<NodeId>(baseIndex));
  const TensorType type = *base.tensorType();
  std::vector<Arg> shape;  // used only when every dimension is static
  for (const Dim& d : type.shape) shape.push_back(Arg::ofInt(d.size));
  const bool staticShape = type.isStatic();
  Node n;
  switch (ch.pick(0, staticShape ? 4 : 2)) {
    case 0: n = callNode(freshName(g, "alias"), "aten::alias", {baseRef}, base.typeText); break;
    case 1: n = callNode(freshName(g, "alias_copy"), "aten::alias_copy", {baseRef}, base.typeText); break;
    case 2: n = callNode(freshName(g, "detach"), "aten::detach", {baseRef}, base.typeText); break;
    case 3: n = callNode(freshName(g, "view"), "aten::view", {baseRef, Arg::list(shape)}, base.typeText); break;
    default:
      n = callNode(freshName(g, "view_copy"), "aten::view_copy", {baseRef, Arg::list(shape)}, base.typeText);
  }
  const std::size_t at = insertionPoint(std::max(baseIndex + 1, bodyStart(g)), end, ch);
  insertNode(g, at, std::move(n));
  return true;
}

bool dropOutput(Program& p, RandomChoices& ch) {
  if (returnedCount(p) == 0 || returnedCount(p) != p.signature.outputs.size()) return false;
  CompactVector<Arg>& items = outputTuple(p);
  const std::size_t k = ch.index(items.size());
  items.erase(items.begin() + static_cast<std::ptrdiff_t>(k));
  p.signature.outputs.erase(p.signature.outputs.begin() + static_cast<std::ptrdiff_t>(k));
  return true;
}

bool addWriteBack(Program& p, RandomChoices& ch) {
  Graph& g = p.graph;
  // Targets without a mutation spec yet: buffers (by FQN) and user inputs (by name).
  std::vector<const InputSpec*> targets;
  for (const InputSpec& in : p.signature.inputs) {
    if (in.kind != InputKind::Buffer && in.kind != InputKind::UserInput) continue;
    const std::string key = in.kind == InputKind::Buffer ? in.target : in.name;
    const OutputKind kind = in.kind == InputKind::Buffer ? OutputKind::BufferMutation : OutputKind::UserInputMutation;
    bool taken = false;
    for (const OutputSpec& out : p.signature.outputs) taken = taken || (out.kind == kind && out.target == key);
    if (!taken) targets.push_back(&in);
  }
  if (targets.empty()) return false;
  const InputSpec& target = *targets[ch.index(targets.size())];
  const Node* placeholder = g.find(target.name);
  if (placeholder == nullptr || placeholder->typeText.empty()) return false;
  std::vector<std::size_t> same = valuesOfType(g, g.nodes.size() - 1, placeholder->typeText);
  if (same.empty()) return false;
  const std::size_t valueIndex = ch.element(same);
  const std::string value = g.nodes[valueIndex].name;
  if (returnedCount(p) != p.signature.outputs.size()) return false;
  CompactVector<Arg>& items = outputTuple(p);
  // Mutation outputs come first in what export prints; anywhere is valid.
  const std::size_t at = ch.index(items.size() + 1);
  items.insert(items.begin() + static_cast<std::ptrdiff_t>(at), Arg::ref(static_cast<NodeId>(valueIndex)));
  const bool buffer = target.kind == InputKind::Buffer;
  p.signature.outputs.insert(p.signature.outputs.begin() + static_cast<std::ptrdiff_t>(at),
                             {buffer ? OutputKind::BufferMutation : OutputKind::UserInputMutation, value,
                              buffer ? target.target : target.name});
  return true;
}

bool shareAlloc(Program& p, RandomChoices& ch) {
  Graph& g = p.graph;
  std::vector<std::size_t> candidates;
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (n.op != NodeOp::CallFunction || n.args.empty() || !n.args[0].isRef() || n.typeText.empty()) continue;
    const Node* first = n.args[0].node < g.nodes.size() ? &g.nodes[n.args[0].node] : nullptr;
    if (first != nullptr && first->typeText == n.typeText && !n.meta.count("_share_alloc_with_arg_idx"))
      candidates.push_back(i);
  }
  if (candidates.empty()) return false;
  g.nodes[ch.element(candidates)].meta["_share_alloc_with_arg_idx"] = "0";
  return true;
}

// One of the reducer's steps (gen/reduce.h: drop an output, truncate the tail, remove a node,
// bypass a node, turn a node into an input, simplify an op, drop meta, shrink a constant,
// rename), on a candidate chosen at random. The edits above only add nodes and outputs; without
// these, every program libFuzzer keeps would lead to larger ones, and its corpus would drift to
// programs as large as -max_len allows, each slower to check and none finding more (every known
// bug class shrinks to at most 6 body nodes).
bool reduceOne(Program& p, RandomChoices& ch) {
  const std::size_t step = ch.index(gen::kReductionSteps);
  const std::size_t count = gen::reductionCandidateCount(p, step);
  if (count == 0) return false;
  std::optional<Program> reduced = gen::reductionCandidate(p, step, ch.index(count));
  if (!reduced || *reduced == p) return false;
  p = std::move(*reduced);
  return true;
}

// An edit that returns false has left the program as it was (mutateProgram relies on it).
bool applyOne(Program& p, const SchemaTable& schemas, RandomChoices& ch) {
  // Past the bound only the reducer's steps apply, so a larger seed's mutants come down to it.
  if (bodyNodeCount(p) > kMutatorMaxBodyNodes) return reduceOne(p, ch);
  switch (ch.pick(0, 7)) {
    case 0: return addNode(p, ch);
    case 1: return retarget(p, ch);
    case 2: return toggleInplace(p, schemas, ch);
    case 3: return addView(p, ch);
    case 4: return dropOutput(p, ch);
    case 5: return addWriteBack(p, ch);
    case 6: return shareAlloc(p, ch);
    default: return reduceOne(p, ch);
  }
}

}  // namespace

std::optional<Program> mutateProgram(const Program& program, const SchemaTable& schemas, std::uint32_t seed) {
  if (program.graph.nodes.empty() || !program.graph.nodes.back().isOutput()) return std::nullopt;
  RandomChoices ch(seed);
  const int edits = static_cast<int>(ch.pick(1, 3));
  // Some edits do not apply to a given program (they return false and leave it unchanged), or
  // break a rule (e.g. an in-place op on a placeholder that is also returned). Most sequences
  // of edits that apply give a valid program: apply them all and validate once (validate() is
  // most of an edit's cost).
  Program next = program;
  int applied = 0;
  for (int attempt = 0; attempt < 12 && applied < edits; ++attempt)
    if (applyOne(next, schemas, ch)) ++applied;
  if (applied == 0) return std::nullopt;
  if (validate(next).empty()) return next;
  // Some edit broke a rule: again from the input, validating after each edit and keeping the
  // valid ones. `next` is restored from the last valid state only after an edit that applied
  // and broke a rule (a program's copy is the rest of an edit's cost).
  std::optional<Program> kept;  // the program after the edits kept so far, once there is one
  next = program;
  applied = 0;
  for (int attempt = 0; attempt < 12 && applied < edits; ++attempt) {
    if (!applyOne(next, schemas, ch)) continue;
    if (!validate(next).empty()) {
      next = kept ? *kept : program;
      continue;
    }
    if (++applied == edits) return next;
    kept = next;
  }
  return kept;
}

std::string mutateText(std::string_view text, std::uint32_t seed, MutationMemo& memo) {
  std::optional<Program> program;
  if (memo.program && text == memo.text) program = std::move(memo.program);
  else program = validProgramFromText(text);
  std::optional<Program> mutated;
  if (program) mutated = mutateProgram(*program, schemasFor(*program, context().builtins), seed);
  if (!mutated) {
    // Not a valid program (or no edit applied): start again from a generated one.
    RandomChoices choices(seed);
    mutated = context().generator.generate(choices).program;
  }
  memo.text = writeProgram(*mutated);
  memo.program = std::move(mutated);
  return memo.text;
}

std::string mutateText(std::string_view text, std::uint32_t seed) {
  MutationMemo memo;
  return mutateText(text, seed, memo);
}

}  // namespace wb::fuzz
