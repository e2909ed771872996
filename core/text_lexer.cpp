// core/text_lexer.cpp: the source lines and the lexer of the program reader (text_syntax.h).
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <utility>

#include "core/text_syntax.h"

namespace wb::text {

Source::Source(std::string_view text, std::string_view fileName) : text_(text), fileName_(fileName) {
  // Room for lines of 32 bytes on average (a node line has 60 to 100): reserved memory that is
  // never written costs nothing, and the views are not copied as the vector grows.
  lines_.reserve(text.size() / 32 + 1);
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t newline = text.find('\n', start);
    std::size_t end = newline == std::string_view::npos ? text.size() : newline;
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines_.push_back(line);
    if (newline == std::string_view::npos) break;
    start = newline + 1;
  }
  // A final newline does not start another line.
  if (lines_.size() > 1 && lines_.back().empty() && !text.empty() && text.back() == '\n') lines_.pop_back();
}

std::size_t Source::indentOf(std::size_t index) const {
  std::string_view l = lines_[index];
  std::size_t i = 0;
  // Printouts indent by spaces, a dozen on a node line: eight at a time first.
  while (i + 8 <= l.size() && std::memcmp(l.data() + i, "        ", 8) == 0) i += 8;
  while (i < l.size() && isSpace(l[i])) ++i;
  return i;
}

bool Source::isBlank(std::size_t index) const { return indentOf(index) == lines_[index].size(); }

std::string_view Source::stripped(std::size_t index) const {
  std::string_view l = lines_[index].substr(indentOf(index));
  while (!l.empty() && isSpace(l.back())) l.remove_suffix(1);
  return l;
}

Diagnostic Source::diagnostic(Pos pos, std::string message) const {
  Diagnostic d;
  d.file = fileName_;
  d.line = pos.line;
  d.column = pos.column;
  d.message = std::move(message);
  if (pos.line >= 1 && static_cast<std::size_t>(pos.line) <= lines_.size())
    d.lineText = std::string(lines_[static_cast<std::size_t>(pos.line - 1)]);
  return d;
}

void Source::fail(Pos pos, std::string message) const { throw ReadError{diagnostic(pos, std::move(message))}; }

// ---------------------------------------------------------------------------------------------

namespace {

std::string describeChar(char c) {
  unsigned char u = static_cast<unsigned char>(c);
  if (u >= 0x21 && u < 0x7f) return std::string("'") + c + "'";
  char buffer[8];
  std::snprintf(buffer, sizeof buffer, "0x%02x", u);
  return buffer;
}

int hexValue(char c) {
  if (isDigit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

constexpr std::size_t kReservedTokens = 256;

struct OpenBracket {
  char bracket;
  Pos pos;
};

char closerOf(char open) { return open == '(' ? ')' : open == '[' ? ']' : '}'; }

// Lexes physical lines into one token list; the state that spans lines is the bracket stack.
class Lexer {
 public:
  Lexer(const Source& source, const ReadLimits& limits) : source_(source), limits_(limits) {}

  LexedLine run(std::size_t& lineIndex) {
    // Room for the tokens of a typical line (a token takes about four characters of it), so
    // that the vector of strings is not moved while it grows.
    if (lineIndex < source_.lineCount())
      tokens_.reserve(std::min<std::size_t>(source_.line(lineIndex).size() / 4 + 2, kReservedTokens));
    while (true) {
      if (lineIndex >= source_.lineCount()) {
        if (stack_.empty()) break;
        const OpenBracket& open = stack_.back();
        source_.fail(open.pos, std::string("'") + open.bracket + "' is never closed (input ends first)");
      }
      lexLine(lineIndex);
      ++lineIndex;
      if (stack_.empty()) break;
    }
    Token end;
    end.kind = TokenKind::End;
    std::size_t last = lineIndex == 0 ? 0 : lineIndex - 1;
    end.pos = {static_cast<int>(last + 1), static_cast<int>(source_.line(last).size() + 1)};
    end.end = end.pos;
    tokens_.push_back(end);
    return LexedLine{std::move(tokens_), std::move(decoded_)};
  }

 private:
  void lexLine(std::size_t lineIndex) {
    line_ = source_.line(lineIndex);
    lineNumber_ = static_cast<int>(lineIndex + 1);
    i_ = 0;
    while (i_ < line_.size()) {
      char c = line_[i_];
      if (isSpace(c)) { ++i_; continue; }
      if (c == '#') {
        if (lexHashUsers()) continue;
        lexComment();
        return;
      }
      if (isNameStart(c)) lexName();
      else if (isDigit(c) || (c == '.' && i_ + 1 < line_.size() && isDigit(line_[i_ + 1]))) lexNumber();
      else if (c == '\'' || c == '"') lexString();
      else lexPunct();
    }
  }

  Pos here() const { return {lineNumber_, static_cast<int>(i_ + 1)}; }

  void push(TokenKind kind, std::string_view text, std::size_t start) {
    Token t;
    t.kind = kind;
    t.text = text;
    t.pos = {lineNumber_, static_cast<int>(start + 1)};
    t.end = here();
    tokens_.push_back(t);
  }

  // Older str(graph) prints `[#users=1]`: the '#' there is not a comment.
  bool lexHashUsers() {
    if (tokens_.empty() || !tokens_.back().isPunct("[") || line_.substr(i_, 6) != "#users") return false;
    std::size_t start = i_;
    i_ += 6;
    push(TokenKind::Name, line_.substr(start, 6), start);
    return true;
  }

  void lexComment() {
    std::size_t start = i_;
    std::string_view text = line_.substr(i_ + 1);
    i_ = line_.size();
    // A comment inside open brackets belongs to a continuation line; only a final one matters.
    if (stack_.empty()) push(TokenKind::Comment, text, start);
  }

  void lexName() {
    std::size_t start = i_;
    while (i_ < line_.size() && isNameChar(line_[i_])) ++i_;
    push(TokenKind::Name, line_.substr(start, i_ - start), start);
  }

  void lexNumber() {
    std::size_t start = i_;
    bool isFloat = false;
    while (i_ < line_.size() && isDigit(line_[i_])) ++i_;
    if (i_ < line_.size() && line_[i_] == '.') {
      isFloat = true;
      ++i_;
      while (i_ < line_.size() && isDigit(line_[i_])) ++i_;
    }
    if (i_ < line_.size() && (line_[i_] == 'e' || line_[i_] == 'E')) {
      std::size_t mark = i_++;
      if (i_ < line_.size() && (line_[i_] == '+' || line_[i_] == '-')) ++i_;
      if (i_ >= line_.size() || !isDigit(line_[i_])) source_.fail({lineNumber_, static_cast<int>(mark + 1)}, "malformed number: exponent has no digits");
      while (i_ < line_.size() && isDigit(line_[i_])) ++i_;
      isFloat = true;
    }
    if (i_ < line_.size() && isNameChar(line_[i_]))
      source_.fail(here(), "malformed number: unexpected " + describeChar(line_[i_]) + " after digits");
    push(isFloat ? TokenKind::Float : TokenKind::Int, line_.substr(start, i_ - start), start);
  }

  // A string without escapes is a view of the line; one with escapes is decoded into decoded_.
  void lexString() {
    std::size_t start = i_;
    char quote = line_[i_++];
    const std::size_t close = line_.find_first_of(quote == '\'' ? std::string_view("'\\") : std::string_view("\"\\"), i_);
    if (close != std::string_view::npos && line_[close] == quote) {
      i_ = close + 1;
      push(TokenKind::String, line_.substr(start + 1, close - start - 1), start);
      return;
    }
    std::string value;
    while (true) {
      if (i_ >= line_.size())
        source_.fail({lineNumber_, static_cast<int>(start + 1)}, std::string("unterminated string: no closing ") + quote + " on this line");
      char c = line_[i_++];
      if (c == quote) break;
      if (c != '\\') { value += c; continue; }
      if (i_ >= line_.size()) continue;  // reported as unterminated on the next iteration
      value += decodeEscape();
    }
    decoded_.push_back(std::make_unique<std::string>(std::move(value)));
    push(TokenKind::String, *decoded_.back(), start);
  }

  // The escape after a backslash; unknown escapes stay as written, as in Python.
  std::string decodeEscape() {
    char c = line_[i_++];
    switch (c) {
      case 'n': return "\n";
      case 't': return "\t";
      case 'r': return "\r";
      case '0': return std::string(1, '\0');
      case '\\': case '\'': case '"': return std::string(1, c);
      case 'x': {
        if (i_ + 1 < line_.size() && hexValue(line_[i_]) >= 0 && hexValue(line_[i_ + 1]) >= 0) {
          char decoded = static_cast<char>(hexValue(line_[i_]) * 16 + hexValue(line_[i_ + 1]));
          i_ += 2;
          return std::string(1, decoded);
        }
        return "\\x";
      }
      default: return std::string("\\") + c;
    }
  }

  void lexPunct() {
    static constexpr std::string_view kTwoChar[] = {":=", "->", "**", "//", "==", "!=", "<=", ">="};
    std::size_t start = i_;
    // Characters compared one by one: most punctuation is one character, and a string
    // comparison per candidate is a memcmp call (intercepted in sanitizer builds).
    const char second = i_ + 1 < line_.size() ? line_[i_ + 1] : '\0';
    for (std::string_view two : kTwoChar) {
      if (line_[i_] == two[0] && second == two[1]) {
        i_ += 2;
        push(TokenKind::Punct, line_.substr(start, 2), start);
        return;
      }
    }
    char c = line_[i_];
    static constexpr std::string_view kOneChar = "()[]{},:;=.%<>+-*/&|^~@";
    if (kOneChar.find(c) == std::string_view::npos) source_.fail(here(), "unexpected character " + describeChar(c));
    if (c == '(' || c == '[' || c == '{') openBracket(c);
    if (c == ')' || c == ']' || c == '}') closeBracket(c);
    ++i_;
    push(TokenKind::Punct, line_.substr(start, 1), start);
  }

  void openBracket(char c) {
    if (stack_.size() >= limits_.maxNesting)
      source_.fail(here(), "brackets nested too deeply (limit " + std::to_string(limits_.maxNesting) + ")");
    stack_.push_back({c, here()});
  }

  void closeBracket(char c) {
    if (stack_.empty()) source_.fail(here(), std::string("unmatched '") + c + "'");
    const OpenBracket open = stack_.back();
    if (closerOf(open.bracket) != c)
      source_.fail(here(), std::string("mismatched '") + c + "': expected '" + closerOf(open.bracket) + "' to close '" +
                               open.bracket + "' from line " + std::to_string(open.pos.line) + ", column " +
                               std::to_string(open.pos.column));
    stack_.pop_back();
  }

  const Source& source_;
  const ReadLimits& limits_;
  std::vector<Token> tokens_;
  std::vector<std::unique_ptr<std::string>> decoded_;
  std::vector<OpenBracket> stack_;
  std::string_view line_;
  int lineNumber_ = 0;
  std::size_t i_ = 0;
};

}  // namespace

LexedLine lexLogicalLine(const Source& source, std::size_t& lineIndex, const ReadLimits& limits) {
  return Lexer(source, limits).run(lineIndex);
}

}  // namespace wb::text
