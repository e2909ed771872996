// core/text_spec_line.cpp: the common line of a text graph signature, read without tokens
// (readCommonSpecLine, text_syntax.h).
//
// Every program wbcheck prints, and every one a pass command answers with, ends in a signature
// of a dozen lines of one shape:
//     b_cache: BUFFER target='cache' persistent=True
//     add: USER_OUTPUT
// Through the lexer each is a vector of tokens before readTextSpec looks at it; on a program of
// 15 nodes the signature was a quarter of the reader's instructions. Here the line's characters
// are read in place, by the lexer's rules (the same whitespace, names and strings), restricted to
// this grammar:
//
//   line  := NAME ':' KIND {field}                     (NAME, KIND: a name token each)
//   field := KEY '=' VALUE                             (KEY: target or persistent)
//   VALUE := STRING | None | True | False              (a string without escapes)
//
// and only with values readTextSpec accepts for the key. Anything else -- a comment, a name
// missing, `:=`, an unknown key, a value of the wrong kind, an escape, a second string next to
// the first, any other character -- makes the line go to the general path, which reads it or
// says what is wrong with it.
#include "core/text_syntax.h"

namespace wb::text {

namespace {

class SpecLineParser {
 public:
  SpecLineParser(const Source& source, std::size_t lineIndex, std::size_t indent)
      : line_(source.line(lineIndex)), lineNumber_(static_cast<int>(lineIndex + 1)), i_(indent) {}

  bool run(SpecLine& out) {
    out.pos = here();
    out.name = scanName();
    if (out.name.empty()) return false;
    skipSpace();
    // `:=` and `==` are tokens of their own, not ':' or '=': here the name that must follow
    // is missing, and the line goes to the general path.
    if (peek() != ':') return false;
    ++i_;
    skipSpace();
    out.kindPos = here();
    out.kind = scanName();
    if (out.kind.empty()) return false;
    out.target.reset();
    out.persistent.reset();
    while (true) {
      skipSpace();
      if (i_ == line_.size()) return true;
      const std::string_view key = scanName();
      const bool isTarget = key == "target";
      if (!isTarget && key != "persistent") return false;
      skipSpace();
      if (peek() != '=') return false;
      ++i_;
      skipSpace();
      if (isTarget && (peek() == '\'' || peek() == '"')) {
        std::string_view value;
        if (!scanString(value)) return false;
        out.target = value;
        continue;
      }
      const std::string_view value = scanName();
      if (value == "None") {
        if (isTarget) out.target.reset();
        else out.persistent.reset();
      } else if (!isTarget && (value == "True" || value == "False")) {
        out.persistent = value == "True";
      } else {
        return false;  // the general path's "bad value"
      }
    }
  }

 private:
  char peek() const { return i_ < line_.size() ? line_[i_] : '\0'; }
  Pos here() const { return {lineNumber_, static_cast<int>(i_ + 1)}; }
  void skipSpace() {
    while (i_ < line_.size() && isSpace(line_[i_])) ++i_;
  }
  std::string_view scanName() {
    if (!isNameStart(peek())) return {};
    const std::size_t start = i_;
    while (i_ < line_.size() && isNameChar(line_[i_])) ++i_;
    return line_.substr(start, i_ - start);
  }
  // A string without escapes (the lexer's view of the line), at a quote.
  bool scanString(std::string_view& value) {
    const char quote = line_[i_];
    std::size_t close = i_ + 1;
    while (close < line_.size() && line_[close] != quote && line_[close] != '\\') ++close;
    if (close >= line_.size() || line_[close] != quote) return false;
    value = line_.substr(i_ + 1, close - i_ - 1);
    i_ = close + 1;
    return true;
  }

  std::string_view line_;
  int lineNumber_;
  std::size_t i_;
};

}  // namespace

bool readCommonSpecLine(const Source& source, std::size_t lineIndex, std::size_t indent, SpecLine& out) {
  return SpecLineParser(source, lineIndex, indent).run(out);
}

}  // namespace wb::text
