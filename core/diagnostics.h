// core/diagnostics.h: errors with a source position, and a Result type that carries them.
//
// Every input error in wbcheck is reported as `file:line:col: message`, followed by the
// offending line and a caret, and never as an exception escaping to the user or an abort.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace wb {

// A position in a text: 1-based line and column; 0 when unknown.
struct SourceLocation {
  int line = 0;
  int column = 0;
};

struct Diagnostic {
  std::string file;      // "-" for standard input, "<string>" for in-memory text
  int line = 0;          // 1-based; 0 when the error has no position (e.g. a whole-program check)
  int column = 0;        // 1-based
  std::string message;
  std::string lineText;  // the offending line, verbatim, for the echo

  // "file:line:col: message\n    <line>\n    ^" (the echo only when lineText is known).
  std::string format() const;
};

std::string formatAll(const std::vector<Diagnostic>& diagnostics);

// A value or the errors that prevented it.
template <typename T>
struct Result {
  std::optional<T> value;
  std::vector<Diagnostic> errors;

  static Result success(T v) { Result r; r.value = std::move(v); return r; }
  static Result failure(Diagnostic d) { Result r; r.errors.push_back(std::move(d)); return r; }
  static Result failure(std::vector<Diagnostic> ds) { Result r; r.errors = std::move(ds); return r; }

  bool ok() const { return value.has_value(); }
  explicit operator bool() const { return ok(); }
  T& operator*() { return *value; }
  const T& operator*() const { return *value; }
  T* operator->() { return &*value; }
  const T* operator->() const { return &*value; }
};

}  // namespace wb
