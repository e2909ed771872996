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

// The names the expression parser reads as constants rather than as names.
bool isConstantName(std::string_view name) {
  return name == "None" || name == "True" || name == "False" || name == "inf" || name == "nan";
}

// Integers of up to 18 digits fit in 63 bits; longer ones go to the general parser, which
// knows where 64 bits end.
constexpr std::size_t kMaxPlainDigits = 18;

// Arguments of a node, or items of the lists in them, that a node line rarely exceeds.
constexpr std::size_t kExpectedArguments = 8;

class NodeLineParser : LineCursor {
 public:
  NodeLineParser(std::size_t lineIndex, std::size_t indent, GraphBuilder& builder, NodeLineScratch& scratch)
      : LineCursor(builder.source().line(lineIndex), lineIndex, indent),
        builder_(builder),
        limits_(builder.limits()),
        scratch_(scratch) {}

  // The line's uses are noted as they are read; a line left to the general parser takes them
  // back.
  bool run() {
    const std::size_t usesBefore = builder_.notedUses();
    if (read()) return true;
    builder_.forgetUsesFrom(usesBefore);
    return false;
  }

 private:
  bool read() {
    // Room for the arguments of a typical node up front: grown from nothing, the vectors were
    // reallocated several times in each read of a small program.
    if (scratch_.args.capacity() == 0) scratch_.args.reserve(kExpectedArguments);
    scratch_.args.clear();
    scratch_.kwargs.clear();
    scratch_.items.clear();
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
    std::uint64_t calleeHash = 0;
    const std::string_view callee = scanCallee(calleeHash);
    if (callee.empty() || limits_.maxNesting < 1) return false;
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
    // order (readStatement: the annotation's shape, the node -- whose uses are noted already:
    // no check comes between --, its meta, its definition).
    if (typed && !sameName(type, scratch_.checkedType)) {
      checkShape(builder_.source(), limits_, type, at(typeAt));
      scratch_.checkedType = type;
    }
    NodeMeta meta;
    if (commented) meta = parseMeta(builder_.source(), comment, at(commentAt));
    SharedString target;
    const bool module = callee.substr(0, 5) == "self.";
    if (module) target = callee.substr(5);
    else target = builder_.callTarget(callee, calleeHash);
    Node& node = builder_.appendNode(at(nameAt));
    node.name = name;
    node.op = module ? NodeOp::CallModule : NodeOp::CallFunction;
    node.target = std::move(target);
    node.args.assign(std::make_move_iterator(scratch_.args.begin()), std::make_move_iterator(scratch_.args.end()));
    if (!scratch_.kwargs.empty()) {
      node.kwargs.reserve(scratch_.kwargs.size());
      for (auto& kwarg : scratch_.kwargs) node.kwargs.push_back(std::move(kwarg));
    }
    if (typed) node.typeText = type;
    node.meta = std::move(meta);
    builder_.defineLast(at(nameAt), nameHash, name);
    return true;
  }

  // `.b.c` after a name, written without spaces.
  void scanAttributes() {
    while (peek() == '.' && isNameStart(peekAt(1))) {
      ++i_;
      scanName();
    }
  }

  // `NAME {'.' NAME}` up to the '(' of the call, not starting with a constant, and its
  // hashName(); "" for anything else. Ends at the '('.
  std::string_view scanCallee(std::uint64_t& hash) {
    const std::size_t start = i_;
    // Most lines call an op called on an earlier line: the text up to the '(' is looked up
    // among the callees of this graph first (GraphBuilder::knowsCallee), and only an unknown
    // one is scanned character by character.
    const std::size_t paren = line_.find('(', i_);
    if (paren == std::string_view::npos) return {};
    const std::string_view candidate = line_.substr(start, paren - start);
    hash = hashName(candidate);
    if (!candidate.empty() && builder_.knowsCallee(candidate, hash)) {
      i_ = paren;
      return candidate;
    }
    const std::string_view first = scanName();
    if (first.empty() || isConstantName(first)) return {};
    scanAttributes();
    if (peek() != '(') return {};
    // The scan stopped at the first '(': the callee is the text hashed above.
    return line_.substr(start, i_ - start);
  }

  // '=' that is not the start of '=='.
  bool acceptAssign() {
    if (peek() != '=' || peekAt(1) == '=') return false;
    ++i_;
    return true;
  }

  // A string without escapes, not followed by another (adjacent literals concatenate).
  bool scanString(std::string_view& value) {
    if (!LineCursor::scanString(value)) return false;
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
      // A name first is a keyword (`dim = 0`) or the value itself (`x`, `torch.float32`).
      const std::size_t nameAt = i_;
      const std::string_view name = scanName();
      bool isKeyword = false;
      if (!name.empty()) {
        const std::size_t afterName = i_;
        skipSpace();
        isKeyword = acceptAssign();
        if (isKeyword) skipSpace();
        else i_ = afterName;
      }
      if (!isKeyword && !scratch_.kwargs.empty()) return false;  // positional after keyword: an error
      Arg& value = isKeyword ? scratch_.kwargs.emplace_back(std::string(name), Arg{}).second : scratch_.args.emplace_back();
      if (!(name.empty() || isKeyword ? readValue(value, 1) : readNamed(value, nameAt, name))) return false;
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

  // One value at bracket depth `depth` (the call's parentheses are depth 1), into `value`, a
  // default Arg where it will stay (no Arg built aside and moved).
  bool readValue(Arg& value, std::size_t depth) {
    const char c = peek();
    if (c == '[') return readList(value, depth + 1);
    if (c == '\'' || c == '"') {
      std::string_view text;
      if (!scanString(text)) return false;
      value.kind = Arg::Kind::String;
      value.text = text;
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
    return readNamed(value, start, name);
  }

  // The value that starts with the name `name` at `start`, which scanName() has just read: a
  // constant, a dotted token or a reference.
  bool readNamed(Arg& value, std::size_t start, std::string_view name) {
    if (name == "None") {
      value.kind = Arg::Kind::None;
    } else if (name == "True" || name == "False") {
      value.kind = Arg::Kind::Bool;
      value.boolean = name == "True";
    } else if (name == "inf" || name == "nan") {
      value.kind = Arg::Kind::Float;
      value.real = name == "inf" ? std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
    } else {
      scanAttributes();
      if (i_ - start > name.size()) {
        value.kind = Arg::Kind::Token;  // torch.float32
        value.text = line_.substr(start, i_ - start);
      } else {
        value.kind = Arg::Kind::Ref;
        value.node = builder_.resolve(name);
        builder_.noteUse(name, at(start), value.node);
      }
    }
    return true;
  }

  // The items go on scratch_.items, above those of the lists around this one. An item is read
  // where it stays, but a list inside this one is read aside and moved there: its own items go
  // on scratch_.items, which may move the item being read.
  bool readList(Arg& value, std::size_t depth) {
    if (depth > limits_.maxNesting) return false;
    ++i_;
    skipSpace();
    if (peek() == ']') {
      ++i_;
      value = Arg::list({});
      return true;
    }
    std::vector<Arg>& items = scratch_.items;
    if (items.capacity() == 0) items.reserve(kExpectedArguments);  // as for the arguments
    const std::size_t first = items.size();
    while (true) {
      if (peek() == '[') {
        Arg nested;
        if (!readList(nested, depth + 1)) return false;
        items.push_back(std::move(nested));
      } else if (!readValue(items.emplace_back(), depth)) {
        return false;
      }
      if (items.size() - first > limits_.maxListLength) return false;
      skipSpace();
      if (peek() == ']') {
        ++i_;
        const auto begin = items.begin() + static_cast<std::ptrdiff_t>(first);
        value = Arg::list(std::vector<Arg>(std::make_move_iterator(begin), std::make_move_iterator(items.end())));
        items.erase(begin, items.end());
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
      value.kind = Arg::Kind::Float;
      value.real = negative ? -real : real;
      return true;
    }
    if (text.size() > kMaxPlainDigits) return false;
    std::int64_t magnitude = 0;
    for (char d : text) magnitude = magnitude * 10 + (d - '0');
    value.kind = Arg::Kind::Int;
    value.integer = negative ? -magnitude : magnitude;
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

  GraphBuilder& builder_;
  const ReadLimits& limits_;
  NodeLineScratch& scratch_;
};

// The characters of one line, for the two lines of forward() besides its nodes: the header
// and the return. A program of a pass command's case has a dozen nodes, and these two lines,
// lexed into tokens and parsed into Exprs, were a seventh of reading it.
class LineScanner : public LineCursor {
 public:
  LineScanner(const Source& source, std::size_t lineIndex, std::size_t indent)
      : LineCursor(source.line(lineIndex), lineIndex, indent) {}

  bool atEnd() const { return i_ == line_.size(); }
  // `c` and the whitespace after it, if `c` is next.
  bool accept(char c) {
    if (peek() != c) return false;
    ++i_;
    skipSpace();
    return true;
  }
  // A name token and the whitespace after it, or "" (nothing consumed) if none starts here.
  std::string_view name() {
    const std::string_view text = scanName();
    if (!text.empty()) skipSpace();
    return text;
  }
  // A string without escapes and the whitespace after it; false (nothing consumed) for anything
  // else.
  bool string(std::string_view& value) {
    if (!scanString(value)) return false;
    skipSpace();
    return true;
  }
};

}  // namespace

bool readCommonNodeLine(std::size_t lineIndex, std::size_t indent, GraphBuilder& builder, NodeLineScratch& scratch) {
  return NodeLineParser(lineIndex, indent, builder, scratch).run();
}

// def forward(self, NAME [: STRING], ...):  -- as readForwardHeader reads it, where each
// annotation is one string followed by ',' or ')': no trailing comma, default, `->` or comment.
// The line is scanned twice: once to see that it is in the form, then to define its
// placeholders (the scan is cheaper than keeping the parameters aside).
bool readCommonForwardHeader(std::size_t lineIndex, std::size_t indent, GraphBuilder& builder, NodeLineScratch&) {
  if (builder.limits().maxNesting < 1) return false;  // the '(' is the lexer's error then
  // Reads the parameters, calling `parameter(name, pos, type, typePos, typed)` for each; false
  // (having called it for the parameters before) at the first text outside the form.
  auto scan = [&](auto&& parameter) {
    LineScanner c(builder.source(), lineIndex, indent);
    if (c.name() != "def" || c.name() != "forward" || !c.accept('(') || c.name() != "self") return false;
    while (c.accept(',')) {
      const Pos pos = c.here();
      const std::string_view name = c.name();
      if (name.empty()) return false;
      const bool typed = c.accept(':');
      std::string_view type;
      Pos typePos;
      if (typed) {
        typePos = c.here();
        if (!c.string(type)) return false;
      }
      if (c.peek() != ',' && c.peek() != ')') return false;
      parameter(name, pos, type, typePos, typed);
    }
    return c.accept(')') && c.accept(':') && c.atEnd();
  };
  if (!scan([](std::string_view, Pos, std::string_view, Pos, bool) {})) return false;
  // In the form: what readForwardHeader does, in its order.
  scan([&](std::string_view name, Pos pos, std::string_view type, Pos typePos, bool typed) {
    if (typed) checkShape(builder.source(), builder.limits(), type, typePos);
    // Built where it stays (appendNode, defineLast), as a node line's node is.
    Node& node = builder.appendNode(pos);
    node.name = name;
    node.op = NodeOp::Placeholder;
    node.target = name;
    if (typed) node.typeText = type;
    builder.defineLast(pos, hashName(name), name);
  });
  return true;
}

// return (NAME, NAME, ...) or return (NAME,)  -- as readReturn reads it: a tuple of references,
// without constants, dotted names, a trailing comma after two or more, or a comment.
bool readCommonReturnLine(std::size_t lineIndex, std::size_t indent, GraphBuilder& builder, NodeLineScratch& scratch) {
  if (builder.limits().maxNesting < 1) return false;  // the '(' is the lexer's error then
  LineScanner c(builder.source(), lineIndex, indent);
  const Pos returnPos = c.here();
  if (c.name() != "return" || !c.accept('(')) return false;
  // The references are made (and their uses noted) as the names are read, and taken back if
  // the line turns out to be outside the form.
  const std::size_t usesBefore = builder.notedUses();
  std::vector<Arg>& returned = scratch.args;
  returned.clear();
  bool trailingComma = false;  // a ',' just before the ')'
  bool inForm = true;
  while (!c.accept(')')) {
    const Pos pos = c.here();
    const std::string_view name = c.name();
    if (name.empty() || isConstantName(name)) {
      inForm = false;
      break;
    }
    returned.push_back(builder.reference(name, pos));
    if (c.accept(',')) {
      trailingComma = c.peek() == ')';
    } else if (c.peek() != ')') {
      inForm = false;
      break;
    }
  }
  // A tuple is `(a,)` or `(a, b, ...)`; `(a)` is `a`, and `()` and `(a, b,)` are left to the
  // general parser.
  if (!inForm || !c.atEnd() || returned.empty() || trailingComma != (returned.size() == 1) ||
      returned.size() > builder.limits().maxListLength) {
    builder.forgetUsesFrom(usesBefore);
    return false;
  }
  Node output;
  output.name = "output";
  output.op = NodeOp::Output;
  output.target = "output";
  output.args.push_back(
      Arg::tuple(std::vector<Arg>(std::make_move_iterator(returned.begin()), std::make_move_iterator(returned.end()))));
  builder.define(std::move(output), returnPos);
  return true;
}

}  // namespace wb::text
