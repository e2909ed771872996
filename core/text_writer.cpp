// core/text_writer.cpp: the writers of forms 1, 2 and 3 (writeProgram), argument and target printing, and
// target normalisation (core/text.h).
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/text.h"
#include "core/text_syntax.h"

namespace wb {

namespace text {

// Python's repr of a float: the shortest round-trip digits, fixed notation for exponents in
// [-4, 16), scientific otherwise, and a ".0" when fixed notation has no fraction.
std::string formatFloat(double value) {
  if (std::isnan(value)) return std::signbit(value) ? "-nan" : "nan";
  if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
  char buffer[64];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::scientific);
  if (ec != std::errc()) return "nan";  // cannot happen with 64 bytes
  std::string_view sci(buffer, static_cast<std::size_t>(end - buffer));
  std::string sign;
  if (sci.front() == '-') {
    sign = "-";
    sci.remove_prefix(1);
  }
  std::size_t e = sci.find('e');
  std::string digits;
  for (char c : sci.substr(0, e))
    if (c != '.') digits += c;
  int exponent = 0;
  std::string_view expText = sci.substr(e + 1);
  if (!expText.empty() && expText.front() == '+') expText.remove_prefix(1);
  std::from_chars(expText.data(), expText.data() + expText.size(), exponent);

  if (exponent >= -4 && exponent < 16) {
    if (exponent < 0) return sign + "0." + std::string(static_cast<std::size_t>(-exponent - 1), '0') + digits;
    std::size_t intDigits = static_cast<std::size_t>(exponent) + 1;
    if (digits.size() <= intDigits) return sign + digits + std::string(intDigits - digits.size(), '0') + ".0";
    return sign + digits.substr(0, intDigits) + "." + digits.substr(intDigits);
  }
  std::string mantissa = digits.substr(0, 1);
  if (digits.size() > 1) mantissa += "." + digits.substr(1);
  std::string expDigits = std::to_string(exponent < 0 ? -exponent : exponent);
  if (expDigits.size() < 2) expDigits = "0" + expDigits;
  return sign + mantissa + "e" + (exponent < 0 ? "-" : "+") + expDigits;
}

namespace {
// Appends `value` quoted with `quote` and escaped as Python's repr does. Most values (every
// type annotation, most strings) need no escape: one scan, one append.
void appendQuotedWith(std::string& out, std::string_view value, char quote) {
  auto plain = [quote](char c) {
    const unsigned char u = static_cast<unsigned char>(c);
    return c != '\\' && c != quote && u >= 0x20 && u != 0x7f;
  };
  out += quote;
  if (std::all_of(value.begin(), value.end(), plain)) {
    out += value;
    out += quote;
    return;
  }
  for (char c : value) {
    unsigned char u = static_cast<unsigned char>(c);
    if (c == '\\') out += "\\\\";
    else if (c == quote) { out += '\\'; out += quote; }
    else if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c == '\r') out += "\\r";
    else if (u < 0x20 || u == 0x7f) {
      char buffer[8];
      std::snprintf(buffer, sizeof buffer, "\\x%02x", u);
      out += buffer;
    } else {
      out += c;
    }
  }
  out += quote;
}

std::string quoteWith(std::string_view value, char quote) {
  std::string out;
  appendQuotedWith(out, value, quote);
  return out;
}

std::string joinCanonical(const std::vector<Expr>& items) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + canonicalText(items[i]);
  return out;
}
}  // namespace

std::string quoteString(std::string_view value) { return quoteWith(value, '\''); }

std::string canonicalText(const Expr& e) {
  switch (e.kind) {
    case Expr::Kind::Name: return e.text;
    case Expr::Kind::Ref: return "%" + e.text;
    case Expr::Kind::None: return "None";
    case Expr::Kind::Bool: return e.boolean ? "True" : "False";
    case Expr::Kind::Int: return (e.negative ? "-" : "") + e.text;
    case Expr::Kind::Float: return formatFloat(e.real);
    case Expr::Kind::String: return quoteString(e.text);
    case Expr::Kind::List: return "[" + joinCanonical(e.items) + "]";
    case Expr::Kind::Tuple:
      return "(" + joinCanonical(e.items) + (e.items.size() == 1 ? ",)" : ")");
    case Expr::Kind::Dict: {
      std::string out = "{";
      for (std::size_t i = 0; i + 1 < e.items.size(); i += 2)
        out += (i ? ", " : "") + canonicalText(e.items[i]) + ": " + canonicalText(e.items[i + 1]);
      return out + "}";
    }
    case Expr::Kind::Call: {
      std::string out = e.text + "(" + joinCanonical(e.items);
      for (std::size_t i = 0; i < e.keywordNames.size(); ++i)
        out += (i || !e.items.empty() ? ", " : "") + e.keywordNames[i] + "=" + canonicalText(e.keywordValues[i]);
      return out + ")";
    }
    case Expr::Kind::Subscript: return canonicalText(e.items[0]) + "[" + canonicalText(e.items[1]) + "]";
    case Expr::Kind::Enum: return "<" + e.text + ": " + e.items.at(0).text + ">";
    case Expr::Kind::Binary: return canonicalText(e.items[0]) + " " + e.text + " " + canonicalText(e.items[1]);
    case Expr::Kind::Unary: return e.text + canonicalText(e.items[0]);
  }
  return "";
}

}  // namespace text

// ---------------------------------------------------------------------------------------------

namespace {

// Appends formatArg(arg, graph): the writer appends every piece of a node to the output in
// place, rather than building and concatenating a string per piece.
void appendArg(std::string& out, const Arg& arg, const Graph& graph) {
  auto appendItems = [&out, &graph](const CompactVector<Arg>& items) {
    for (std::size_t i = 0; i < items.size(); ++i) {
      if (i) out += ", ";
      appendArg(out, items[i], graph);
    }
  };
  switch (arg.kind) {
    case Arg::Kind::None: out += "None"; return;
    case Arg::Kind::Bool: out += arg.boolean ? "True" : "False"; return;
    case Arg::Kind::Int: {
      char buffer[24];
      const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, arg.integer);
      out.append(buffer, end);
      return;
    }
    case Arg::Kind::Float: out += text::formatFloat(arg.real); return;
    case Arg::Kind::String: text::appendQuotedWith(out, arg.text, '\''); return;
    case Arg::Kind::Ref:
      // A reference to no node (only an invalid program has one) prints as no name can read.
      if (arg.node < graph.nodes.size()) out += graph.nodes[arg.node].name;
      else out += "<no node #" + std::to_string(arg.node) + ">";
      return;
    case Arg::Kind::Token: out += arg.text; return;
    case Arg::Kind::List:
      out += '[';
      appendItems(arg.items);
      out += ']';
      return;
    case Arg::Kind::Tuple:
      out += '(';
      appendItems(arg.items);
      out += arg.items.size() == 1 ? ",)" : ")";
      return;
  }
  out += "None";
}

}  // namespace

std::string formatArg(const Arg& arg, const Graph& graph) {
  std::string out;
  appendArg(out, arg, graph);
  return out;
}

namespace {
bool startsWith(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }
}  // namespace

std::string printTarget(std::string_view target) {
  if (target == "executorch_call_delegate") return "torch.ops.higher_order.executorch_call_delegate";
  std::size_t colons = target.find("::");
  if (colons == std::string_view::npos) return std::string(target);
  std::string_view ns = target.substr(0, colons);
  std::string_view rest = target.substr(colons + 2);
  // Built in one string: a temporary per piece was most of printing a small program's targets.
  std::string printed;
  printed.reserve(target.size() + 18);
  printed.append("torch.ops.").append(ns).append(".").append(rest);
  // Higher-order ops have no overloads; every other op without one is the default overload.
  // A name that itself ends in `.default` gets another: normaliseTarget strips one, and the
  // printed target must read back as this one (`aten::f.default` is not `aten::f`).
  const bool endsInDefault = rest.size() >= 8 && rest.substr(rest.size() - 8) == ".default";
  if ((ns != "higher_order" && rest.find('.') == std::string_view::npos) || endsInDefault) printed += ".default";
  return printed;
}

std::string normaliseTarget(std::string_view printed) {
  std::string out;
  text::normaliseTargetInto(out, printed);
  return out;
}

void text::normaliseTargetInto(std::string& out, std::string_view printed) {
  out.clear();
  if (startsWith(printed, "<built-in function ") && printed.back() == '>') {
    out.append("operator.").append(printed.substr(19, printed.size() - 20));
    return;
  }
  if (startsWith(printed, "_operator.")) {
    out.append("operator.").append(printed.substr(10));
    return;
  }
  std::string_view rest;
  if (startsWith(printed, "torch.ops.")) rest = printed.substr(10);
  else if (startsWith(printed, "executorch.exir.dialects.edge._ops.")) rest = printed.substr(35);
  const std::size_t dot = rest.find('.');
  if (rest.empty() || dot == std::string_view::npos || dot == 0 || dot + 1 == rest.size()) {
    out.assign(printed);
    return;
  }
  std::string_view ns = rest.substr(0, dot);
  std::string_view op = rest.substr(dot + 1);
  if (ns == "higher_order" && op == "executorch_call_delegate") {
    out.assign("executorch_call_delegate");
    return;
  }
  if (op.size() > 8 && op.substr(op.size() - 8) == ".default") op.remove_suffix(8);
  out.append(ns).append("::").append(op);
}

// ---------------------------------------------------------------------------------------------

namespace {

void appendMeta(std::string& out, const NodeMeta& meta) {
  if (meta.empty()) return;
  out += "  # meta: ";
  bool first = true;
  for (const auto& [key, value] : meta) {
    if (!first) out += ", ";
    out += key;
    out += '=';
    out += value;
    first = false;
  }
}

// printTarget() per distinct target block: the nodes of one op share their target's block
// (SharedString), so a graph of 10^6 nodes prints a few dozen targets, each once.
class PrintedTargets {
 public:
  const std::string& operator()(const SharedString& target) {
    // A graph whose every node has a block of its own (built without an interner) must not
    // fill the table with one entry per node.
    if (known_.size() >= kMaxKnown) known_.clear();
    auto [it, added] = known_.try_emplace(target.data());
    if (added) it->second = printTarget(target);
    return it->second;
  }

 private:
  static constexpr std::size_t kMaxKnown = 4096;
  std::unordered_map<const void*, std::string> known_;  // by the address of the target's text
};

void appendCallArguments(std::string& out, const Node& node, const Graph& graph) {
  bool first = true;
  for (const Arg& a : node.args) {
    if (!first) out += ", ";
    appendArg(out, a, graph);
    first = false;
  }
  for (const auto& [key, value] : node.kwargs) {
    if (!first) out += ", ";
    out += key;
    out += " = ";
    appendArg(out, value, graph);
    first = false;
  }
}

void appendRightHandSide(std::string& out, const Node& node, const Graph& graph, PrintedTargets& printed) {
  switch (node.op) {
    case NodeOp::GetAttr:
      out += "self.";
      out += node.target.str();
      return;
    case NodeOp::CallModule:
      out += "self.";
      out += node.target.str();
      out += '(';
      appendCallArguments(out, node, graph);
      out += ')';
      return;
    default: break;
  }
  if (node.target == "operator.getitem" && node.args.size() == 2 && node.kwargs.empty() && node.args[0].isRef()) {
    appendArg(out, node.args[0], graph);
    out += '[';
    appendArg(out, node.args[1], graph);
    out += ']';
    return;
  }
  out += printed(node.target);
  out += '(';
  appendCallArguments(out, node, graph);
  out += ')';
}

void appendParameters(std::string& out, const Graph& graph) {
  out += "self";
  for (const Node& node : graph.nodes) {
    if (!node.isPlaceholder()) continue;
    out += ", ";
    out += node.name;
    if (node.typeText.empty()) continue;
    out += ": ";
    text::appendQuotedWith(out, node.typeText, '"');
  }
}

void writeForward(std::string& out, const Graph& graph, std::string_view indent, PrintedTargets& printed) {
  out += indent;
  out += "def forward(";
  appendParameters(out, graph);
  out += "):\n";
  for (const Node& node : graph.nodes) {
    if (node.isPlaceholder()) continue;
    out += indent;
    out += "    ";
    if (node.isOutput()) {
      out += "return";
      if (!node.args.empty()) {
        out += ' ';
        appendArg(out, node.args[0], graph);
      }
      appendMeta(out, node.meta);
      out += '\n';
      continue;
    }
    out += node.name;
    if (!node.typeText.empty()) {
      out += ": ";
      text::appendQuotedWith(out, node.typeText, '"');
    }
    out += " = ";
    appendRightHandSide(out, node, graph, printed);
    appendMeta(out, node.meta);
    out += '\n';
  }
}

// `    name: KIND target='t'` of an input or output spec, appended in place: a string per piece
// was most of writing the signature of a small program.
template <typename Spec>
void appendSpecHead(std::string& out, const Spec& spec) {
  out += "    ";
  out += spec.name;
  out += ": ";
  out += toString(spec.kind);
  if (!spec.target.empty()) {
    out += " target=";
    text::appendQuotedWith(out, spec.target, '\'');
  }
}

// The head, ` persistent=True` when given, and a newline.
void appendInputSpec(std::string& out, const InputSpec& spec) {
  appendSpecHead(out, spec);
  if (spec.persistent) out += *spec.persistent ? " persistent=True" : " persistent=False";
  out += '\n';
}

void appendOutputSpec(std::string& out, const OutputSpec& spec) {
  appendSpecHead(out, spec);
  out += '\n';
}

void writeSignature(std::string& out, const Program& program) {
  const Signature& signature = program.signature;
  out += "Graph signature:\n";
  if (program.signatureInferred) {
    out += "    ";
    out += text::kInferredSignatureNote;
    out += '\n';
  }
  out += "    # inputs\n";
  for (const InputSpec& spec : signature.inputs) appendInputSpec(out, spec);
  out += "\n    # outputs\n";
  for (const OutputSpec& spec : signature.outputs) appendOutputSpec(out, spec);
}

// The sections after the graph, the same in every form.
void writeSections(std::string& out, const Program& program) {
  out += "\n";
  writeSignature(out, program);
  if (!program.schemas.empty()) {
    out += "\nSchemas:\n";
    for (const std::string& schema : program.schemas) out += "    " + schema + "\n";
  }
  if (!program.rangeConstraints.empty()) out += "\nRange constraints: " + program.rangeConstraints + "\n";
}

// The pieces above as strings, for the writers of forms 2 and 3 (not the path of large
// programs, which is form 1's).
std::string quoteType(std::string_view typeText) { return text::quoteWith(typeText, '"'); }

std::string formatMeta(const NodeMeta& meta) {
  std::string out;
  appendMeta(out, meta);
  return out;
}

std::string formatParameters(const Graph& graph) {
  std::string out;
  appendParameters(out, graph);
  return out;
}

std::string formatReturn(const Node& output, const Graph& graph) {
  if (output.args.empty()) return "return";
  std::string out = "return ";
  appendArg(out, output.args[0], graph);
  return out;
}

std::string formatRightHandSide(const Node& node, const Graph& graph, PrintedTargets& printed) {
  std::string out;
  appendRightHandSide(out, node, graph, printed);
  return out;
}

// Calls `visit` on every node reference inside `arg`, in the order printed.
template <typename Visit>
void forEachReference(const Arg& arg, const Visit& visit) {
  if (arg.isRef()) visit(arg.node);
  for (const Arg& item : arg.items) forEachReference(item, visit);
}

template <typename Visit>
void forEachReference(const Node& node, const Visit& visit) {
  for (const Arg& a : node.args) forEachReference(a, visit);
  for (const auto& [key, value] : node.kwargs) forEachReference(value, visit);
}

// --- Form 2: graph_module.code -----------------------------------------------------------------

// FX's codegen frees each value after its last use: `;  a = b = None` ends the line of the node
// that uses them last (a value nobody uses is freed after its own line; the output node frees
// nothing).
std::vector<std::vector<std::size_t>> valuesFreedAfter(const Graph& graph) {
  const std::size_t n = graph.nodes.size();
  std::vector<std::vector<std::size_t>> freed(n);
  std::vector<bool> seen(n, false);
  std::vector<bool> used(n, false);
  for (std::size_t i = n; i-- > 0;) {
    forEachReference(graph.nodes[i], [&](NodeId r) {
      if (r >= n) return;
      used[r] = true;
      if (seen[r]) return;
      seen[r] = true;
      if (!graph.nodes[i].isOutput()) freed[i].push_back(r);
    });
  }
  for (std::size_t i = 0; i < n; ++i)
    if (!used[i] && !graph.nodes[i].isPlaceholder() && !graph.nodes[i].isOutput()) freed[i].push_back(i);
  return freed;
}

void writeModuleCode(std::string& out, const Graph& graph) {
  PrintedTargets printed;
  out += "def forward(" + formatParameters(graph) + "):\n";
  const std::vector<std::vector<std::size_t>> freed = valuesFreedAfter(graph);
  for (std::size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& node = graph.nodes[i];
    if (node.isPlaceholder()) continue;
    if (node.isOutput()) {
      out += "    " + formatReturn(node, graph) + formatMeta(node.meta) + "\n";
      continue;
    }
    out += "    " + node.name;
    if (!node.typeText.empty()) out += ": " + quoteType(node.typeText);
    out += " = " + formatRightHandSide(node, graph, printed);
    if (!freed[i].empty()) {
      out += ";  ";
      for (std::size_t v : freed[i]) out += graph.nodes[v].name + " = ";
      out += "None";
    }
    out += formatMeta(node.meta) + "\n";
  }
}

// --- Form 3: str(graph) ------------------------------------------------------------------------

// An argument as str(graph) prints it: node references as `%name`.
std::string formatStrArg(const Arg& arg, const Graph& graph) {
  auto join = [&graph](const CompactVector<Arg>& items) {
    std::string out;
    for (std::size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + formatStrArg(items[i], graph);
    return out;
  };
  switch (arg.kind) {
    case Arg::Kind::Ref: return "%" + formatArg(arg, graph);
    case Arg::Kind::List: return "[" + join(arg.items) + "]";
    case Arg::Kind::Tuple: return "(" + join(arg.items) + (arg.items.size() == 1 ? ",)" : ")");
    default: return formatArg(arg, graph);
  }
}

std::string_view strOpName(NodeOp op) {
  switch (op) {
    case NodeOp::Placeholder: return "placeholder";
    case NodeOp::GetAttr: return "get_attr";
    case NodeOp::CallModule: return "call_module";
    default: return "call_function";
  }
}

void writeStrGraph(std::string& out, const Graph& graph) {
  // FX's num_users: the distinct nodes that use a node.
  std::vector<std::size_t> users(graph.nodes.size(), 0);
  for (std::size_t i = 0; i < graph.nodes.size(); ++i) {
    std::vector<NodeId> mine;
    forEachReference(graph.nodes[i], [&](NodeId r) {
      if (r < users.size() && std::find(mine.begin(), mine.end(), r) == mine.end()) mine.push_back(r);
    });
    for (NodeId r : mine) ++users[r];
  }
  out += "graph():\n";
  for (std::size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& node = graph.nodes[i];
    if (node.isOutput()) {
      out += "    " + formatReturn(node, graph) + formatMeta(node.meta) + "\n";
      continue;
    }
    out += "    %" + node.name + " : ";
    if (!node.typeText.empty()) out += "Tensor " + quoteType(node.typeText) + " ";
    out += "[num_users=" + std::to_string(users[i]) + "] = " + std::string(strOpName(node.op)) + "[target=";
    out += node.op == NodeOp::CallFunction ? printTarget(node.target) : std::string(node.target);
    out += "]";
    if (node.op == NodeOp::CallFunction || node.op == NodeOp::CallModule) {
      out += "(args = (";
      for (std::size_t a = 0; a < node.args.size(); ++a) out += (a ? ", " : "") + formatStrArg(node.args[a], graph);
      out += node.args.size() == 1 ? ",), kwargs = {" : "), kwargs = {";
      bool first = true;
      for (const auto& [key, value] : node.kwargs) {
        out += (first ? "" : ", ") + key + ": " + formatStrArg(value, graph);
        first = false;
      }
      out += "})";
    }
    out += formatMeta(node.meta) + "\n";
  }
}

}  // namespace

std::string writeProgram(const Program& program) {
  // Room for a typical printed node (a name, a type, a target and a few arguments: under 128
  // bytes), so that a large program's text is not copied while it grows. Pages of the reserve
  // that the text does not reach are never touched.
  std::size_t nodes = program.graph.nodes.size();
  for (const Submodule& sub : program.submodules) nodes += sub.graph.nodes.size();
  std::string out;
  out.reserve(4096 + 128 * nodes);
  out += "ExportedProgram:\n    class GraphModule(torch.nn.Module):\n";
  PrintedTargets printed;
  writeForward(out, program.graph, "        ", printed);
  for (const Submodule& sub : program.submodules) {
    out += "\n        class " + sub.name + "(torch.nn.Module):\n";
    writeForward(out, sub.graph, "            ", printed);
  }
  writeSections(out, program);
  return out;
}

std::string writeProgram(const Program& program, ProgramForm form) {
  if (form == ProgramForm::ExportedProgram) return writeProgram(program);
  std::string out;
  if (form == ProgramForm::GraphModuleCode) writeModuleCode(out, program.graph);
  else writeStrGraph(out, program.graph);
  writeSections(out, program);
  return out;
}

std::string programFormCannotCarry(const Program& program, ProgramForm form) {
  if (form == ProgramForm::ExportedProgram || program.submodules.empty()) return {};
  return "the program has " + std::to_string(program.submodules.size()) +
         " submodule(s) (control-flow branches), which form " + std::to_string(static_cast<int>(form)) +
         " cannot carry (it prints one graph): use form 1";
}

}  // namespace wb
