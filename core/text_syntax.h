// core/text_syntax.h: the lexer and expression parser behind the program reader (core/text.h).
//
// Internal to core/text_*.cpp. The reader works line by line: a "logical line" is one physical
// line, extended over the following lines while a bracket is open (as in Python). Each logical
// line is lexed into tokens and, where it holds an expression, parsed into a small Expr tree by
// a recursive-descent parser whose depth is bounded by ReadLimits::maxNesting.
//
// Errors are thrown as ReadError and caught in readProgram(): the reader stops at the first
// error, and unwinding is the simplest way to leave the deep call chains of a parser without
// threading an error value through every function.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/diagnostics.h"
#include "core/text.h"

namespace wb::text {

// The characters of names, numbers and whitespace, as the lexer and the node-line reader both
// classify them. A table: a name test per character of a 10^6-line printout was a sixth of the
// reader's instructions as a chain of comparisons.
namespace chars {
inline constexpr std::uint8_t kNameStart = 1, kDigit = 2, kSpace = 4;
inline constexpr auto kClass = [] {
  std::array<std::uint8_t, 256> table{};
  for (int c = 'a'; c <= 'z'; ++c) table[c] = kNameStart;
  for (int c = 'A'; c <= 'Z'; ++c) table[c] = kNameStart;
  table['_'] = kNameStart;
  for (int c = '0'; c <= '9'; ++c) table[c] = kDigit;
  table[' '] = table['\t'] = table['\f'] = kSpace;
  return table;
}();
inline std::uint8_t classOf(char c) { return kClass[static_cast<unsigned char>(c)]; }
}  // namespace chars

inline bool isNameStart(char c) { return chars::classOf(c) & chars::kNameStart; }
inline bool isDigit(char c) { return chars::classOf(c) & chars::kDigit; }
inline bool isNameChar(char c) { return chars::classOf(c) & (chars::kNameStart | chars::kDigit); }
// Whitespace within a line (a line's terminator is not part of it).
inline bool isSpace(char c) { return chars::classOf(c) & chars::kSpace; }

struct Pos {
  int line = 0;    // 1-based
  int column = 0;  // 1-based, in bytes
};

// One line read in place, character by character: the base of the direct readers of the lines
// in the form the writer prints (node lines, signature lines, forward()'s header and return;
// text_node_line.cpp, text_spec_line.cpp). Each helper consumes what it reads, or nothing when
// the text is not what it reads; a reader then leaves the line to the general parser.
struct LineCursor {
  LineCursor(std::string_view line, std::size_t lineIndex, std::size_t indent)
      : line_(line), lineNumber_(static_cast<int>(lineIndex + 1)), i_(indent) {}

  char peek() const { return i_ < line_.size() ? line_[i_] : '\0'; }
  char peekAt(std::size_t ahead) const { return i_ + ahead < line_.size() ? line_[i_ + ahead] : '\0'; }
  Pos at(std::size_t index) const { return {lineNumber_, static_cast<int>(index + 1)}; }
  Pos here() const { return at(i_); }
  void skipSpace() {
    while (i_ < line_.size() && isSpace(line_[i_])) ++i_;
  }
  // A name token, or "" if none starts here.
  std::string_view scanName() {
    if (!isNameStart(peek())) return {};
    const std::size_t start = i_;
    while (i_ < line_.size() && isNameChar(line_[i_])) ++i_;
    return line_.substr(start, i_ - start);
  }
  // A quoted string without escapes (the lexer reads those), up to its closing quote; false if
  // none starts here.
  bool scanString(std::string_view& value) {
    const char quote = peek();
    if (quote != '\'' && quote != '"') return false;
    std::size_t close = i_ + 1;
    while (close < line_.size() && line_[close] != quote && line_[close] != '\\') ++close;
    if (close >= line_.size() || line_[close] != quote) return false;
    value = line_.substr(i_ + 1, close - i_ - 1);
    i_ = close + 1;
    return true;
  }

  std::string_view line_;
  int lineNumber_;  // 1-based
  std::size_t i_;   // the next character
};

// The input split into physical lines.
class Source {
 public:
  Source(std::string_view text, std::string_view fileName);

  std::size_t lineCount() const { return lines_.size(); }
  // Physical line `index` (0-based), without its line terminator.
  std::string_view line(std::size_t index) const { return lines_[index]; }
  // Number of leading spaces/tabs of a line; the line's length if it is blank.
  std::size_t indentOf(std::size_t index) const;
  bool isBlank(std::size_t index) const;
  // Blank or only a comment.
  bool isBlankOrComment(std::size_t index) const { return isBlankOrComment(index, indentOf(index)); }
  // The same, for a line whose indentOf the caller has already (a hot loop scans it once).
  bool isBlankOrComment(std::size_t index, std::size_t indent) const {
    return indent == lines_[index].size() || lines_[index][indent] == '#';
  }
  // The line without leading and trailing whitespace.
  std::string_view stripped(std::size_t index) const;
  // Whether `text` is a view into the input (then it lives as long as the input).
  bool holds(std::string_view text) const {
    const auto begin = reinterpret_cast<std::uintptr_t>(text_.data());
    const auto at = reinterpret_cast<std::uintptr_t>(text.data());
    return at >= begin && at + text.size() <= begin + text_.size();
  }

  Diagnostic diagnostic(Pos pos, std::string message) const;
  [[noreturn]] void fail(Pos pos, std::string message) const;

 private:
  std::string_view text_;
  std::string fileName_;
  std::vector<std::string_view> lines_;
};

// Thrown by Source::fail; carries the finished diagnostic.
struct ReadError {
  Diagnostic diagnostic;
};

enum class TokenKind : std::uint8_t { Name, Int, Float, String, Punct, Comment, End };

struct Token {
  TokenKind kind = TokenKind::End;
  // Name/Int/Float/Punct: as written; String: the decoded value; Comment: after '#'. A view into
  // the input, or (a string with escapes) into the LexedLine the token came from.
  std::string_view text;
  Pos pos;
  Pos end;           // one past the last character (same line as pos for every token but End)

  bool is(TokenKind k, std::string_view t) const {
    if (kind != k || text.size() != t.size()) return false;
    // The parser tests punctuation constantly: a one-character test needs no memcmp call
    // (which sanitizer builds intercept).
    return t.size() == 1 ? text[0] == t[0] : text == t;
  }
  bool isPunct(std::string_view t) const { return is(TokenKind::Punct, t); }
  bool isName(std::string_view t) const { return is(TokenKind::Name, t); }
};

// The tokens of one logical line, and the decoded values of its strings that have escapes (the
// tokens of the others view the input). A unique_ptr per value keeps its address when the
// LexedLine moves; most lines have none, and an empty vector allocates nothing.
struct LexedLine {
  std::vector<Token> tokens;
  std::vector<std::unique_ptr<std::string>> decoded;
};

// Lexes the logical line starting at physical line `lineIndex` and advances `lineIndex` past
// it. The result ends with an End token; a comment at the end of the line comes just before it
// (comments inside open brackets are dropped).
LexedLine lexLogicalLine(const Source& source, std::size_t& lineIndex, const ReadLimits& limits);

// ---------------------------------------------------------------------------------------------
// Expressions: the subset of Python that FX and torch.export print.

struct Expr {
  enum class Kind : std::uint8_t {
    Name,       // x, torch.float32, self.bn.weight (text: the dotted path)
    Ref,        // %x in str(graph) (text: x)
    None,
    Bool,
    Int,        // text: the digits; `negative` for a folded unary minus
    Float,      // real
    String,     // text: the decoded value
    List,       // items
    Tuple,      // items
    Dict,       // items: key0, value0, key1, value1, ...
    Call,       // text: the callee's dotted path; items: positional; keywordNames/Values
    Subscript,  // items: base, index
    Enum,       // <InputKind.BUFFER: 3>: text "InputKind.BUFFER", items: the number
    Binary,     // text: the operator; items: lhs, rhs
    Unary,      // text: the operator; items: operand
  };

  Kind kind = Kind::None;
  Pos pos;
  std::string text;
  bool boolean = false;
  bool negative = false;
  double real = 0.0;
  std::vector<Expr> items;
  std::vector<std::string> keywordNames;
  std::vector<Expr> keywordValues;
};

// A cursor over the tokens of one logical line, with the expression parser.
class TokenCursor {
 public:
  TokenCursor(const Source& source, LexedLine line, const ReadLimits& limits);

  const Token& peek(std::size_t ahead = 0) const;
  const Token& next();
  bool atEnd() const { return peek().kind == TokenKind::End || peek().kind == TokenKind::Comment; }
  bool acceptPunct(std::string_view punct);
  bool acceptName(std::string_view name);
  void expectPunct(std::string_view punct, std::string_view context);
  const Token& expectName(std::string_view context);
  // Fails unless only an optional comment is left; returns that comment's text ("" if none).
  std::string expectEnd(std::string_view context);
  [[noreturn]] void fail(const Token& at, std::string message) const;

  Expr parseExpr();

  const Source& source() const { return source_; }

 private:
  Expr parseUnary();
  Expr parsePostfix();
  Expr parsePrimary();
  Expr parseParenthesised(const Token& open);
  Expr parseList(const Token& open);
  Expr parseDict(const Token& open);
  Expr parseEnum(const Token& open);
  void parseCallArguments(Expr& call);
  Expr parseNumber(const Token& token);
  void checkLength(const Expr& sequence) const;

  const Source& source_;
  std::vector<Token> tokens_;
  std::vector<std::unique_ptr<std::string>> decoded_;  // what tokens_'s escaped strings view
  std::size_t index_ = 0;
  std::size_t depth_ = 0;
  const ReadLimits& limits_;
};

// The value of a float literal as the lexer delimits it ("1.5", "1e-05", ".5"); false if it is
// malformed. Out of range reads as Python reads it: 1e999 is inf, 1e-999 is 0.0.
bool floatValue(std::string_view text, double& value);

// Rejects input with binary bytes (control characters other than whitespace, DEL) with the
// position of the first one (text_binary.cpp).
void rejectBinary(std::string_view input, const Source& source);

// A line of a text graph signature (`b_x: BUFFER target='x' persistent=True`), as
// readCommonSpecLine reads it: views into the input.
struct SpecLine {
  std::string_view name;
  Pos pos;  // of the name: the spec's position
  std::string_view kind;
  Pos kindPos;
  std::optional<std::string_view> target;
  std::optional<bool> persistent;
};

// Reads physical line `lineIndex`, indented by `indent` (Source::indentOf), as a signature line
// in the form the writer and PyTorch print it, without tokens (text_spec_line.cpp). Returns
// false for any line outside that form or with an error: the general path (lexer and
// readTextSpec) then reads it and says what is wrong. What it accepts it reads exactly as the
// general path does.
bool readCommonSpecLine(const Source& source, std::size_t lineIndex, std::size_t indent, SpecLine& out);

// readProgram (core/text.h), with or without the direct paths for the common lines (the node
// lines of forward(), readCommonNodeLine in text_graph.h; the signature's, readCommonSpecLine):
// without them, every line is lexed and parsed. Both read every input to the same result;
// tests/reader_paths_test.cpp compares them.
Result<Program> readProgramWith(std::string_view text, std::string_view fileName, const ReadLimits& limits,
                                std::vector<SourceLocation>* nodeLocations, bool commonLines);

// What the reader learnt about placeholders that their names alone do not say.
struct InferenceHints {
  // str(graph) prints `placeholder[target=b_x]`: the target, where it differs from the name.
  std::map<std::string, std::string> printedPlaceholderTargets;
  // Inputs whose spec is already known (mutated `self.a.b` buffers of unlifted code).
  std::map<std::string, InputSpec> knownInputs;
};

// Infers the signature of a program printed without one, lifting the trailing copy_ block of
// `graph` into mutation outputs (text_infer.cpp).
Signature inferSignature(Graph& graph, InferenceHints hints);

// The comment the writer puts in the signature of a program whose signature the reader inferred,
// and from which the reader knows it again: a placed program says that nobody printed its
// signature (core/text.h).
inline constexpr std::string_view kInferredSignatureNote = "# inferred by wbcheck: the input printed no signature";

// normaliseTarget (core/text.h) into `out`, whose buffer is reused: the reader normalises every
// new call target of a graph, and a new string each time was an allocation or two.
void normaliseTargetInto(std::string& out, std::string_view printedTarget);

// Formatting shared by the writer and the reader's canonical token text.
std::string formatFloat(double value);           // Python repr: 1.0, 1e-05, inf, nan
std::string quoteString(std::string_view value); // 'a\'b'
// The canonical text of an expression used verbatim as a Token argument: device(type='cpu').
std::string canonicalText(const Expr& expr);

}  // namespace wb::text
