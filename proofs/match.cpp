// proofs/match.cpp: pairing BEFORE and AFTER by signature and structure (see match.h).
#include "proofs/match.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>
#include <utility>

#include "core/placement.h"
#include "core/rewrite.h"
#include "core/text.h"
#include "core/validate.h"
#include "proofs/op_model.h"
#include "proofs/symbolic_internal.h"

namespace wb::proofs {

namespace {

Diagnostic error(std::string_view file, std::string message) {
  Diagnostic d;
  d.file = std::string(file);
  d.message = std::move(message);
  return d;
}

// An input's identity: its kind and target, or its position among inputs of its kind that
// have no target (user inputs, tokens, custom objects).
std::vector<std::string> inputKeys(const Program& p) {
  std::vector<std::string> keys;
  std::map<InputKind, std::size_t> ordinal;
  for (const Node& n : p.graph.nodes) {
    if (!n.isPlaceholder()) continue;
    const InputSpec* spec = p.signature.inputForPlaceholder(n.name);
    if (!spec) {
      keys.push_back("input:?" + std::to_string(ordinal[InputKind::Token]++));
      continue;
    }
    std::string key = "input:" + std::string(toString(spec->kind)) + ":";
    if (spec->kind == InputKind::UserInput || spec->kind == InputKind::Token || spec->kind == InputKind::CustomObj || spec->target.empty())
      key += "#" + std::to_string(ordinal[spec->kind]++);
    else
      key += spec->target;
    keys.push_back(std::move(key));
  }
  return keys;
}

// The structure of a literal argument, and of references by the keys of their nodes.
void describe(const Arg& a, const std::vector<std::string>& keys, const Graph& graph, std::string& out) {
  if (a.isRef()) {
    out += "%" + keys[a.node];
  } else if (a.isSequence()) {
    out += a.kind == Arg::Kind::List ? "[" : "(";
    for (const Arg& item : a.items) {
      describe(item, keys, graph, out);
      out += ",";
    }
    out += a.kind == Arg::Kind::List ? "]" : ")";
  } else {
    out += formatArg(a, graph);
  }
}

}  // namespace

NodeKeys KeyTable::keysOf(const Program& program) {
  const Graph& g = program.graph;
  const std::vector<std::string> inputs = inputKeys(program);
  NodeKeys out;
  out.nodes.resize(g.nodes.size());
  std::unordered_map<std::size_t, std::size_t> seen;  // structure id -> occurrences so far
  std::size_t placeholder = 0;
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    std::string text;
    switch (n.op) {
      case NodeOp::Placeholder: text = inputs[placeholder++]; break;
      case NodeOp::GetAttr: text = "attr:" + std::string(n.target); break;
      case NodeOp::Output: text = "output"; break;
      case NodeOp::CallFunction:
      case NodeOp::CallModule: {
        text = std::string(toString(n.op)) + ":" + std::string(n.target) + "(";
        for (const Arg& a : n.args) {
          describe(a, out.nodes, g, text);
          text += ",";
        }
        for (const auto& [name, a] : n.kwargs) {
          text += name + "=";
          describe(a, out.nodes, g, text);
          text += ",";
        }
        text += ")";
        if (const std::optional<int> k = n.shareAllocArgIndex()) text += "share" + std::to_string(*k);
        break;
      }
    }
    auto [it, inserted] = ids_.emplace(std::move(text), ids_.size());
    const std::size_t occurrence = seen[it->second]++;
    out.nodes[i] = "n" + std::to_string(it->second) + (occurrence ? "." + std::to_string(occurrence) : "");
  }
  return out;
}

namespace {

// AFTER as printed, when the reader lifted its trailing copies into mutation outputs because
// the text had no signature (see match.h): the copies back at the end, in their order, and
// BEFORE's input specs for its placeholders.
std::optional<Diagnostic> restorePrintedCopies(Program& after, const Program& before, std::string_view afterName,
                                               std::vector<std::string>& notes) {
  std::vector<std::size_t> placeholders;
  for (std::size_t i = 0; i < after.graph.nodes.size(); ++i)
    if (after.graph.nodes[i].isPlaceholder()) placeholders.push_back(i);
  if (placeholders.size() != before.signature.inputs.size())
    return error(afterName, "AFTER has no signature and " + std::to_string(placeholders.size()) +
                                " placeholders, BEFORE's signature has " + std::to_string(before.signature.inputs.size()) +
                                " inputs: the inputs cannot be paired; write AFTER's signature in");
  // The lifted mutation outputs: their values and the placeholders they wrote.
  struct Lifted {
    std::size_t position;
    NodeId placeholder;
  };
  std::vector<Lifted> lifted;
  for (std::size_t p = 0; p < after.signature.outputs.size(); ++p) {
    const OutputSpec& spec = after.signature.outputs[p];
    if (!isMutation(spec.kind)) continue;
    const InputSpec* in = after.signature.mutatedInput(spec);
    if (!in) return error(afterName, "AFTER's inferred mutation output " + spec.name + " has no target");
    const std::optional<std::size_t> placeholder = after.graph.indexOf(in->name);
    if (!placeholder || !after.graph.nodes[*placeholder].isPlaceholder())
      return error(afterName, "AFTER's inferred mutation output " + spec.name + " writes " + in->name + ", no placeholder");
    lifted.push_back({p, static_cast<NodeId>(*placeholder)});
  }
  // BEFORE's input specs, with AFTER's placeholder names.
  std::vector<InputSpec> inputs;
  for (std::size_t k = 0; k < placeholders.size(); ++k) {
    InputSpec spec = before.signature.inputs[k];
    spec.name = after.graph.nodes[placeholders[k]].name;
    inputs.push_back(std::move(spec));
  }
  after.signature.inputs = inputs;
  Node output = std::move(after.graph.nodes.back());
  after.graph.nodes.pop_back();
  std::vector<Arg> returned = output.args.empty() ? std::vector<Arg>{}
                              : output.args[0].isSequence() ? std::vector<Arg>(output.args[0].items.begin(), output.args[0].items.end())
                                                            : std::vector<Arg>{output.args[0]};
  for (const Lifted& l : lifted) {
    const std::string name = freshName(after.graph, "copy__default");
    const Node& target = after.graph.nodes[l.placeholder];
    const std::string placeholderName = target.name;
    const NodeId copy = static_cast<NodeId>(after.graph.nodes.size());  // the output node is popped
    after.graph.nodes.push_back(Node::call(name, SharedString("aten::copy_"), {Arg::ref(l.placeholder), returned[l.position]}, {},
                                           target.typeText));
    returned[l.position] = Arg::ref(copy);
    OutputSpec& spec = after.signature.outputs[l.position];
    spec.name = name;
    const InputSpec* in = after.signature.inputForPlaceholder(placeholderName);
    if (in && in->kind == InputKind::Buffer) {
      spec.kind = OutputKind::BufferMutation;
      spec.target = in->target;
    } else if (in && in->kind == InputKind::UserInput) {
      spec.kind = OutputKind::UserInputMutation;
      spec.target = in->name;
    } else {
      return error(afterName, "AFTER's copy into %" + placeholderName + " writes an input that BEFORE's signature says is " +
                                  (in ? std::string(toString(in->kind)) : std::string("unknown")) + ", not a buffer or user input");
    }
  }
  output.args = {Arg::tuple(std::move(returned))};
  after.graph.nodes.push_back(std::move(output));
  after.signatureInferred = false;
  notes.push_back("AFTER has no signature: its inputs are taken to be BEFORE's, placeholder by placeholder, and its " +
                  std::to_string(lifted.size()) + " trailing copy_ node(s) are its write-backs, run as printed");
  return std::nullopt;
}

// Every name in `p` replaced by rename(name) (references are node indices: only the nodes'
// names, a placeholder's target that is its name, and the signature's names change).
void renameAll(Program& p, const std::map<std::string, std::string>& rename) {
  auto renamed = [&](const std::string& name) {
    auto it = rename.find(name);
    return it == rename.end() ? name : it->second;
  };
  for (Node& n : p.graph.nodes) {
    const bool self = n.isPlaceholder() && n.target == n.name;
    n.name = renamed(n.name);
    if (self) n.target = SharedString(n.name);
  }
  for (InputSpec& in : p.signature.inputs) in.name = renamed(in.name);
  for (OutputSpec& out : p.signature.outputs) {
    out.name = renamed(out.name);
    if (out.kind == OutputKind::UserInputMutation) out.target = renamed(out.target);
  }
}

}  // namespace

Result<PreparedPair> prepare(const Program& before, const Program& after, std::string_view beforeName,
                             std::string_view afterName) {
  PreparedPair pair;
  pair.before = before;
  pair.after = after;
  for (const auto& [program, name] : {std::pair{&pair.before, beforeName}, std::pair{&pair.after, afterName}})
    if (std::vector<Diagnostic> errors = validate(*program); !errors.empty()) {
      for (Diagnostic& d : errors)
        if (d.file.empty() || d.file == "<string>") d.file = std::string(name);
      return Result<PreparedPair>::failure(errors);
    }
  if (pair.after.signatureInferred)
    if (std::optional<Diagnostic> e = restorePrintedCopies(pair.after, pair.before, afterName, pair.notes))
      return Result<PreparedPair>::failure(*e);

  auto mutations = [](const Program& p) {
    std::size_t n = 0;
    for (const OutputSpec& s : p.signature.outputs) n += isMutation(s.kind);
    return n;
  };
  std::size_t afterCopies = 0;
  for (const Node& n : pair.after.graph.nodes) afterCopies += n.op == NodeOp::CallFunction && n.target == "aten::copy_";
  if (mutations(pair.before) == 0 && (mutations(pair.after) > 0 || afterCopies > 0) && pair.before.signatureInferred)
    return Result<PreparedPair>::failure(
        error(beforeName, "BEFORE has no mutation outputs: it was printed without a signature, so its outputs were read as "
                          "user outputs, while AFTER writes buffers back; write BEFORE's graph signature in (see "
                          "corpus/validate/04-et-mutable-buffers-before-writeback-signature.txt)"));

  // Inputs, by identity.
  const std::vector<std::string> beforeInputs = inputKeys(pair.before), afterInputs = inputKeys(pair.after);
  {
    std::multiset<std::string> a(beforeInputs.begin(), beforeInputs.end()), b(afterInputs.begin(), afterInputs.end());
    if (a != b) {
      std::string missing, extra;
      for (const std::string& k : a)
        if (!b.count(k)) missing += " " + k.substr(6);
      for (const std::string& k : b)
        if (!a.count(k)) extra += " " + k.substr(6);
      return Result<PreparedPair>::failure(error(
          afterName, "the inputs differ: BEFORE has " + std::to_string(a.size()) + ", AFTER " + std::to_string(b.size()) +
                         (missing.empty() ? "" : "; only in BEFORE:" + missing) + (extra.empty() ? "" : "; only in AFTER:" + extra)));
    }
    if (a.size() != beforeInputs.size() || std::set<std::string>(a.begin(), a.end()).size() != a.size())
      return Result<PreparedPair>::failure(error(beforeName, "two inputs have the same signature (kind and target)"));
  }
  if (detail::visibleOutputPositions(pair.before).size() != detail::visibleOutputPositions(pair.after).size())
    return Result<PreparedPair>::failure(error(
        afterName, "the programs return different numbers of visible outputs (outputs that are not buffer mutations): BEFORE " +
                       std::to_string(detail::visibleOutputPositions(pair.before).size()) + ", AFTER " +
                       std::to_string(detail::visibleOutputPositions(pair.after).size())));

  // Structural keys; AFTER renamed to BEFORE's names where matched.
  KeyTable table;
  const NodeKeys beforeKeys = table.keysOf(pair.before);
  const NodeKeys afterKeys = table.keysOf(pair.after);
  std::map<std::string, std::size_t> beforeByKey;
  std::set<std::string> beforeNames;
  for (std::size_t i = 0; i < beforeKeys.nodes.size(); ++i) {
    beforeByKey.emplace(beforeKeys.nodes[i], i);
    beforeNames.insert(pair.before.graph.nodes[i].name);
  }
  std::map<std::string, std::string> rename;
  std::set<std::string> used;
  for (std::size_t i = 0; i < afterKeys.nodes.size(); ++i) {
    const Node& n = pair.after.graph.nodes[i];
    if (n.isOutput()) continue;
    if (auto it = beforeByKey.find(afterKeys.nodes[i]); it != beforeByKey.end()) {
      const Node& b = pair.before.graph.nodes[it->second];
      if (n.isPlaceholder()) {
        const std::optional<std::vector<std::int64_t>> x = detail::staticShape(b.typeText), y = detail::staticShape(n.typeText);
        if (x && y && *x != *y)
          return Result<PreparedPair>::failure(error(afterName, "input %" + n.name + " is " + n.typeText + " in AFTER but %" +
                                                                    b.name + " is " + b.typeText + " in BEFORE"));
      }
      rename[n.name] = b.name;
      used.insert(b.name);
      ++pair.matchedNodes;
    } else if (n.op == NodeOp::CallFunction || n.op == NodeOp::CallModule) {
      pair.unmatched.push_back(n.name);
    }
  }
  for (const Node& n : pair.after.graph.nodes) {
    if (n.isOutput() || rename.count(n.name)) continue;
    std::string name = n.name;
    for (std::size_t k = 1; beforeNames.count(name) || used.count(name); ++k) name = n.name + "_after" + (k > 1 ? std::to_string(k) : "");
    rename[n.name] = name;
    used.insert(name);
  }
  renameAll(pair.after, rename);
  for (std::string& name : pair.unmatched) name = rename[name];
  // AFTER's placeholders (and their input specs) in BEFORE's order.
  {
    std::map<std::string, std::size_t> order;
    for (std::size_t i = 0, k = 0; i < pair.before.graph.nodes.size(); ++i)
      if (pair.before.graph.nodes[i].isPlaceholder()) order[beforeKeys.nodes[i]] = k++;
    std::vector<std::pair<std::size_t, std::size_t>> at;  // (order, node index)
    for (std::size_t i = 0; i < pair.after.graph.nodes.size(); ++i)
      if (pair.after.graph.nodes[i].isPlaceholder()) at.emplace_back(order.at(afterKeys.nodes[i]), i);
    // Placeholders come first in a valid program: the first at.size() nodes are permuted, and
    // every reference follows its node.
    std::vector<Node> placeholders(at.size());
    std::vector<NodeId> oldToNew(pair.after.graph.nodes.size());
    for (std::size_t i = 0; i < oldToNew.size(); ++i) oldToNew[i] = static_cast<NodeId>(i);
    for (const auto& [k, i] : at) {
      placeholders[k] = pair.after.graph.nodes[i];
      oldToNew[i] = static_cast<NodeId>(k);
    }
    for (std::size_t k = 0; k < at.size(); ++k) pair.after.graph.nodes[k] = std::move(placeholders[k]);
    renumberReferences(pair.after.graph, oldToNew);
    std::vector<InputSpec> specs;
    for (const Node& n : pair.after.graph.nodes)
      if (n.isPlaceholder())
        if (const InputSpec* s = pair.after.signature.inputForPlaceholder(n.name)) specs.push_back(*s);
    pair.after.signature.inputs = std::move(specs);
  }
  if (std::vector<Diagnostic> errors = validate(pair.after); !errors.empty())
    return Result<PreparedPair>::failure(error(afterName, "internal: AFTER renamed is invalid: " + formatAll(errors)));
  pair.beforeSchemas = schemasFor(pair.before, builtinSchemas());
  pair.afterSchemas = schemasFor(pair.after, builtinSchemas());
  // The keys again, of the renamed and reordered AFTER (the same identities).
  pair.beforeKeys = beforeKeys;
  pair.afterKeys = table.keysOf(pair.after);
  return Result<PreparedPair>::success(std::move(pair));
}

}  // namespace wb::proofs
