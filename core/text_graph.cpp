// core/text_graph.cpp: the graph under construction by the program reader (text_graph.h).
#include "core/text_graph.h"

#include <charconv>
#include <limits>
#include <utility>

namespace wb::text {

namespace {
std::string positionText(Pos pos) { return "line " + std::to_string(pos.line); }

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}
}  // namespace

GraphBuilder::GraphBuilder(const Source& source, const ReadLimits& limits, std::size_t& nodeCount,
                           std::size_t expectedNodes)
    : source_(source),
      limits_(limits),
      nodeCount_(nodeCount),
      index_(NameOf{&definitions_}, expectedNodes),
      printedTargetIndex_(PrintedOf{&printedTargets_}, 16) {
  printedTargets_.reserve(16);
  graph.nodes.reserve(expectedNodes);
  definitions_.reserve(expectedNodes);
}

Node& GraphBuilder::appendNode(Pos pos) {
  if (++nodeCount_ > limits_.maxNodes)
    source_.fail(pos, "too many nodes (limit " + std::to_string(limits_.maxNodes) + ")");
  return graph.nodes.emplace_back();
}

void GraphBuilder::defineLast(Pos pos, std::uint64_t nameHash, std::optional<std::string_view> printedName) {
  const auto id = static_cast<std::uint32_t>(graph.nodes.size() - 1);
  const Node& node = graph.nodes.back();
  definitions_.push_back({printedName ? *printedName : stableName(node.name, pos), pos});
  const std::uint32_t first = index_.insertHashed(id, nameHash);
  if (first != id)
    source_.fail(pos, "duplicate node name '" + node.name + "' (first defined at " + positionText(definitions_[first].pos) + ")");
}

void GraphBuilder::renamePlaceholder(std::size_t index, std::string_view newName, Pos pos) {
  Node& node = graph.nodes[index];
  if (index_.find(newName) != NameIndex::kNone) source_.fail(pos, "duplicate node name '" + std::string(newName) + "'");
  definitions_[index] = {stableName(newName, pos), pos};
  index_.insert(static_cast<std::uint32_t>(index));
  node.name = newName;
  node.target = newName;
}

Arg GraphBuilder::toArg(const Expr& e) {
  switch (e.kind) {
    case Expr::Kind::Name:
      if (e.text.find('.') != std::string::npos) return Arg::token(e.text);
      return reference(e.text, e.pos);
    case Expr::Kind::Ref: return reference(e.text, e.pos);
    case Expr::Kind::None: return Arg::none();
    case Expr::Kind::Bool: return Arg::ofBool(e.boolean);
    case Expr::Kind::Int: return Arg::ofInt(integerValue(e));
    case Expr::Kind::Float: return Arg::ofFloat(e.real);
    case Expr::Kind::String: return Arg::ofString(e.text);
    case Expr::Kind::List:
    case Expr::Kind::Tuple: {
      std::vector<Arg> items;
      items.reserve(e.items.size());
      for (const Expr& item : e.items) items.push_back(toArg(item));
      return e.kind == Expr::Kind::List ? Arg::list(std::move(items)) : Arg::tuple(std::move(items));
    }
    case Expr::Kind::Call: return Arg::token(canonicalText(e));
    default: break;
  }
  source_.fail(e.pos, "unsupported argument '" + canonicalText(e) + "' (expected a name, number, string, list, tuple or constant)");
}

std::int64_t GraphBuilder::integerValue(const Expr& e) const {
  std::uint64_t magnitude = 0;
  auto [ptr, ec] = std::from_chars(e.text.data(), e.text.data() + e.text.size(), magnitude);
  const std::uint64_t limit = std::uint64_t{1} << 63;
  if (ec != std::errc() || ptr != e.text.data() + e.text.size() || magnitude > limit || (!e.negative && magnitude == limit))
    source_.fail(e.pos, "integer " + std::string(e.negative ? "-" : "") + e.text + " does not fit in 64 bits");
  if (e.negative) return magnitude == limit ? std::numeric_limits<std::int64_t>::min() : -static_cast<std::int64_t>(magnitude);
  return static_cast<std::int64_t>(magnitude);
}

SharedString GraphBuilder::callTarget(std::string_view printed, std::uint64_t h) {
  const std::uint32_t known = printedTargetIndex_.findHashed(printed, h);
  if (known != FlatNameIndex<PrintedOf>::kNone) return printedTargets_[known].target;
  normaliseTargetInto(normalised_, printed);
  printedTargets_.push_back({stableText(printed), targets(normalised_)});
  printedTargetIndex_.insertHashed(static_cast<std::uint32_t>(printedTargets_.size() - 1), h);
  return printedTargets_.back().target;
}

void GraphBuilder::checkReferences() const {
  for (const auto& [name, pos, usedAt, node] : uses_) {
    // Defined before the use when it was read, and not renamed since: the reference is right.
    if (node != kNoNode && sameName(definitions_[node].name, name)) continue;
    const std::uint32_t defined = index_.find(name);
    const std::string shown(name);
    if (defined == NameIndex::kNone) source_.fail(pos, "undefined name '" + shown + "'");
    if (defined >= usedAt)
      source_.fail(pos, "'" + shown + "' is used before its definition at " + positionText(definitions_[defined].pos));
    source_.fail(pos, "'" + shown + "' is used before the unpacking at " + positionText(definitions_[defined].pos) +
                          " renames the parameters of forward()");
  }
}

std::vector<SourceLocation> GraphBuilder::locationsOf(const std::vector<Node>& nodes) const {
  std::vector<SourceLocation> out;
  out.reserve(nodes.size());
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const Node& n = nodes[i];
    // Names are unique, so a node still at the index it was defined at is that definition
    // (nearly every node: only inferring a signature of unlifted code moves nodes).
    std::uint32_t id = static_cast<std::uint32_t>(i);
    if (i >= definitions_.size() || !sameName(definitions_[i].name, n.name)) id = index_.find(n.name);
    out.push_back(id == NameIndex::kNone ? SourceLocation{} : SourceLocation{definitions_[id].pos.line, definitions_[id].pos.column});
  }
  return out;
}

std::string_view GraphBuilder::stableName(std::string_view name, Pos pos) {
  if (source_.holds(name)) return name;
  if (pos.line >= 1 && static_cast<std::size_t>(pos.line) <= source_.lineCount()) {
    const std::string_view line = source_.line(static_cast<std::size_t>(pos.line - 1));
    for (std::size_t column = static_cast<std::size_t>(pos.column - 1), last = column + 1; column <= last; ++column)
      if (column <= line.size() && sameName(line.substr(column, name.size()), name)) return line.substr(column, name.size());
  }
  constexpr std::string_view kOutput = "output";
  if (name == kOutput) return kOutput;
  return copies_.emplace_front(name);
}

std::string_view GraphBuilder::stableText(std::string_view text) {
  return source_.holds(text) ? text : std::string_view(copies_.emplace_front(text));
}

// ---------------------------------------------------------------------------------------------

namespace {
void checkDimSize(const Source& source, const ReadLimits& limits, std::string_view dim, Pos pos) {
  if (dim.empty()) return;
  for (char ch : dim)
    if (ch < '0' || ch > '9') return;  // symbolic: s0, 2*s0
  std::int64_t value = 0;
  auto [ptr, ec] = std::from_chars(dim.data(), dim.data() + dim.size(), value);
  if (ec != std::errc() || ptr != dim.data() + dim.size() || value > limits.maxDimSize)
    source.fail(pos, "dimension size " + std::string(dim.substr(0, 30)) + " exceeds the limit of " +
                         std::to_string(limits.maxDimSize));
}
}  // namespace

namespace {
// Whether checkShape certainly passes `type`: at most maxDims dimensions (commas + 1) and no run
// of digits over maxDimSize (nor of 19 digits or more). One scan, where checkShape trims and
// parses each dimension; a shape it cannot vouch for goes through checkShape's own check, which
// says what is wrong.
bool shapeWithinLimits(const ReadLimits& limits, std::string_view type) {
  const std::size_t open = type.find('[');
  if (open == std::string_view::npos) return true;
  const std::size_t close = type.find(']', open);
  if (close == std::string_view::npos) return true;
  std::size_t dims = 1;
  std::int64_t value = 0;
  std::size_t digits = 0;
  for (std::size_t i = open + 1; i <= close; ++i) {
    const char c = type[i];
    if (c >= '0' && c <= '9') {
      if (++digits > 18) return false;
      value = value * 10 + (c - '0');
      continue;
    }
    if (digits > 0 && value > limits.maxDimSize) return false;
    digits = 0;
    value = 0;
    if (c == ',') ++dims;
  }
  return dims <= limits.maxDims;
}
}  // namespace

void checkShape(const Source& source, const ReadLimits& limits, std::string_view type, Pos pos) {
  if (shapeWithinLimits(limits, type)) return;
  std::size_t open = type.find('[');
  if (open == std::string_view::npos) return;
  std::size_t close = type.find(']', open);
  if (close == std::string_view::npos) return;
  std::string_view body = trim(type.substr(open + 1, close - open - 1));
  if (body.empty()) return;
  std::size_t dims = 0;
  while (true) {
    std::size_t comma = body.find(',');
    std::string_view dim = trim(body.substr(0, comma));
    if (++dims > limits.maxDims)
      source.fail(pos, "shape '" + std::string(type.substr(0, close + 1)).substr(0, 60) + "' has more than " +
                           std::to_string(limits.maxDims) + " dimensions");
    checkDimSize(source, limits, dim, pos);
    if (comma == std::string_view::npos) break;
    body = body.substr(comma + 1);
  }
}

NodeMeta parseMeta(const Source& source, std::string_view comment, Pos pos) {
  NodeMeta meta;
  std::string_view text = trim(comment);
  if (text.substr(0, 5) != "meta:") return meta;
  text = trim(text.substr(5));
  while (!text.empty()) {
    std::size_t comma = text.find(',');
    std::string_view entry = trim(text.substr(0, comma));
    std::size_t eq = entry.find('=');
    if (eq == std::string_view::npos || trim(entry.substr(0, eq)).empty())
      source.fail(pos, "malformed '# meta:' entry '" + std::string(entry) + "' (expected key=value)");
    meta[std::string(trim(entry.substr(0, eq)))] = std::string(trim(entry.substr(eq + 1)));
    if (comma == std::string_view::npos) break;
    text = text.substr(comma + 1);
  }
  return meta;
}

}  // namespace wb::text
