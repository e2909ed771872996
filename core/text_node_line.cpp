// core/text_node_line.cpp: the common node line of forward(), read without tokens or Exprs
// (readCommonNodeLine, text_graph.h).
//
// A printout of 10^6 nodes is 10^6 lines of one shape:
//     n8: "f32[4, 4]" = torch.ops.aten.add.Tensor(x, n7);  x = None  # meta: k=v
// The general reader lexes each into a vector of tokens and parses those into an Expr tree
// before it builds the node; here the line's characters go straight into the Node. The grammar
// below is the general one's restricted to what such lines hold, character by character as the
// lexer would split them (the same whitespace, the same number and string syntax). Whatever
// does not fit -- a bracket left open, a tuple, a call as an argument, an escape in a string, a
// trailing comma, an integer of 19 digits or more, a limit reached, anything the general parser
// would report -- makes the line go to the general parser, before anything is changed.
//
//   line    := NAME [':' STRING] '=' callee '(' [args] ')' {';' deletion} ['#' comment]
//   callee  := NAME {'.' NAME}                       (not None, True, False, inf, nan)
//   args    := arg {',' arg}                         keyword arguments after positional ones
//   arg     := [NAME '='] value
//   value   := NAME {'.' NAME} | ['-'] NUMBER | STRING | '[' [value {',' value}] ']'
//   deletion:= NAME '=' {NAME '='} 'None'
#include <cstdint>
#include <iterator>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/text_graph.h"

namespace wb::text {

namespace {

bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\f'; }
bool isNameStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool isDigit(char c) { return c >= '0' && c <= '9'; }
bool isNameChar(char c) { return isNameStart(c) || isDigit(c); }

// The names the expression parser reads as constants rather than as names.
bool isConstantName(std::string_view name) {
  return name == "None" || name == "True" || name == "False" || name == "inf" || name == "nan";
}

// Integers of up to 18 digits fit in 63 bits; longer ones go to the general parser, which
// knows where 64 bits end.
constexpr std::size_t kMaxPlainDigits = 18;

class NodeLineParser {
 public:
  NodeLineParser(std::size_t lineIndex, std::size_t indent, GraphBuilder& builder, NodeLineScratch& scratch)
      : line_(builder.source().line(lineIndex)),
        lineNumber_(static_cast<int>(lineIndex + 1)),
        i_(indent),
        builder_(builder),
        limits_(builder.limits()),
        scratch_(scratch) {}

  bool run() {
    scratch_.uses.clear();
    scratch_.args.clear();
    scratch_.kwargs.clear();
    // name [: "type"] =  (the indentation is skipped already)
    const std::size_t nameAt = i_;
    const std::string_view name = scanName();
    if (name.empty() || name == "return") return false;
    const std::uint64_t nameHash = hashName(name);
    builder_.prefetchDefinition(nameHash);
    skipSpace();
    std::string_view type;
    std::size_t typeAt = 0;
    bool typed = false;
    if (peek() == ':') {
      ++i_;
      if (peek() == '=') return false;  // ':='
      skipSpace();
      typeAt = i_;
      if (!scanString(type)) return false;
      typed = true;
      skipSpace();
    }
    if (!acceptAssign()) return false;
    skipSpace();
    // callee(
    const std::size_t calleeAt = i_;
    const std::string_view first = scanName();
    if (first.empty() || isConstantName(first)) return false;
    scanAttributes();
    const std::string_view callee = line_.substr(calleeAt, i_ - calleeAt);
    if (peek() != '(' || limits_.maxNesting < 1) return false;
    ++i_;
    if (!readArguments()) return false;
    skipSpace();
    if (!readDeletions()) return false;
    std::string_view comment;
    std::size_t commentAt = 0;
    bool commented = false;
    if (peek() == '#') {
      commentAt = i_;
      comment = line_.substr(i_ + 1);
      commented = true;
    } else if (i_ != line_.size()) {
      return false;
    }

    // The line is in the form: from here on, what the general parser does with it, in its
    // order (readStatement: the annotation's shape, the node, its meta, its definition).
    if (typed && !sameName(type, scratch_.checkedType)) {
      checkShape(builder_.source(), limits_, type, at(typeAt));
      scratch_.checkedType = type;
    }
    Node node;
    node.name = name;
    if (callee.substr(0, 5) == "self.") {
      node.op = NodeOp::CallModule;
      node.target = callee.substr(5);
    } else {
      node.op = NodeOp::CallFunction;
      node.target = builder_.callTarget(callee);
    }
    node.args.assign(std::make_move_iterator(scratch_.args.begin()), std::make_move_iterator(scratch_.args.end()));
    if (!scratch_.kwargs.empty()) {
      node.kwargs.reserve(scratch_.kwargs.size());
      for (auto& kwarg : scratch_.kwargs) node.kwargs.push_back(std::move(kwarg));
    }
    if (typed) node.typeText = type;
    for (const NodeLineScratch::PendingUse& use : scratch_.uses) builder_.noteUse(use.name, use.pos, use.node);
    if (commented) node.meta = parseMeta(builder_.source(), comment, at(commentAt));
    builder_.define(std::move(node), at(nameAt), nameHash);
    return true;
  }

 private:
  char peek() const { return i_ < line_.size() ? line_[i_] : '\0'; }
  char peekAt(std::size_t ahead) const { return i_ + ahead < line_.size() ? line_[i_ + ahead] : '\0'; }
  Pos at(std::size_t index) const { return {lineNumber_, static_cast<int>(index + 1)}; }
  void skipSpace() {
    while (i_ < line_.size() && isSpace(line_[i_])) ++i_;
  }

  // A name token, or "" (nothing consumed) if none starts here.
  std::string_view scanName() {
    if (!isNameStart(peek())) return {};
    const std::size_t start = i_;
    while (i_ < line_.size() && isNameChar(line_[i_])) ++i_;
    return line_.substr(start, i_ - start);
  }
  // `.b.c` after a name, written without spaces.
  void scanAttributes() {
    while (peek() == '.' && isNameStart(peekAt(1))) {
      ++i_;
      scanName();
    }
  }

  // '=' that is not the start of '=='.
  bool acceptAssign() {
    if (peek() != '=' || peekAt(1) == '=') return false;
    ++i_;
    return true;
  }

  // A string without escapes, not followed by another (adjacent literals concatenate).
  bool scanString(std::string_view& value) {
    const char quote = peek();
    if (quote != '\'' && quote != '"') return false;
    std::size_t close = i_ + 1;
    while (close < line_.size() && line_[close] != quote && line_[close] != '\\') ++close;
    if (close >= line_.size() || line_[close] != quote) return false;
    value = line_.substr(i_ + 1, close - i_ - 1);
    i_ = close + 1;
    std::size_t next = i_;
    while (next < line_.size() && isSpace(line_[next])) ++next;
    return next == line_.size() || (line_[next] != '\'' && line_[next] != '"');
  }

  // After '(': the arguments and the closing ')'.
  bool readArguments() {
    skipSpace();
    if (peek() == ')') {
      ++i_;
      return true;
    }
    while (true) {
      const std::size_t keywordAt = i_;
      const std::string_view keyword = scanName();
      bool isKeyword = false;
      if (!keyword.empty()) {
        skipSpace();
        isKeyword = acceptAssign();
        if (isKeyword) skipSpace();
        else i_ = keywordAt;
      }
      Arg value;
      if (!readValue(value, 1)) return false;
      if (isKeyword) {
        scratch_.kwargs.emplace_back(std::string(keyword), std::move(value));
      } else {
        if (!scratch_.kwargs.empty()) return false;  // positional after keyword: an error
        scratch_.args.push_back(std::move(value));
      }
      if (scratch_.args.size() + scratch_.kwargs.size() > limits_.maxListLength) return false;
      skipSpace();
      if (peek() == ')') {
        ++i_;
        return true;
      }
      if (peek() != ',') return false;
      ++i_;
      skipSpace();
      if (peek() == ')') return false;  // a trailing comma: the general parser's
    }
  }

  // One value at bracket depth `depth` (the call's parentheses are depth 1).
  bool readValue(Arg& value, std::size_t depth) {
    const char c = peek();
    if (c == '[') return readList(value, depth + 1);
    if (c == '\'' || c == '"') {
      std::string_view text;
      if (!scanString(text)) return false;
      value = Arg::ofString(std::string(text));
      return true;
    }
    if (c == '-') {
      ++i_;
      if (!isDigit(peek()) && !(peek() == '.' && isDigit(peekAt(1)))) return false;
      return readNumber(value, true);
    }
    if (isDigit(c) || (c == '.' && isDigit(peekAt(1)))) return readNumber(value, false);
    const std::size_t start = i_;
    const std::string_view name = scanName();
    if (name.empty()) return false;
    if (name == "None") value = Arg::none();
    else if (name == "True" || name == "False") value = Arg::ofBool(name == "True");
    else if (name == "inf") value = Arg::ofFloat(std::numeric_limits<double>::infinity());
    else if (name == "nan") value = Arg::ofFloat(std::numeric_limits<double>::quiet_NaN());
    else {
      scanAttributes();
      if (i_ - start > name.size()) {
        value = Arg::token(std::string(line_.substr(start, i_ - start)));  // torch.float32
      } else {
        const NodeId node = builder_.resolve(name);
        scratch_.uses.push_back({name, at(start), node});
        value = Arg::ref(node);
      }
    }
    return true;
  }

  bool readList(Arg& value, std::size_t depth) {
    if (depth > limits_.maxNesting) return false;
    ++i_;
    skipSpace();
    std::vector<Arg> items;
    if (peek() == ']') {
      ++i_;
      value = Arg::list(std::move(items));
      return true;
    }
    while (true) {
      Arg item;
      if (!readValue(item, depth)) return false;
      items.push_back(std::move(item));
      if (items.size() > limits_.maxListLength) return false;
      skipSpace();
      if (peek() == ']') {
        ++i_;
        value = Arg::list(std::move(items));
        return true;
      }
      if (peek() != ',') return false;
      ++i_;
      skipSpace();
      if (peek() == ']') return false;  // a trailing comma: the general parser's
    }
  }

  // A number as the lexer delimits it: digits, a fraction, an exponent; no name character
  // right after it.
  bool readNumber(Arg& value, bool negative) {
    const std::size_t start = i_;
    bool isFloat = false;
    while (isDigit(peek())) ++i_;
    if (peek() == '.') {
      isFloat = true;
      ++i_;
      while (isDigit(peek())) ++i_;
    }
    if (peek() == 'e' || peek() == 'E') {
      ++i_;
      if (peek() == '+' || peek() == '-') ++i_;
      if (!isDigit(peek())) return false;
      while (isDigit(peek())) ++i_;
      isFloat = true;
    }
    if (isNameChar(peek())) return false;
    const std::string_view text = line_.substr(start, i_ - start);
    if (isFloat) {
      double real = 0.0;
      if (!floatValue(text, real)) return false;
      value = Arg::ofFloat(negative ? -real : real);
      return true;
    }
    if (text.size() > kMaxPlainDigits) return false;
    std::int64_t magnitude = 0;
    for (char d : text) magnitude = magnitude * 10 + (d - '0');
    value = Arg::ofInt(negative ? -magnitude : magnitude);
    return true;
  }

  // `;  a = None` (or `; a = b = None`), any number of times.
  bool readDeletions() {
    while (peek() == ';') {
      ++i_;
      while (true) {
        skipSpace();
        if (scanName().empty()) return false;
        skipSpace();
        if (!acceptAssign()) return false;
        skipSpace();
        const std::size_t mark = i_;
        if (scanName() == "None") break;
        i_ = mark;
      }
      skipSpace();
    }
    return true;
  }

  std::string_view line_;
  int lineNumber_;
  std::size_t i_;
  GraphBuilder& builder_;
  const ReadLimits& limits_;
  NodeLineScratch& scratch_;
};

}  // namespace

bool readCommonNodeLine(std::size_t lineIndex, std::size_t indent, GraphBuilder& builder, NodeLineScratch& scratch) {
  return NodeLineParser(lineIndex, indent, builder, scratch).run();
}

}  // namespace wb::text
