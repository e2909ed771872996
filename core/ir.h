// core/ir.h: the program model of wbcheck (DESIGN §2).
//
// A Program is what `torch.export` produces: a Graph (nodes in a topological order,
// placeholders first, one output node last) plus a Signature that says which placeholders are
// buffers, parameters or user inputs and which outputs are mutations. A node refers to another
// by its index in their graph (Arg::node), as LLVM, MLIR and FX hold operands; names are for
// reading and writing text and for messages. Everything here is a plain value type; analyses
// are free functions elsewhere in core/, and edits that move nodes renumber the references
// (renumberReferences).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/compact_vector.h"
#include "core/shared_string.h"

namespace wb {

// ---------------------------------------------------------------------------------------------
// Argument values: the small tree FX prints inside `args = (...)` and `kwargs = {...}`.

// Index of a node in its graph's `nodes` (Graph::nodes). A reference inside a submodule's graph
// indexes that graph.
using NodeId = std::uint32_t;
inline constexpr NodeId kNoNode = std::numeric_limits<NodeId>::max();

struct Arg {
  enum class Kind : std::uint8_t {
    None,    // None
    Bool,    // True / False
    Int,     // 3, -1
    Float,   // 1e-05, 1.0, inf
    String,  // 'none' (text holds the unquoted string)
    Ref,     // a node of the same graph (node holds its index; the text reader and writer
             // turn it into that node's name and back)
    List,    // [a, b]
    Tuple,   // (a, b)
    Token,   // torch.float32, torch.contiguous_format, device(type='cpu'): text verbatim
  };

  Kind kind = Kind::None;
  // A Ref's defining node: its index in the graph that holds this argument, earlier than the
  // node using it (validate() checks both). kNoNode for every other kind.
  NodeId node = kNoNode;
  // The scalar of a Bool, Int or Float argument; read only the member its kind names.
  union {
    std::int64_t integer = 0;
    bool boolean;
    double real;
  };
  std::string text;          // String: the unquoted string; Token: the text as printed
  CompactVector<Arg> items;  // List, Tuple; one pointer wide: most arguments are no lists

  static Arg none() { return {}; }
  static Arg ofBool(bool v) { Arg a; a.kind = Kind::Bool; a.boolean = v; return a; }
  static Arg ofInt(std::int64_t v) { Arg a; a.kind = Kind::Int; a.integer = v; return a; }
  static Arg ofFloat(double v) { Arg a; a.kind = Kind::Float; a.real = v; return a; }
  static Arg ofString(std::string v) { Arg a; a.kind = Kind::String; a.text = std::move(v); return a; }
  static Arg ref(NodeId node) { Arg a; a.kind = Kind::Ref; a.node = node; return a; }
  static Arg token(std::string v) { Arg a; a.kind = Kind::Token; a.text = std::move(v); return a; }
  static Arg list(std::vector<Arg> v) { Arg a; a.kind = Kind::List; a.items = std::move(v); return a; }
  static Arg tuple(std::vector<Arg> v) { Arg a; a.kind = Kind::Tuple; a.items = std::move(v); return a; }

  bool isRef() const { return kind == Kind::Ref; }
  bool isSequence() const { return kind == Kind::List || kind == Kind::Tuple; }

  friend bool operator==(const Arg& a, const Arg& b);
};

// Calls f(id) for every node reference inside `arg`, depth first, left to right.
template <typename F>
void forEachRef(const Arg& arg, F&& f) {
  if (arg.kind == Arg::Kind::Ref) {
    f(arg.node);
  } else if (arg.isSequence()) {
    for (const Arg& item : arg.items) forEachRef(item, f);
  }
}

// ---------------------------------------------------------------------------------------------
// Types, as PyTorch prints them in annotations: "f32[4, 2]", "i64[]", "f32[s0, 4]", "Sym(s0)".

struct Dim {
  std::int64_t size = 0;  // meaningful when symbol is empty
  std::string symbol;     // "s0", "2*s0": a symbolic size, printed verbatim
  bool isStatic() const { return symbol.empty(); }
  friend bool operator==(const Dim&, const Dim&) = default;
};

struct TensorType {
  std::string dtype;  // PyTorch's short code: f32, f64, f16, bf16, i64, i32, i16, i8, u8, b8
  std::vector<Dim> shape;

  bool isStatic() const;
  // Number of elements, or nullopt if a dimension is symbolic or the product overflows.
  std::optional<std::int64_t> numel() const;
  // Bytes per element of `dtype` (4 for f32), or 0 if unknown.
  int elementSize() const;
  friend bool operator==(const TensorType&, const TensorType&) = default;
};

// Bytes per element of a dtype's short code ("f32": 4), or 0 if unknown.
int dtypeElementSize(std::string_view dtype);

// Parses an annotation such as "f32[4, 2]"; nullopt if it is not a tensor type.
std::optional<TensorType> parseTensorType(std::string_view annotation);
// The inverse: "f32[4, 2]".
std::string formatTensorType(const TensorType& type);

// ---------------------------------------------------------------------------------------------
// Nodes and graphs.

enum class NodeOp : std::uint8_t { Placeholder, GetAttr, CallFunction, CallModule, Output };

std::string_view toString(NodeOp op);

// Annotations PyTorch does not print, carried by the `# meta: k=v` extension (known key:
// "_share_alloc_with_arg_idx", an integer as text). A map ordered by key, kept in a sorted
// CompactVector: almost no node has any, and every pass over 10^6 nodes pays for the bytes of an
// empty one (8 here, 48 for a std::map).
class NodeMeta {
 public:
  using Entry = std::pair<std::string, std::string>;
  using const_iterator = const Entry*;

  NodeMeta() = default;
  NodeMeta(std::initializer_list<Entry> entries);  // a later duplicate key wins, as in a map

  bool empty() const { return entries_.empty(); }
  std::size_t size() const { return entries_.size(); }
  const_iterator begin() const { return entries_.begin(); }
  const_iterator end() const { return entries_.end(); }
  const_iterator find(std::string_view key) const;  // end() if absent
  std::size_t count(std::string_view key) const { return find(key) != end() ? 1 : 0; }
  const std::string& at(std::string_view key) const;  // throws std::out_of_range if absent
  std::string& operator[](std::string_view key);      // inserts an empty value if absent
  void clear() { entries_.clear(); }

  friend bool operator==(const NodeMeta&, const NodeMeta&) = default;

 private:
  CompactVector<Entry> entries_;  // sorted by key; keys unique
};

struct Node {
  // The fields every pass reads come first. The rarely used lists are one pointer each
  // (CompactVector) and the target is shared (SharedString): a Node is two cache lines, and
  // passes over 10^6 nodes stream every one.
  std::string name;
  // Normalised target (DESIGN §2): "aten::add.Tensor", "aten::copy_" (default overload),
  // "my_ops::mystery", "higher_order::cond", "operator.getitem", "executorch_call_delegate".
  // For placeholders: the placeholder's own name; for get_attr: the attribute path;
  // for call_module: the submodule path; for output: "output".
  // Shared by copies (and, from readers and generators, by every node of one op).
  SharedString target;
  std::vector<Arg> args;
  CompactVector<std::pair<std::string, Arg>> kwargs;  // in printed order
  NodeMeta meta;
  NodeOp op = NodeOp::CallFunction;
  // The type annotation as printed ("f32[4]", "Sym(s0)"), empty if none was given.
  std::string typeText;

  // Factories for code that builds programs (generator, tools, tests). A placeholder's and a
  // get_attr's target is its own name; the output node is named "output" and returns a tuple.
  static Node placeholder(std::string name, std::string type = {});
  static Node getAttr(std::string name);
  static Node call(std::string name, SharedString target, std::vector<Arg> args,
                   std::vector<std::pair<std::string, Arg>> kwargs = {}, std::string type = {},
                   NodeMeta meta = {});
  static Node output(std::vector<Arg> values);

  bool isPlaceholder() const { return op == NodeOp::Placeholder; }
  bool isOutput() const { return op == NodeOp::Output; }
  std::optional<TensorType> tensorType() const { return parseTensorType(typeText); }
  // The value of meta `_share_alloc_with_arg_idx`, if present and a valid integer.
  std::optional<int> shareAllocArgIndex() const;

  // Every field equal (see ir.cpp for the order they are compared in).
  friend bool operator==(const Node& a, const Node& b);
};

struct Graph {
  std::vector<Node> nodes;  // topological order; placeholders first; output last

  // Index of the node with this name, or nullopt.
  std::optional<std::size_t> indexOf(std::string_view name) const;
  const Node* find(std::string_view name) const;
  const Node* outputNode() const;  // the last node if it is an output node
  // The flat list of returned values: output.args[0] if it is a tuple/list, else {args[0]}.
  std::vector<Arg> returnedValues() const;
  // The same values in place, without copying them (valid while the output node is unchanged).
  std::span<const Arg> returnedArgs() const;

  friend bool operator==(const Graph&, const Graph&) = default;
};

// Whether node a of graph aGraph and node b of graph bGraph read the same as text: every field
// equal, except that references compare the names of the nodes they refer to. How two versions
// of a program (one edited, its nodes moved) are matched node for node; in a valid program a
// name denotes one node.
bool sameArgText(const Arg& a, const Graph& aGraph, const Arg& b, const Graph& bGraph);
bool sameNodeText(const Node& a, const Graph& aGraph, const Node& b, const Graph& bGraph);

// ---------------------------------------------------------------------------------------------
// Edits. References are node indices, so every edit that inserts, deletes or moves nodes
// renumbers the references of the nodes it keeps, through renumberReferences.

// Replaces every reference r in the arguments of `nodes` (positional and keyword, inside lists
// and tuples, the output node's too) by oldToNew[r]. Precondition: every reference is below
// oldToNew.size() and maps to a node (not kNoNode, the mark of a deleted node); otherwise it
// throws std::invalid_argument naming the first offender, and the nodes before it are already
// renumbered (a broken precondition is the caller's bug: redirect or delete the uses of a node
// before deleting it).
void renumberReferences(std::span<Node> nodes, std::span<const NodeId> oldToNew);
inline void renumberReferences(Graph& graph, std::span<const NodeId> oldToNew) {
  renumberReferences(std::span<Node>(graph.nodes), oldToNew);
}

// Deletes the nodes i with erased[i] (erased.size() == graph.nodes.size()), keeps the others in
// order and renumbers their references. Returns the mapping (kNoNode for a deleted node). The
// same precondition: no kept node may use a deleted one.
std::vector<NodeId> eraseNodes(Graph& graph, const std::vector<bool>& erased);

// Inserts `node`, whose references use the graph's numbering before the insertion, at position
// `at` (<= graph.nodes.size()), and renumbers its references and those of the nodes after it.
void insertNode(Graph& graph, std::size_t at, Node node);

// ---------------------------------------------------------------------------------------------
// The graph signature of torch.export (torch/export/graph_signature.py).

enum class InputKind : std::uint8_t { UserInput, Parameter, Buffer, ConstantTensor, CustomObj, Token };
enum class OutputKind : std::uint8_t {
  UserOutput,
  LossOutput,
  BufferMutation,
  GradientToParameter,
  GradientToUserInput,
  UserInputMutation,
  Token,
};

std::string_view toString(InputKind kind);   // "USER_INPUT", ...
std::string_view toString(OutputKind kind);  // "BUFFER_MUTATION", ...
std::optional<InputKind> inputKindFromString(std::string_view text);
std::optional<OutputKind> outputKindFromString(std::string_view text);
// PyTorch's enum values, as printed in the repr form: <InputKind.BUFFER: 3>.
int enumValue(InputKind kind);
int enumValue(OutputKind kind);

struct InputSpec {
  InputKind kind = InputKind::UserInput;
  std::string name;                 // the placeholder's name (arg.name)
  std::string target;               // FQN for parameters/buffers/constants; empty for user inputs
  std::optional<bool> persistent;   // buffers only
  friend bool operator==(const InputSpec&, const InputSpec&) = default;
};

struct OutputSpec {
  OutputKind kind = OutputKind::UserOutput;
  std::string name;    // the returned node's name; empty for a constant output
  std::string target;  // buffer FQN for BUFFER_MUTATION, user-input placeholder name for
                       // USER_INPUT_MUTATION; empty otherwise
  friend bool operator==(const OutputSpec&, const OutputSpec&) = default;
};

// BUFFER_MUTATION or USER_INPUT_MUTATION. Inline: asked per output spec by every pass.
inline bool isMutation(OutputKind kind) {
  return kind == OutputKind::BufferMutation || kind == OutputKind::UserInputMutation;
}

struct Signature {
  std::vector<InputSpec> inputs;    // one per placeholder, in placeholder order
  std::vector<OutputSpec> outputs;  // one per returned value, in output order

  // The placeholder an input spec of this kind and target denotes. Keyed by (kind, name)
  // because a buffer FQN may equal a user-input name (executorch-semantics §2.1 step 2).
  // For USER_INPUT the key is the placeholder name; for the others the target FQN.
  const InputSpec* findInput(InputKind kind, std::string_view key) const;
  // The input spec of the placeholder with this name.
  const InputSpec* inputForPlaceholder(std::string_view placeholderName) const;
  // The placeholder a mutation output writes: for BUFFER_MUTATION the BUFFER input whose
  // target is spec.target; for USER_INPUT_MUTATION the USER_INPUT named spec.target.
  const InputSpec* mutatedInput(const OutputSpec& spec) const;

  friend bool operator==(const Signature&, const Signature&) = default;
};

// ---------------------------------------------------------------------------------------------
// A whole exported program.

struct Submodule {
  std::string name;  // attribute name, e.g. "true_graph_0"
  Graph graph;
  friend bool operator==(const Submodule&, const Submodule&) = default;
};

struct Program {
  Graph graph;
  Signature signature;
  // Extra schemas declared in the file's `Schemas:` section, one per line, verbatim.
  std::vector<std::string> schemas;
  // Nested graph modules (control-flow branches), printed as nested classes.
  std::vector<Submodule> submodules;
  // `Range constraints: {...}` as printed, without the heading; empty if absent.
  std::string rangeConstraints;
  // True when the reader had to infer the signature (no signature in the text). The writer
  // notes it in a comment the reader knows again. Not part of equality.
  bool signatureInferred = false;

  friend bool operator==(const Program& a, const Program& b) {
    return a.graph == b.graph && a.signature == b.signature && a.schemas == b.schemas &&
           a.submodules == b.submodules && a.rangeConstraints == b.rangeConstraints;
  }
};

// Body nodes: neither placeholders nor the output (what "a program of N nodes" counts).
std::size_t bodyNodeCount(const Program& program);

}  // namespace wb
