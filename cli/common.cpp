// cli/common.cpp: program loading, atomic writes, provenance.
#include "cli/common.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <utility>

#include "core/placement.h"
#include "core/text.h"
#include "core/validate.h"

namespace wb::cli {

void addInputOptions(CLI::App& command, InputOptions& options) {
  command.add_option("--max-input-mb", options.maxInputMb, "refuse inputs larger than this many MiB")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 20));
}

passcmd::ExternalPass PassCmdOptions::pass() const {
  passcmd::ExternalPass pass;
  pass.command = command;
  pass.limits.timeout = std::chrono::milliseconds(timeoutMs);
  pass.persistent = persistent;
  pass.form = static_cast<ProgramForm>(form);
  return pass;
}

void addPassCmdOptions(CLI::App& command, PassCmdOptions& options, CLI::Option* placement, bool persistent) {
  CLI::Option* pass = command.add_option(
      "--pass-cmd", options.command,
      "the pass under test is this shell command instead: it reads the program (form 1, or --pass-form) on stdin and prints the "
      "placed program on stdout (docs/pass-protocol.md)");
  if (placement) pass->excludes(placement);
  command.add_option("--pass-timeout-ms", options.timeoutMs, "time limit of one run of --pass-cmd, in ms")
      ->capture_default_str()
      ->check(CLI::Range(1u, 3'600'000u));
  command
      .add_option("--pass-form", options.form,
                  "the printed form --pass-cmd gets on stdin: 1 print(exported_program) (the default, as wbcheck gen "
                  "prints it); 2 graph_module.code (bare def forward, FX's `;  x = None` deletions, with "
                  "print_readable's type annotations) followed by the graph signature; 3 str(graph) (graph(): "
                  "%name : [num_users=N] = call_function[target=...](args = ..., kwargs = ...)) followed by the "
                  "graph signature. PyTorch prints forms 2 and 3 without a signature, which a write-back pass "
                  "needs (the mutation outputs): wbcheck always sends it. Forms 2 and 3 print one graph: a program "
                  "with submodules is refused (exit 2). The answer may be in any form (docs/pass-protocol.md)")
      ->check(CLI::IsMember({1, 2, 3}))
      ->needs(pass);
  if (persistent)
    command.add_flag("--persistent", options.persistent,
                     "speak the persistent protocol with --pass-cmd: one process, programs in frames (docs/pass-protocol.md)");
}

namespace {
constexpr const char* kBehavioursHelp =
    "behaviour draws of the ops without a schema per check: draw 0 reads their tensor arguments and writes none, "
    "the others also write them and return views of them, as the contract allows";
}  // namespace

void addBehavioursOption(CLI::App& command, int& behaviours) {
  command.add_option("--behaviours", behaviours, kBehavioursHelp)->capture_default_str()->check(CLI::Range(1, 64));
}

void addSmtOptions(CLI::App& command, proofs::SmtOptions& smt, bool memoryAndDump, const std::string& helpPrefix) {
  command.add_option("--timeout-ms", smt.timeoutMs, helpPrefix + "wall-clock guard per solver query, in ms (0: none)")
      ->capture_default_str();
  command.add_option("--rlimit", smt.rlimit, helpPrefix + "Z3 resource limit per query, deterministic (0: none)")
      ->capture_default_str()
      ->check(CLI::Range(std::uint64_t{0}, std::uint64_t{0xffffffffu}));
  if (!memoryAndDump) return;
  command.add_option("--memory-mb", smt.memoryMb, helpPrefix + "Z3 memory limit in MB, building and solving the queries (0: none)")
      ->capture_default_str();
  command.add_option("--smt-dump", smt.dumpDir, helpPrefix + "write every query to DIR as an .smt2 file `z3 FILE` answers");
}

void addBehavioursOption(CLI::App& command, std::optional<int>& behaviours) {
  command.add_option("--behaviours", behaviours, std::string(kBehavioursHelp) + " (default: the file header's, else 4)")
      ->check(CLI::Range(1, 64));
}

InputText::InputText(InputText&& other) noexcept
    : owned_(std::move(other.owned_)), mapped_(std::exchange(other.mapped_, nullptr)),
      mappedSize_(std::exchange(other.mappedSize_, 0)) {}

InputText& InputText::operator=(InputText&& other) noexcept {
  if (this != &other) {
    if (mapped_) ::munmap(const_cast<char*>(mapped_), mappedSize_);
    owned_ = std::move(other.owned_);
    mapped_ = std::exchange(other.mapped_, nullptr);
    mappedSize_ = std::exchange(other.mappedSize_, 0);
  }
  return *this;
}

InputText::~InputText() {
  if (mapped_) ::munmap(const_cast<char*>(mapped_), mappedSize_);
}

namespace {

bool tooLarge(const std::string& path, std::size_t bytes, const InputOptions& options) {
  if (bytes <= (options.maxInputMb << 20)) return false;
  std::cerr << path << ": input of " << bytes << " bytes is larger than " << options.maxInputMb
            << " MiB (raise --max-input-mb to read it)\n";
  return true;
}

// Reads what a stream gives, stopping one byte past the cap.
std::optional<std::string> readStream(std::istream& in, const std::string& path, const InputOptions& options) {
  std::string text;
  char buffer[1 << 16];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
    text.append(buffer, static_cast<std::size_t>(in.gcount()));
    if (tooLarge(path, text.size(), options)) return std::nullopt;
  }
  return text;
}

// Line `line` (1-based) of `text`, without its terminator; empty past the end.
std::string_view lineOf(std::string_view text, int line) {
  for (int l = 1; l < line; ++l) {
    const std::size_t newline = text.find('\n');
    if (newline == std::string_view::npos) return {};
    text.remove_prefix(newline + 1);
  }
  text = text.substr(0, text.find('\n'));
  if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
  return text;
}

}  // namespace

std::optional<InputText> readInput(const std::string& path, const InputOptions& options) {
  InputText input;
  if (path == "-") {
    std::optional<std::string> text = readStream(std::cin, "<stdin>", options);
    if (!text) return std::nullopt;
    input.owned_ = std::move(*text);
    return input;
  }
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    std::cerr << path << ": cannot open file (" << std::strerror(errno) << ")\n";
    return std::nullopt;
  }
  struct stat info {};
  if (::fstat(fd, &info) != 0 || S_ISDIR(info.st_mode)) {
    std::cerr << path << (S_ISDIR(info.st_mode) ? ": is a directory\n" : ": cannot read file\n");
    ::close(fd);
    return std::nullopt;
  }
  if (S_ISREG(info.st_mode) && info.st_size > 0) {
    const auto size = static_cast<std::size_t>(info.st_size);
    if (tooLarge(path, size, options)) {
      ::close(fd);
      return std::nullopt;
    }
    void* mapped = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    ::close(fd);
    if (mapped == MAP_FAILED) {
      std::cerr << path << ": cannot map file (" << std::strerror(errno) << ")\n";
      return std::nullopt;
    }
    ::madvise(mapped, size, MADV_SEQUENTIAL);
    input.mapped_ = static_cast<const char*>(mapped);
    input.mappedSize_ = size;
    return input;
  }
  ::close(fd);
  // Empty files, pipes, character devices: read as a stream.
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::cerr << path << ": cannot open file\n";
    return std::nullopt;
  }
  std::optional<std::string> text = readStream(in, path, options);
  if (!text) return std::nullopt;
  input.owned_ = std::move(*text);
  return input;
}

std::optional<LoadedProgram> loadProgram(const std::string& path, const InputOptions& options) {
  std::optional<InputText> input = readInput(path, options);
  if (!input) return std::nullopt;
  return loadProgram(path, input->text(), options);
}

std::optional<LoadedProgram> loadProgram(const std::string& path, std::string_view text, const InputOptions& options) {
  const std::string shownName = path == "-" ? "<stdin>" : path;
  ReadLimits limits;
  limits.maxBytes = options.maxInputMb << 20;
  std::vector<SourceLocation> nodeLocations;
  Result<Program> read = readProgram(text, shownName, limits, &nodeLocations);
  if (!read.ok()) {
    std::cerr << formatAll(read.errors);
    return std::nullopt;
  }
  std::vector<Diagnostic> invalid = validate(*read, ValidateLimits{}, nodeLocations);
  if (!invalid.empty()) {
    for (Diagnostic& d : invalid) {
      if (d.file.empty()) d.file = shownName;
      if (d.line > 0 && d.lineText.empty()) d.lineText = std::string(lineOf(text, d.line));
    }
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

std::string shellWords(const std::vector<std::string>& argv) {
  std::string line;
  for (const std::string& a : argv) {
    const bool plain = !a.empty() && std::all_of(a.begin(), a.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || std::string_view("_./=:,+-@%").find(c) != std::string_view::npos;
    });
    std::string word = "'";
    for (char c : a) word += c == '\'' ? std::string("'\\''") : std::string(1, c);
    line += (line.empty() ? "" : " ") + (plain ? a : word + "'");
  }
  return line;
}

std::string provenanceComment(const std::vector<std::string>& argv) {
  return "# wbcheck " WBCHECK_VERSION ": " + shellWords(argv) + "\n";
}

bool stderrIsTerminal() { return ::isatty(STDERR_FILENO) != 0; }

}  // namespace wb::cli
