// fuzz/replay_main.cpp: a plain driver around one fuzz target's LLVMFuzzerTestOneInput, so every
// build (g++ included, no libFuzzer) replays the corpora under ctest, and so a crash found by
// libFuzzer can be turned back into a program file.
//
//   <target>_replay FILE|DIR...   run every file (directories recursively, sorted); a finding
//                                 aborts with its message, which ctest reports as a failure
//   <target>_replay --print FILE  write the program the input denotes, in form 1, after a
//                                 `# seed:` line (the oracle seed the target uses); fails when
//                                 it denotes none (always for text_fuzzer: its findings are
//                                 about the bytes)
//   <target>_replay --shrink FILE reduce that program while it keeps failing the same property,
//                                 and write it in form 1 with a header naming the property
// Arguments starting with '-' that are not modes are ignored, as libFuzzer's flags would be.
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "core/text.h"
#include "fuzz/fuzz_checks.h"
#include "fuzz/target.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

std::optional<std::vector<std::uint8_t>> readBytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "replay: cannot open %s\n", path.c_str());
    return std::nullopt;
  }
  return std::vector<std::uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::optional<wb::fuzz::InputProgram> programOf(const char* path) {
  std::optional<std::vector<std::uint8_t>> bytes = readBytes(path);
  if (!bytes) return std::nullopt;
  std::optional<wb::fuzz::InputProgram> program = wb::fuzz::inputProgram(*bytes);
  if (!program) std::fprintf(stderr, "replay: %s denotes no valid program\n", path);
  return program;
}

// Lines of `text` as `# ` comments (a finding's details are multi-line).
std::string commented(const std::string& text) {
  std::istringstream in(text);
  std::string out, line;
  while (std::getline(in, line)) out += line.empty() ? "#\n" : "# " + line + "\n";
  return out;
}

int printMode(const char* path) {
  std::optional<wb::fuzz::InputProgram> program = programOf(path);
  if (!program) return 1;
  // The seed header is what `wbcheck shrink` reads to run the oracle on the same inputs.
  std::printf("# seed: %llu\n", static_cast<unsigned long long>(program->scope.seed));
  std::fputs(wb::writeProgram(program->program).c_str(), stdout);
  return 0;
}

int shrinkMode(const char* path) {
  std::optional<wb::fuzz::InputProgram> program = programOf(path);
  if (!program) return 1;
  std::optional<wb::fuzz::Shrunk> shrunk = wb::fuzz::shrink(program->program, program->scope);
  if (!shrunk) {
    std::fprintf(stderr, "replay: %s: no property fails on this program\n", path);
    return 1;
  }
  std::string out = "# Fuzz finding: " + shrunk->finding.property + " (from " +
                    std::filesystem::path(path).filename().string() + ", oracle seed " +
                    std::to_string(program->scope.seed) + ", reduced in " + std::to_string(shrunk->tests) +
                    " tests" + (shrunk->fixpoint ? "" : ", not to a fixpoint") + ")\n";
  out += commented(shrunk->finding.details);
  out += wb::writeProgram(shrunk->program);
  std::fputs(out.c_str(), stdout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "--print") == 0) return printMode(argv[2]);
  if (argc == 3 && std::strcmp(argv[1], "--shrink") == 0) return shrinkMode(argv[2]);

  std::vector<std::filesystem::path> files;
  for (int i = 1; i < argc; ++i) {
    if (argv[i][0] == '-') continue;
    std::filesystem::path root(argv[i]);
    std::error_code ec;
    if (std::filesystem::is_directory(root, ec)) {
      for (const auto& entry : std::filesystem::recursive_directory_iterator(root))
        if (entry.is_regular_file()) files.push_back(entry.path());
    } else {
      files.push_back(root);
    }
  }
  if (files.empty()) {
    std::fprintf(stderr, "usage: %s FILE|DIR... | --print FILE | --shrink FILE\n", argv[0]);
    return 2;
  }
  std::sort(files.begin(), files.end());

  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  double slowestMs = 0;
  std::filesystem::path slowest;
  int unreadable = 0;
  for (const auto& file : files) {
    // Named before it runs: a finding aborts the process, and the log must say which input.
    std::fprintf(stderr, "replay: %s\n", file.c_str());
    std::optional<std::vector<std::uint8_t>> bytes = readBytes(file);
    if (!bytes) {
      ++unreadable;
      continue;
    }
    const Clock::time_point t0 = Clock::now();
    LLVMFuzzerTestOneInput(bytes->data(), bytes->size());
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    if (ms > slowestMs) slowestMs = ms, slowest = file;
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  std::printf("replayed %zu inputs in %.2f s (slowest %.1f ms: %s)\n", files.size() - unreadable, seconds, slowestMs,
              slowest.c_str());
  return unreadable == 0 ? 0 : 1;
}
