// core/ir.cpp: small helpers of the program model.
#include "core/ir.h"

#include "core/name_index.h"  // sameName

#include <algorithm>
#include <charconv>
#include <cstring>
#include <limits>
#include <stdexcept>

namespace wb {

bool operator==(const Arg& a, const Arg& b) {
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case Arg::Kind::None: return true;
    case Arg::Kind::Bool: return a.boolean == b.boolean;
    case Arg::Kind::Int: return a.integer == b.integer;
    // Bitwise-equal doubles (so NaN == NaN and -0.0 != 0.0): what round trips must keep.
    case Arg::Kind::Float:
      return std::memcmp(&a.real, &b.real, sizeof(double)) == 0;
    case Arg::Kind::Ref: return a.node == b.node;
    case Arg::Kind::String:
    case Arg::Kind::Token: return sameName(a.text, b.text);  // short texts, compared inline
    case Arg::Kind::List:
    case Arg::Kind::Tuple: return a.items == b.items;
  }
  return false;
}

// Every field, as a defaulted comparison would, in another order: the op and the name first
// (the ones most likely to differ), and the short texts compared inline (sameName) rather
// than by memcmp calls. Nodes are compared by the thousand where the oracle matches a placed
// program's nodes with its program's.
bool operator==(const Node& a, const Node& b) {
  return a.op == b.op && sameName(a.name, b.name) && a.target == b.target && sameName(a.typeText, b.typeText) &&
         a.args == b.args && a.kwargs == b.kwargs && a.meta == b.meta;
}

bool sameArgText(const Arg& a, const Graph& aGraph, const Arg& b, const Graph& bGraph) {
  if (a.kind != b.kind) return false;
  if (a.kind == Arg::Kind::Ref)
    return a.node < aGraph.nodes.size() && b.node < bGraph.nodes.size() &&
           sameName(aGraph.nodes[a.node].name, bGraph.nodes[b.node].name);
  if (!a.isSequence()) return a == b;
  if (a.items.size() != b.items.size()) return false;
  for (std::size_t k = 0; k < a.items.size(); ++k)
    if (!sameArgText(a.items[k], aGraph, b.items[k], bGraph)) return false;
  return true;
}

bool sameNodeText(const Node& a, const Graph& aGraph, const Node& b, const Graph& bGraph) {
  if (a.op != b.op || !sameName(a.name, b.name) || a.target != b.target || !sameName(a.typeText, b.typeText) ||
      a.args.size() != b.args.size() || a.kwargs.size() != b.kwargs.size() || !(a.meta == b.meta))
    return false;
  for (std::size_t k = 0; k < a.args.size(); ++k)
    if (!sameArgText(a.args[k], aGraph, b.args[k], bGraph)) return false;
  for (std::size_t k = 0; k < a.kwargs.size(); ++k)
    if (a.kwargs[k].first != b.kwargs[k].first || !sameArgText(a.kwargs[k].second, aGraph, b.kwargs[k].second, bGraph))
      return false;
  return true;
}

// ---------------------------------------------------------------------------------------------

bool TensorType::isStatic() const {
  for (const Dim& d : shape)
    if (!d.isStatic()) return false;
  return true;
}

std::optional<std::int64_t> TensorType::numel() const {
  std::int64_t n = 1;
  for (const Dim& d : shape) {
    if (!d.isStatic() || d.size < 0) return std::nullopt;
    if (d.size != 0 && n > std::numeric_limits<std::int64_t>::max() / d.size) return std::nullopt;
    n *= d.size;
  }
  return n;
}

int TensorType::elementSize() const { return dtypeElementSize(dtype); }

int dtypeElementSize(std::string_view dtype) {
  if (dtype == "f64" || dtype == "i64" || dtype == "c64") return 8;
  if (dtype == "f32" || dtype == "i32" || dtype == "u32") return 4;
  if (dtype == "f16" || dtype == "bf16" || dtype == "i16" || dtype == "u16") return 2;
  if (dtype == "i8" || dtype == "u8" || dtype == "b8" || dtype == "f8e4m3fn" || dtype == "f8e5m2") return 1;
  if (dtype == "c128") return 16;
  return 0;
}

namespace {
std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}
bool isIdentChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}
}  // namespace

std::optional<TensorType> parseTensorType(std::string_view text) {
  text = trim(text);
  std::size_t open = text.find('[');
  if (open == std::string_view::npos || open == 0 || text.back() != ']') return std::nullopt;
  TensorType type;
  for (char c : text.substr(0, open))
    if (!isIdentChar(c)) return std::nullopt;
  type.dtype = std::string(text.substr(0, open));
  std::string_view body = text.substr(open + 1, text.size() - open - 2);
  if (body.find('[') != std::string_view::npos) return std::nullopt;  // "f32[2][2]" is a list
  body = trim(body);
  if (body.empty()) return type;
  constexpr std::size_t kMaxDims = 64;
  while (true) {
    std::size_t comma = body.find(',');
    std::string_view part = trim(body.substr(0, comma));
    if (part.empty() || type.shape.size() >= kMaxDims) return std::nullopt;
    Dim dim;
    std::int64_t value = 0;
    auto [ptr, ec] = std::from_chars(part.data(), part.data() + part.size(), value);
    if (ec == std::errc() && ptr == part.data() + part.size() && value >= 0) {
      dim.size = value;
    } else {
      for (char c : part)
        if (!(isIdentChar(c) || c == '*' || c == '+' || c == '-' || c == '/' || c == ' ' || c == '(' || c == ')'))
          return std::nullopt;
      dim.symbol = std::string(part);
    }
    type.shape.push_back(std::move(dim));
    if (comma == std::string_view::npos) break;
    body = body.substr(comma + 1);
  }
  return type;
}

std::string formatTensorType(const TensorType& type) {
  std::string out = type.dtype + "[";
  for (std::size_t i = 0; i < type.shape.size(); ++i) {
    if (i) out += ", ";
    out += type.shape[i].isStatic() ? std::to_string(type.shape[i].size) : type.shape[i].symbol;
  }
  return out + "]";
}

// ---------------------------------------------------------------------------------------------

std::string_view toString(NodeOp op) {
  switch (op) {
    case NodeOp::Placeholder: return "placeholder";
    case NodeOp::GetAttr: return "get_attr";
    case NodeOp::CallFunction: return "call_function";
    case NodeOp::CallModule: return "call_module";
    case NodeOp::Output: return "output";
  }
  return "?";
}

Node Node::placeholder(std::string name, std::string type) {
  Node n;
  n.op = NodeOp::Placeholder;
  n.target = name;
  n.name = std::move(name);
  n.typeText = std::move(type);
  return n;
}

Node Node::getAttr(std::string name) {
  Node n;
  n.op = NodeOp::GetAttr;
  n.target = name;
  n.name = std::move(name);
  return n;
}

Node Node::call(std::string name, SharedString target, std::vector<Arg> args,
                std::vector<std::pair<std::string, Arg>> kwargs, std::string type,
                NodeMeta meta) {
  Node n;
  n.name = std::move(name);
  n.op = NodeOp::CallFunction;
  n.target = std::move(target);
  n.args = std::move(args);
  n.kwargs = std::move(kwargs);
  n.typeText = std::move(type);
  n.meta = std::move(meta);
  return n;
}

Node Node::output(std::vector<Arg> values) {
  Node n;
  n.name = "output";
  n.op = NodeOp::Output;
  n.target = "output";
  n.args = {Arg::tuple(std::move(values))};
  return n;
}

NodeMeta::NodeMeta(std::initializer_list<Entry> entries) {
  for (const Entry& e : entries) (*this)[e.first] = e.second;
}

NodeMeta::const_iterator NodeMeta::find(std::string_view key) const {
  auto it = std::lower_bound(entries_.begin(), entries_.end(), key,
                             [](const Entry& e, std::string_view k) { return e.first < k; });
  return it != entries_.end() && it->first == key ? it : entries_.end();
}

const std::string& NodeMeta::at(std::string_view key) const {
  const_iterator it = find(key);
  if (it == end()) throw std::out_of_range("NodeMeta::at: no key " + std::string(key));
  return it->second;
}

std::string& NodeMeta::operator[](std::string_view key) {
  auto it = std::lower_bound(entries_.begin(), entries_.end(), key,
                             [](const Entry& e, std::string_view k) { return e.first < k; });
  if (it == entries_.end() || it->first != key) it = entries_.insert(it, Entry{std::string(key), std::string()});
  return it->second;
}

std::optional<int> Node::shareAllocArgIndex() const {
  auto it = meta.find("_share_alloc_with_arg_idx");
  if (it == meta.end()) return std::nullopt;
  int value = 0;
  const std::string& s = it->second;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || ptr != s.data() + s.size() || value < 0) return std::nullopt;
  return value;
}

std::optional<std::size_t> Graph::indexOf(std::string_view name) const {
  for (std::size_t i = 0; i < nodes.size(); ++i)
    if (nodes[i].name == name) return i;
  return std::nullopt;
}

const Node* Graph::find(std::string_view name) const {
  auto i = indexOf(name);
  return i ? &nodes[*i] : nullptr;
}

const Node* Graph::outputNode() const {
  if (nodes.empty() || !nodes.back().isOutput()) return nullptr;
  return &nodes.back();
}

std::span<const Arg> Graph::returnedArgs() const {
  const Node* out = outputNode();
  if (!out || out->args.empty()) return {};
  const Arg& a = out->args[0];
  if (a.isSequence()) return std::span<const Arg>(a.items);
  return std::span<const Arg>(&a, 1);
}

std::vector<Arg> Graph::returnedValues() const {
  const std::span<const Arg> values = returnedArgs();
  return std::vector<Arg>(values.begin(), values.end());
}

// ---------------------------------------------------------------------------------------------
// Edits.

namespace {
void renumberArg(Arg& arg, std::span<const NodeId> oldToNew) {
  if (arg.kind == Arg::Kind::Ref) {
    const NodeId to = arg.node < oldToNew.size() ? oldToNew[arg.node] : kNoNode;
    if (to == kNoNode)
      throw std::invalid_argument("renumberReferences: a reference to node #" + std::to_string(arg.node) +
                                  (arg.node < oldToNew.size() ? ", which the edit deletes" : ", which does not exist"));
    arg.node = to;
  } else if (arg.isSequence()) {
    for (Arg& item : arg.items) renumberArg(item, oldToNew);
  }
}
}  // namespace

void renumberReferences(std::span<Node> nodes, std::span<const NodeId> oldToNew) {
  for (Node& node : nodes) {
    for (Arg& a : node.args) renumberArg(a, oldToNew);
    for (auto& kv : node.kwargs) renumberArg(kv.second, oldToNew);
  }
}

std::vector<NodeId> eraseNodes(Graph& graph, const std::vector<bool>& erased) {
  if (erased.size() != graph.nodes.size()) throw std::invalid_argument("eraseNodes: one flag per node");
  std::vector<NodeId> oldToNew(graph.nodes.size(), kNoNode);
  std::size_t kept = 0;
  for (std::size_t i = 0; i < graph.nodes.size(); ++i) {
    if (erased[i]) continue;
    oldToNew[i] = static_cast<NodeId>(kept);
    if (kept != i) graph.nodes[kept] = std::move(graph.nodes[i]);
    ++kept;
  }
  graph.nodes.resize(kept);
  renumberReferences(graph, oldToNew);
  return oldToNew;
}

void insertNode(Graph& graph, std::size_t at, Node node) {
  if (at > graph.nodes.size()) throw std::out_of_range("insertNode: position past the end");
  std::vector<NodeId> oldToNew(graph.nodes.size());
  for (std::size_t i = 0; i < oldToNew.size(); ++i) oldToNew[i] = static_cast<NodeId>(i < at ? i : i + 1);
  renumberReferences(std::span<Node>(&node, 1), oldToNew);
  renumberReferences(std::span<Node>(graph.nodes).subspan(at), oldToNew);
  graph.nodes.insert(graph.nodes.begin() + static_cast<std::ptrdiff_t>(at), std::move(node));
}

// ---------------------------------------------------------------------------------------------

namespace {
struct InputKindName { InputKind kind; std::string_view name; int value; };
constexpr InputKindName kInputKinds[] = {
    {InputKind::UserInput, "USER_INPUT", 1},   {InputKind::Parameter, "PARAMETER", 2},
    {InputKind::Buffer, "BUFFER", 3},          {InputKind::ConstantTensor, "CONSTANT_TENSOR", 4},
    {InputKind::CustomObj, "CUSTOM_OBJ", 5},   {InputKind::Token, "TOKEN", 6},
};
struct OutputKindName { OutputKind kind; std::string_view name; int value; };
constexpr OutputKindName kOutputKinds[] = {
    {OutputKind::UserOutput, "USER_OUTPUT", 1},
    {OutputKind::LossOutput, "LOSS_OUTPUT", 2},
    {OutputKind::BufferMutation, "BUFFER_MUTATION", 3},
    {OutputKind::GradientToParameter, "GRADIENT_TO_PARAMETER", 4},
    {OutputKind::GradientToUserInput, "GRADIENT_TO_USER_INPUT", 5},
    {OutputKind::UserInputMutation, "USER_INPUT_MUTATION", 6},
    {OutputKind::Token, "TOKEN", 7},
};
}  // namespace

std::string_view toString(InputKind kind) {
  for (const auto& k : kInputKinds)
    if (k.kind == kind) return k.name;
  return "?";
}
std::string_view toString(OutputKind kind) {
  for (const auto& k : kOutputKinds)
    if (k.kind == kind) return k.name;
  return "?";
}
std::optional<InputKind> inputKindFromString(std::string_view text) {
  for (const auto& k : kInputKinds)
    if (k.name == text) return k.kind;
  return std::nullopt;
}
std::optional<OutputKind> outputKindFromString(std::string_view text) {
  for (const auto& k : kOutputKinds)
    if (k.name == text) return k.kind;
  return std::nullopt;
}
int enumValue(InputKind kind) {
  for (const auto& k : kInputKinds)
    if (k.kind == kind) return k.value;
  return 0;
}
int enumValue(OutputKind kind) {
  for (const auto& k : kOutputKinds)
    if (k.kind == kind) return k.value;
  return 0;
}

const InputSpec* Signature::findInput(InputKind kind, std::string_view key) const {
  for (const InputSpec& s : inputs) {
    if (s.kind != kind) continue;
    if (kind == InputKind::UserInput ? s.name == key : s.target == key) return &s;
  }
  return nullptr;
}

const InputSpec* Signature::inputForPlaceholder(std::string_view placeholderName) const {
  for (const InputSpec& s : inputs)
    if (s.name == placeholderName) return &s;
  return nullptr;
}

const InputSpec* Signature::mutatedInput(const OutputSpec& spec) const {
  if (spec.kind == OutputKind::BufferMutation) return findInput(InputKind::Buffer, spec.target);
  if (spec.kind == OutputKind::UserInputMutation) return findInput(InputKind::UserInput, spec.target);
  return nullptr;
}

std::size_t bodyNodeCount(const Program& program) {
  std::size_t n = 0;
  for (const Node& node : program.graph.nodes) n += !node.isPlaceholder() && !node.isOutput();
  return n;
}

}  // namespace wb
