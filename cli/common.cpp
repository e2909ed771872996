// cli/common.cpp: program loading, atomic writes, provenance.
#include "cli/common.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

#include "core/placement.h"
#include "core/text.h"
#include "core/validate.h"

namespace wb::cli {

namespace {
constexpr std::size_t kMaxInputBytes = 64u << 20;
}

std::optional<std::string> readInput(const std::string& path) {
  std::string text;
  if (path == "-") {
    std::ostringstream buffer;
    buffer << std::cin.rdbuf();
    text = buffer.str();
  } else {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) {
      std::cerr << path << ": is a directory\n";
      return std::nullopt;
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      std::cerr << path << ": cannot open file\n";
      return std::nullopt;
    }
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  if (text.size() > kMaxInputBytes) {
    std::cerr << path << ": input is larger than " << (kMaxInputBytes >> 20) << " MiB\n";
    return std::nullopt;
  }
  return text;
}

std::optional<LoadedProgram> loadProgram(const std::string& path) {
  std::optional<std::string> text = readInput(path);
  if (!text) return std::nullopt;
  const std::string shownName = path == "-" ? "<stdin>" : path;
  Result<Program> read = readProgram(*text, shownName);
  if (!read.ok()) {
    std::cerr << formatAll(read.errors);
    return std::nullopt;
  }
  std::vector<Diagnostic> invalid = validate(*read);
  if (!invalid.empty()) {
    for (Diagnostic& d : invalid)
      if (d.file.empty()) d.file = shownName;
    std::cerr << formatAll(invalid);
    return std::nullopt;
  }
  // The program's own `Schemas:` section must parse too: an op whose declared schema is
  // malformed would otherwise be analysed as schema-less, silently.
  bool schemasOk = true;
  for (const std::string& line : read->schemas) {
    Result<Schema> schema = parseSchema(line, shownName + ": Schemas");
    if (!schema.ok()) {
      std::cerr << formatAll(schema.errors);
      schemasOk = false;
    }
  }
  if (!schemasOk) return std::nullopt;
  LoadedProgram loaded{path, std::move(*read), {}};
  loaded.schemas = schemasFor(loaded.program, builtinSchemas());
  return loaded;
}

bool writeFileAtomically(const std::string& path, const std::string& text) {
  const std::string temporary = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) return false;
    out << text;
    if (!out.flush()) return false;
  }
  std::error_code ec;
  std::filesystem::rename(temporary, path, ec);
  if (ec) std::filesystem::remove(temporary, ec);
  return !ec;
}

nlohmann::json provenance(const std::vector<std::string>& argv) {
  return {{"tool", "wbcheck"}, {"version", WBCHECK_VERSION}, {"command", argv}};
}

std::string provenanceComment(const std::vector<std::string>& argv) {
  std::string line = "# wbcheck " WBCHECK_VERSION ":";
  for (const std::string& a : argv) line += " " + a;
  return line + "\n";
}

bool stderrIsTerminal() { return ::isatty(STDERR_FILENO) != 0; }

}  // namespace wb::cli
