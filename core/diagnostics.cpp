// core/diagnostics.cpp: formatting of positioned errors.
#include "core/diagnostics.h"

namespace wb {

std::string Diagnostic::format() const {
  std::string out = file.empty() ? std::string("<input>") : file;
  if (line > 0) {
    out += ":" + std::to_string(line);
    if (column > 0) out += ":" + std::to_string(column);
  }
  out += ": " + message;
  if (!lineText.empty()) {
    // Echo the line with control characters made visible, so binary garbage cannot garble the
    // terminal, and keep it bounded.
    std::string shown;
    for (char c : lineText.substr(0, 200)) {
      unsigned char u = static_cast<unsigned char>(c);
      if (u == '\t') shown += ' ';
      else if (u < 0x20 || u == 0x7f) shown += '?';
      else shown += c;
    }
    if (lineText.size() > 200) shown += "...";
    out += "\n    " + shown;
    if (column > 0 && static_cast<std::size_t>(column) <= shown.size() + 1)
      out += "\n    " + std::string(static_cast<std::size_t>(column - 1), ' ') + "^";
  }
  return out;
}

std::string formatAll(const std::vector<Diagnostic>& diagnostics) {
  std::string out;
  for (const Diagnostic& d : diagnostics) out += d.format() + "\n";
  return out;
}

}  // namespace wb
