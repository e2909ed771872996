// cli/common.h: what every wbcheck subcommand shares: exit codes, loading a program file,
// and the provenance stamp every artifact carries.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "core/ir.h"
#include "core/schema.h"

namespace wb::cli {

// The exit codes of DESIGN §12, everywhere.
enum ExitCode : int { kHolds = 0, kViolated = 1, kInputError = 2, kUnknown = 3 };

// A program read from a file (or `-` for standard input), validated, with the schemas it is
// analysed with. On failure the diagnostics have been printed to stderr.
struct LoadedProgram {
  std::string path;
  Program program;
  SchemaTable schemas;
};
std::optional<LoadedProgram> loadProgram(const std::string& path);

// Reads a whole file or standard input, with a size cap; nullopt (and a message) on failure.
std::optional<std::string> readInput(const std::string& path);

// Writes `text` to `path` atomically (temporary file in the same directory, then rename).
bool writeFileAtomically(const std::string& path, const std::string& text);

// {"tool": "wbcheck", "version": ..., "command": [...]} for every JSON artifact.
nlohmann::json provenance(const std::vector<std::string>& argv);
// The same as a `#` comment line for text artifacts.
std::string provenanceComment(const std::vector<std::string>& argv);

// True when stderr is a terminal (progress lines are shown only then).
bool stderrIsTerminal();

}  // namespace wb::cli
