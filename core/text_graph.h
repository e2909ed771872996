// core/text_graph.h: one graph under construction by the program reader (core/text.h):
// definitions, references, limits, and the node-level checks both statement parsers share.
//
// Internal to core/text_*.cpp. Two parsers define nodes here: the general one (text_reader.cpp,
// over the Expr trees of text_parser.cpp) and the one for the common node line of forward()
// (text_node_line.cpp). Both go through the same calls in the same order, so that they build
// the same graph and report the same errors.
#pragma once

#include <cstdint>
#include <forward_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/name_index.h"
#include "core/text_syntax.h"

namespace wb::text {

// Control-flow branches are a few nodes each; the main graph is sized by the printout's lines.
inline constexpr std::size_t kExpectedSubmoduleNodes = 16;

// The call targets of one graph, interned: the nodes of one op share one SharedString. What
// TargetInterner (core/shared_string.h) does, over a flat index of the interned targets
// themselves: a pass command's case is a program of a few dozen nodes read afresh, nearly every
// op in it new to its reader, and TargetInterner's map kept a copy of each text beside its
// SharedString and a node per entry (the interning of new targets was 15% of reading such a
// program). Not copyable: the index points at the vector.
class GraphTargets {
 public:
  GraphTargets() : index_(TextOf{&targets_}, kExpected) { targets_.reserve(kExpected); }
  GraphTargets(const GraphTargets&) = delete;
  GraphTargets& operator=(const GraphTargets&) = delete;

  SharedString operator()(std::string_view text) { return (*this)(text, hashName(text)); }
  // The same, with hashName(text) computed.
  SharedString operator()(std::string_view text, std::uint64_t hash) {
    const std::uint32_t known = index_.findHashed(text, hash);
    if (known != Index::kNone) return targets_[known];
    targets_.emplace_back(std::string(text));
    index_.insertHashed(static_cast<std::uint32_t>(targets_.size() - 1), hash);
    return targets_.back();
  }

 private:
  static constexpr std::size_t kExpected = 16;  // a small program's ops
  struct TextOf {
    const std::vector<SharedString>* targets;
    std::string_view operator()(std::uint32_t id) const { return (*targets)[id].str(); }
  };
  using Index = FlatNameIndex<TextOf>;
  std::vector<SharedString> targets_;
  Index index_;
};

class GraphBuilder {
 public:
  // `expectedNodes` sizes the arrays and the name index up front (they grow past it).
  GraphBuilder(const Source& source, const ReadLimits& limits, std::size_t& nodeCount, std::size_t expectedNodes);

  // Adds `node`, defined at `pos`; fails on too many nodes or a name defined before.
  void define(Node node, Pos pos) {
    const std::uint64_t h = hashName(node.name);
    define(std::move(node), pos, h);
  }
  // The same, with hashName(node.name) computed (and prefetchDefinition()'ed) before.
  void define(Node node, Pos pos, std::uint64_t nameHash) {
    appendNode(pos) = std::move(node);
    defineLast(pos, nameHash);
  }
  // define() in two steps, for a parser that builds the node where it stays (a Node is 128
  // bytes, written once into the array instead of built aside and moved): appendNode() fails on
  // too many nodes and appends an empty node; once the caller has filled it in, defineLast()
  // defines it under its name (failing on a name defined before). `printedName`, if given, is
  // that name where the input prints it at `pos` (else defineLast() looks for it there).
  Node& appendNode(Pos pos);
  void defineLast(Pos pos, std::uint64_t nameHash, std::optional<std::string_view> printedName = std::nullopt);
  // Starts loading what define() will need for a name of hash `nameHash` (text_node_line.cpp
  // calls it as soon as it has read the name, and define() after the rest of the line).
  void prefetchDefinition(std::uint64_t nameHash) const { index_.prefetch(nameHash); }

  // Renames a placeholder (the unpacking of unlifted code rebinds the forward's parameters).
  // The index finds a node by its current name only, so the old name is gone from it.
  void renamePlaceholder(std::size_t index, std::string_view newName, Pos pos);

  // The node `name` names now, or kNoNode (a later definition, or none: checkReferences()).
  NodeId resolve(std::string_view name) const {
    const std::uint32_t id = index_.find(name);
    return id != NameIndex::kNone ? static_cast<NodeId>(id) : kNoNode;
  }
  // Notes a use of `name` at `pos` that resolve() took to `node`, for checkReferences(). Only
  // a use that may turn out wrong is kept: one that named no node yet, or a placeholder (which
  // an unpacking may rename later). A name that named any other node names it for good.
  void noteUse(std::string_view name, Pos pos, NodeId node) {
    if (node != kNoNode && !graph.nodes[node].isPlaceholder()) return;
    // A small program uses its placeholders on most lines: room for a few dozen uses at once,
    // not a reallocation at each doubling.
    if (uses_.capacity() == 0) uses_.reserve(kExpectedUses);
    uses_.push_back(Use{stableName(name, pos), pos, graph.nodes.size(), node});
  }
  // How many uses are noted, and forgetting those noted since: a parser that notes the uses of
  // a line as it reads them takes them back when it leaves the line to another parser.
  std::size_t notedUses() const { return uses_.size(); }
  void forgetUsesFrom(std::size_t count) { uses_.resize(count); }
  // A reference to the node `name` names: resolve() and noteUse().
  Arg reference(std::string_view name, Pos pos) {
    const NodeId node = resolve(name);
    noteUse(name, pos, node);
    return Arg::ref(node);
  }

  // The argument an expression denotes; fails on an expression that is no argument.
  Arg toArg(const Expr& e);
  std::int64_t integerValue(const Expr& e) const;

  // The shared target of a call printed as `printed` (normaliseTarget, then interned): one
  // normalisation per distinct printed target, not per node.
  SharedString callTarget(std::string_view printed) { return callTarget(printed, hashName(printed)); }
  // The same, with hashName(printed) computed before.
  SharedString callTarget(std::string_view printed, std::uint64_t hash);
  // Whether callTarget() has seen a call printed as `printed` (of hash `hash`) in this graph:
  // such a callee was read as one before, and a node line need not scan it again.
  bool knowsCallee(std::string_view printed, std::uint64_t hash) const {
    return printedTargetIndex_.findHashed(printed, hash) != FlatNameIndex<PrintedOf>::kNone;
  }

  // Every reference must name a node defined before it (checked once the graph is complete, so
  // that the message can say whether the name is defined later or nowhere).
  void checkReferences() const;

  // The node this builder defined under `name` (its index in the graph as built), if any.
  std::optional<std::size_t> indexOf(std::string_view name) const {
    const std::uint32_t id = index_.find(name);
    if (id == NameIndex::kNone) return std::nullopt;
    return id;
  }

  // Where each node of `nodes` (this graph, finished) was defined; {0, 0} for a node the text
  // did not define by that name.
  std::vector<SourceLocation> locationsOf(const std::vector<Node>& nodes) const;

  const Source& source() const { return source_; }
  const ReadLimits& limits() const { return limits_; }

  Graph graph;
  GraphTargets targets;  // the call targets: every node of one op shares one string
  InferenceHints hints;

 private:
  // A node's definition: the name it is defined under now, and where. One array for both
  // (one allocation per graph, not two).
  struct Definition {
    std::string_view name;
    Pos pos;
  };
  // The index reads a node's name from definitions_, not from the node: definitions_ outlives
  // the graph, which read() moves into the program before it asks for locations.
  struct NameOf {
    const std::vector<Definition>* definitions;
    std::string_view operator()(std::uint32_t id) const { return (*definitions)[id].name; }
  };
  using NameIndex = FlatNameIndex<NameOf>;
  // A call target as printed, and the target it normalises to (callTarget).
  struct PrintedTarget {
    std::string_view printed;  // as stableText() keeps it
    SharedString target;
  };
  struct PrintedOf {
    const std::vector<PrintedTarget>* targets;
    std::string_view operator()(std::uint32_t id) const { return (*targets)[id].printed; }
  };

  static constexpr std::size_t kExpectedUses = 32;
  struct Use {
    std::string_view name;  // as stableName() keeps it
    Pos pos;
    std::size_t usedAt;  // index of the node being built when the use was seen
    NodeId node;         // the node the name named then, or kNoNode
  };

  // A view of `name` that lives as long as the builder: `name` itself if it views the input,
  // else into the input where the name is printed at `pos` or just after it (`%x`), else (the
  // output node's "output") a literal, else a copy the builder keeps.
  std::string_view stableName(std::string_view name, Pos pos);
  // `text` if it is a view into the input (which outlives the builder), else a copy the builder
  // keeps.
  std::string_view stableText(std::string_view text);

  const Source& source_;
  const ReadLimits& limits_;
  std::size_t& nodeCount_;
  std::vector<Definition> definitions_;  // by node index
  std::forward_list<std::string> copies_;  // texts printed nowhere in the input ("output")
  NameIndex index_;                      // name -> node index, over definitions_
  std::vector<Use> uses_;
  std::vector<PrintedTarget> printedTargets_;  // callTarget's
  FlatNameIndex<PrintedOf> printedTargetIndex_;
  std::string normalised_;  // callTarget's scratch: a normalised target before it is interned
};

// Caps the shapes of annotations: a hostile "f32[99999999999, ...]" must not reach an
// interpreter that allocates by shape.
void checkShape(const Source& source, const ReadLimits& limits, std::string_view type, Pos pos);

// `# meta: key=value, key=value` (the comment after '#'); any other comment is no meta.
NodeMeta parseMeta(const Source& source, std::string_view comment, Pos pos);

// Scratch space of readCommonNodeLine, kept from one line to the next (no allocation per line).
struct NodeLineScratch {
  std::vector<Arg> args;
  std::vector<std::pair<std::string, Arg>> kwargs;
  // The items of the lists being read, innermost last: each list takes its own off the end,
  // into a vector of exactly their number (a list grown item by item allocated once per
  // doubling).
  std::vector<Arg> items;
  // The last annotation checkShape() passed (a view into the input): nodes print the same type
  // over and over, and the check depends on the text and the limits alone.
  std::string_view checkedType;
};

// Reads physical line `lineIndex` as a node statement of forward() in the form PyTorch prints
// nearly every node in, `name: "f32[4]" = torch.ops.aten.op.overload(x, [y, 1], dim = 0)` with
// optional `;  a = None` deletions and a trailing comment, straight into a Node of `builder`
// (text_node_line.cpp). Returns false, having changed nothing, for any line outside that form,
// a statement that continues on the next line, or one with an error: the general parser then
// reads it, and says what is wrong. What it accepts it reads exactly as the general parser
// does: the same node, the same references, the same errors from the same checks.
// `indent`: the line's indentation (Source::indentOf), which the caller has scanned already.
bool readCommonNodeLine(std::size_t lineIndex, std::size_t indent, GraphBuilder& builder, NodeLineScratch& scratch);

// The same for the two other lines of forward() (text_node_line.cpp): its header, `def
// forward(self, x: "f32[4]", y: "f32[4]"):` (readForwardHeader's placeholders), and its return,
// `return (add, mul)` (readReturn's output node). false, having changed nothing, for a line
// outside the form: the general parser reads it.
bool readCommonForwardHeader(std::size_t lineIndex, std::size_t indent, GraphBuilder& builder, NodeLineScratch& scratch);
bool readCommonReturnLine(std::size_t lineIndex, std::size_t indent, GraphBuilder& builder, NodeLineScratch& scratch);

}  // namespace wb::text
