// core/text_parser.cpp: the recursive-descent expression parser of the reader (text_syntax.h).
//
// Grammar (the Python subset FX and torch.export print):
//   expr    := unary [binop unary]          at most one operator: FX prints one op per line
//   unary   := ('-' | '~') unary | postfix
//   postfix := primary { '.' NAME | '(' args ')' | '[' expr ']' }
//   primary := NAME | '%' NAME | NUMBER | STRING | '(' [expr {',' expr} [',']] ')'
//            | '[' ... ']' | '{' [expr ':' expr {',' ...}] '}' | '<' dotted ':' INT '>'
// Recursion depth is bounded by ReadLimits::maxNesting (unary chains count too).
#include <charconv>
#include <cmath>
#include <limits>
#include <utility>

#include "core/text_syntax.h"

namespace wb::text {

TokenCursor::TokenCursor(const Source& source, LexedLine line, const ReadLimits& limits)
    : source_(source), tokens_(std::move(line.tokens)), decoded_(std::move(line.decoded)), limits_(limits) {}

const Token& TokenCursor::peek(std::size_t ahead) const {
  std::size_t i = index_ + ahead;
  return i < tokens_.size() ? tokens_[i] : tokens_.back();
}

const Token& TokenCursor::next() {
  const Token& t = peek();
  if (index_ + 1 < tokens_.size()) ++index_;
  return t;
}

bool TokenCursor::acceptPunct(std::string_view punct) {
  if (!peek().isPunct(punct)) return false;
  next();
  return true;
}

bool TokenCursor::acceptName(std::string_view name) {
  if (!peek().isName(name)) return false;
  next();
  return true;
}

namespace {
std::string describe(const Token& t) {
  switch (t.kind) {
    case TokenKind::End: return "end of line";
    case TokenKind::Comment: return "a comment";
    case TokenKind::String: return "a string";
    default: {
      std::string quoted(1, '\'');
      quoted += t.text;
      quoted += '\'';
      return quoted;
    }
  }
}
}  // namespace

void TokenCursor::fail(const Token& at, std::string message) const { source_.fail(at.pos, std::move(message)); }

void TokenCursor::expectPunct(std::string_view punct, std::string_view context) {
  if (acceptPunct(punct)) return;
  fail(peek(), "expected '" + std::string(punct) + "' " + std::string(context) + ", found " + describe(peek()));
}

const Token& TokenCursor::expectName(std::string_view context) {
  if (peek().kind != TokenKind::Name)
    fail(peek(), "expected a name " + std::string(context) + ", found " + describe(peek()));
  return next();
}

std::string TokenCursor::expectEnd(std::string_view context) {
  std::string comment;
  if (peek().kind == TokenKind::Comment) comment = next().text;
  if (peek().kind != TokenKind::End)
    fail(peek(), "unexpected " + describe(peek()) + " " + std::string(context));
  return comment;
}

// ---------------------------------------------------------------------------------------------

namespace {
bool isBinaryOperator(const Token& t) {
  static constexpr std::string_view kOperators[] = {"+", "-", "*", "/", "//", "%", "**", "==", "!=",
                                                    "<", "<=", ">", ">=", "&", "|", "^", "@"};
  if (t.kind != TokenKind::Punct || t.text.empty()) return false;
  for (std::string_view op : kOperators)
    if (op[0] == t.text[0] && t.text == op) return true;
  return false;
}
}  // namespace

Expr TokenCursor::parseExpr() {
  if (++depth_ > limits_.maxNesting + 8)
    fail(peek(), "expression nested too deeply (limit " + std::to_string(limits_.maxNesting) + ")");
  Expr lhs = parseUnary();
  if (isBinaryOperator(peek())) {
    const Token& op = next();
    Expr binary;
    binary.kind = Expr::Kind::Binary;
    binary.pos = op.pos;
    binary.text = op.text;
    binary.items.push_back(std::move(lhs));
    binary.items.push_back(parseUnary());
    if (isBinaryOperator(peek())) fail(peek(), "only one operator per expression is supported");
    lhs = std::move(binary);
  }
  --depth_;
  return lhs;
}

Expr TokenCursor::parseUnary() {
  if (peek().isPunct("-") || peek().isPunct("~") || peek().isPunct("+")) {
    if (++depth_ > limits_.maxNesting + 8)
      fail(peek(), "expression nested too deeply (limit " + std::to_string(limits_.maxNesting) + ")");
    const Token& op = next();
    Expr operand = parseUnary();
    --depth_;
    if (op.text == "+") return operand;
    // Fold a minus into a numeric literal: -1, -inf, -0.0.
    if (op.text == "-" && operand.kind == Expr::Kind::Int) {
      operand.negative = !operand.negative;
      operand.pos = op.pos;
      return operand;
    }
    if (op.text == "-" && operand.kind == Expr::Kind::Float) {
      operand.real = -operand.real;
      operand.pos = op.pos;
      return operand;
    }
    Expr unary;
    unary.kind = Expr::Kind::Unary;
    unary.pos = op.pos;
    unary.text = op.text;
    unary.items.push_back(std::move(operand));
    return unary;
  }
  return parsePostfix();
}

Expr TokenCursor::parsePostfix() {
  Expr e = parsePrimary();
  while (true) {
    if (peek().isPunct(".")) {
      const Token& dot = next();
      if (e.kind != Expr::Kind::Name) fail(dot, "attribute access is only supported on names");
      e.text += '.';
      e.text += expectName("after '.'").text;
    } else if (peek().isPunct("(")) {
      const Token& open = next();
      if (e.kind != Expr::Kind::Name) fail(open, "only named functions can be called");
      e.kind = Expr::Kind::Call;
      parseCallArguments(e);
    } else if (peek().isPunct("[")) {
      const Token& open = next();
      Expr subscript;
      subscript.kind = Expr::Kind::Subscript;
      subscript.pos = open.pos;
      subscript.items.push_back(std::move(e));
      subscript.items.push_back(parseExpr());
      expectPunct("]", "to close the subscript");
      e = std::move(subscript);
    } else {
      return e;
    }
  }
}

void TokenCursor::parseCallArguments(Expr& call) {
  // One allocation for the arguments of most calls (FX calls take one to four), instead of
  // one per doubling, each moving the Exprs read so far.
  if (!peek().isPunct(")")) call.items.reserve(4);
  while (!acceptPunct(")")) {
    if (peek().kind == TokenKind::Name && peek(1).isPunct("=")) {
      call.keywordNames.emplace_back(next().text);
      next();  // '='
      call.keywordValues.push_back(parseExpr());
    } else {
      if (!call.keywordNames.empty()) fail(peek(), "positional argument after keyword argument");
      call.items.push_back(parseExpr());
    }
    if (call.items.size() + call.keywordNames.size() > limits_.maxListLength)
      source_.fail(call.pos, "too many arguments (limit " + std::to_string(limits_.maxListLength) + ")");
    if (!peek().isPunct(")")) expectPunct(",", "between arguments");
  }
}

Expr TokenCursor::parsePrimary() {
  const Token& t = next();
  Expr e;
  e.pos = t.pos;
  switch (t.kind) {
    case TokenKind::Name:
      if (t.text == "None") {
        e.kind = Expr::Kind::None;
      } else if (t.text == "True" || t.text == "False") {
        e.kind = Expr::Kind::Bool;
        e.boolean = t.text == "True";
      } else if (t.text == "inf" || t.text == "nan") {
        e.kind = Expr::Kind::Float;
        e.real = t.text == "inf" ? std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
      } else {
        e.kind = Expr::Kind::Name;
        e.text = t.text;
      }
      return e;
    case TokenKind::Int:
    case TokenKind::Float: return parseNumber(t);
    case TokenKind::String:
      e.kind = Expr::Kind::String;
      e.text = t.text;
      // Adjacent string literals concatenate, as in Python.
      while (peek().kind == TokenKind::String) e.text += next().text;
      return e;
    case TokenKind::Punct:
      if (t.text == "%") {
        e.kind = Expr::Kind::Ref;
        e.text = expectName("after '%'").text;
        return e;
      }
      if (t.text == "(") return parseParenthesised(t);
      if (t.text == "[") return parseList(t);
      if (t.text == "{") return parseDict(t);
      if (t.text == "<") return parseEnum(t);
      break;
    default: break;
  }
  fail(t, "expected a value, found " + describe(t));
}

Expr TokenCursor::parseNumber(const Token& t) {
  Expr e;
  e.pos = t.pos;
  if (t.kind == TokenKind::Int) {
    e.kind = Expr::Kind::Int;
    e.text = t.text;
    return e;
  }
  e.kind = Expr::Kind::Float;
  if (!floatValue(t.text, e.real)) fail(t, "malformed number '" + std::string(t.text) + "'");
  return e;
}

bool floatValue(std::string_view text, double& value) {
  const char* first = text.data();
  const char* last = first + text.size();
  auto [ptr, ec] = std::from_chars(first, last, value);
  if (ec == std::errc::result_out_of_range) {
    // Python reads 1e999 as inf and 1e-999 as 0.0.
    bool tiny = text.find("e-") != std::string_view::npos || text.find("E-") != std::string_view::npos;
    value = tiny ? 0.0 : std::numeric_limits<double>::infinity();
    return true;
  }
  return ec == std::errc() && ptr == last;
}

void TokenCursor::checkLength(const Expr& sequence) const {
  if (sequence.items.size() > limits_.maxListLength)
    source_.fail(sequence.pos, "list too long (limit " + std::to_string(limits_.maxListLength) + " items)");
}

// `(x)` is x; `(x,)`, `()` and `(x, y)` are tuples.
Expr TokenCursor::parseParenthesised(const Token& open) {
  Expr tuple;
  tuple.kind = Expr::Kind::Tuple;
  tuple.pos = open.pos;
  bool sawComma = false;
  while (!acceptPunct(")")) {
    tuple.items.push_back(parseExpr());
    checkLength(tuple);
    if (acceptPunct(")")) break;
    expectPunct(",", "between tuple items");
    sawComma = true;
  }
  if (tuple.items.size() == 1 && !sawComma) return std::move(tuple.items[0]);
  return tuple;
}

Expr TokenCursor::parseList(const Token& open) {
  Expr list;
  list.kind = Expr::Kind::List;
  list.pos = open.pos;
  while (!acceptPunct("]")) {
    list.items.push_back(parseExpr());
    checkLength(list);
    if (!peek().isPunct("]")) expectPunct(",", "between list items");
  }
  return list;
}

Expr TokenCursor::parseDict(const Token& open) {
  Expr dict;
  dict.kind = Expr::Kind::Dict;
  dict.pos = open.pos;
  while (!acceptPunct("}")) {
    dict.items.push_back(parseExpr());
    expectPunct(":", "between a dictionary key and its value");
    dict.items.push_back(parseExpr());
    checkLength(dict);
    if (!peek().isPunct("}")) expectPunct(",", "between dictionary items");
  }
  return dict;
}

// <InputKind.BUFFER: 3>, as the repr form of a graph signature prints enum members.
Expr TokenCursor::parseEnum(const Token& open) {
  Expr e;
  e.kind = Expr::Kind::Enum;
  e.pos = open.pos;
  e.text = expectName("in an enum value such as <InputKind.BUFFER: 3>").text;
  while (acceptPunct(".")) {
    e.text += '.';
    e.text += expectName("after '.'").text;
  }
  expectPunct(":", "in an enum value such as <InputKind.BUFFER: 3>");
  if (peek().kind != TokenKind::Int) fail(peek(), "expected the enum's number, found " + describe(peek()));
  e.items.push_back(parseNumber(next()));  // printed again where the enum stays text
  expectPunct(">", "to close the enum value");
  return e;
}

}  // namespace wb::text
