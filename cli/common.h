// cli/common.h: what every wbcheck subcommand shares: exit codes, loading a program file,
// and the provenance stamp every artifact carries.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/ir.h"
#include "core/schema.h"
#include "passcmd/external_pass.h"
#include "proofs/smt.h"

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
// How much input a command reads at most: `--max-input-mb`, on every command that reads a
// program. The default is far above any realistic program (a 10^6-node printout is ~74 MB) and
// only there to refuse a wrong file (a disk image, /dev/zero) with a message.
struct InputOptions {
  std::size_t maxInputMb = 1024;
};
void addInputOptions(CLI::App& command, InputOptions& options);

// --pass-cmd CMD and --pass-timeout-ms T (check, fuzz, shrink): the pass under test as an
// external command (docs/pass-protocol.md) instead of --placement.
struct PassCmdOptions {
  std::string command;  // empty: not given
  std::uint32_t timeoutMs = static_cast<std::uint32_t>(passcmd::ProcessLimits{}.timeout.count());
  bool persistent = false;  // fuzz and shrink: the persistent protocol
  int form = 1;  // --pass-form: a ProgramForm (1, 2 or 3)
  passcmd::ExternalPass pass() const;
};
// `placement`: the command's --placement option, which --pass-cmd excludes. `persistent`: offer
// --persistent (commands that run the pass on many programs).
void addPassCmdOptions(CLI::App& command, PassCmdOptions& options, CLI::Option* placement, bool persistent);

// `--behaviours N` (1..64): the behaviour draws of the ops without a schema the oracle tries per
// check (oracle::CheckOptions::behaviours), on every command that runs the oracle. The
// optional form (shrink, draw) leaves it unset when not given: the file header's then counts.
void addBehavioursOption(CLI::App& command, int& behaviours);
void addBehavioursOption(CLI::App& command, std::optional<int>& behaviours);

// The solver's limits (proofs::SmtOptions) on every command that runs Z3: --timeout-ms and
// --rlimit (Z3 takes a 32-bit rlimit: a larger one is a usage error, exit 2), and with
// `memoryAndDump` --memory-mb and --smt-dump. `helpPrefix` starts each help text ("with --validate: ").
void addSmtOptions(CLI::App& command, proofs::SmtOptions& smt, bool memoryAndDump, const std::string& helpPrefix = "");

// A whole input. A regular file is mapped into memory (read in place, never copied); standard
// input and other files are read into a string.
class InputText {
 public:
  InputText() = default;
  InputText(InputText&& other) noexcept;
  InputText& operator=(InputText&& other) noexcept;
  InputText(const InputText&) = delete;
  InputText& operator=(const InputText&) = delete;
  ~InputText();

  std::string_view text() const { return mapped_ ? std::string_view(mapped_, mappedSize_) : std::string_view(owned_); }

 private:
  friend std::optional<InputText> readInput(const std::string& path, const InputOptions& options);
  std::string owned_;
  const char* mapped_ = nullptr;
  std::size_t mappedSize_ = 0;
};

std::optional<LoadedProgram> loadProgram(const std::string& path, const InputOptions& options = {});
// The same for a text already read from `path` (a command that reads the file's header too
// reads it once: standard input cannot be read twice).
std::optional<LoadedProgram> loadProgram(const std::string& path, std::string_view text, const InputOptions& options);

// Reads a whole file or standard input, up to the size cap; nullopt (and a message) on failure.
std::optional<InputText> readInput(const std::string& path, const InputOptions& options = {});

// Writes `text` to `path` atomically (temporary file in the same directory, then rename).
bool writeFileAtomically(const std::string& path, const std::string& text);

// {"tool": "wbcheck", "version": ..., "command": [...]} for every JSON artifact.
nlohmann::json provenance(const std::vector<std::string>& argv);
// The words of a command line, each quoted for a POSIX shell where it needs it: a line that runs
// again as it ran (`--pass-cmd 'python3 end.py'`).
std::string shellWords(const std::vector<std::string>& argv);
// The same as a `#` comment line for text artifacts.
std::string provenanceComment(const std::vector<std::string>& argv);

// True when stderr is a terminal (progress lines are shown only then).
bool stderrIsTerminal();

}  // namespace wb::cli
