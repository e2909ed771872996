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

class SpecLineParser : LineCursor {
 public:
  SpecLineParser(const Source& source, std::size_t lineIndex, std::size_t indent)
      : LineCursor(source.line(lineIndex), lineIndex, indent) {}

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

};

}  // namespace

bool readCommonSpecLine(const Source& source, std::size_t lineIndex, std::size_t indent, SpecLine& out) {
  return SpecLineParser(source, lineIndex, indent).run(out);
}

}  // namespace wb::text
