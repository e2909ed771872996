// fuzz/mutator_selftest.cpp: the custom mutator of text_program_fuzzer, run deterministically
// under ctest in every build. For every file given (directories recursively) and seeds
// 0..N-1, the mutated text must read back as a valid program (the mutator prints only valid
// programs) and pass every check of text_program_fuzzer, mutating it again through the
// mutator's memo (as the fuzzer does) must print what mutating a fresh read of it prints, and
// the mutator must keep programs small: a mutant has at most max(the input's body nodes,
// kMutatorMaxBodyNodes + 1) (one edit may cross the bound; after it only reductions apply). A
// finding aborts with its message, as the fuzzer would.
//   fuzz_mutator_selftest SEEDS FILE|DIR...
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "fuzz/fuzz_checks.h"
#include "fuzz/mutator.h"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s SEEDS FILE|DIR...\n", argv[0]);
    return 2;
  }
  const long seeds = std::strtol(argv[1], nullptr, 10);
  std::vector<std::filesystem::path> files;
  for (int i = 2; i < argc; ++i) {
    std::error_code ec;
    if (std::filesystem::is_directory(argv[i], ec)) {
      for (const auto& e : std::filesystem::recursive_directory_iterator(argv[i]))
        if (e.is_regular_file()) files.push_back(e.path());
    } else {
      files.emplace_back(argv[i]);
    }
  }
  std::sort(files.begin(), files.end());
  long mutated = 0, programs = 0, shrunk = 0;
  for (const auto& file : files) {
    std::ifstream in(file, std::ios::binary);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::optional<wb::Program> input = wb::fuzz::validProgramFromText(text);
    programs += input.has_value();
    const std::size_t bound = std::max(input ? wb::bodyNodeCount(*input) : 0, wb::fuzz::kMutatorMaxBodyNodes + 1);
    for (long seed = 0; seed < seeds; ++seed) {
      wb::fuzz::MutationMemo memo;
      const std::string out = wb::fuzz::mutateText(text, static_cast<std::uint32_t>(seed), memo);
      const std::optional<wb::Program> mutant = wb::fuzz::validProgramFromText(out);
      if (!mutant)
        wb::fuzz::die({"mutator output invalid", file.string() + " seed " + std::to_string(seed) + ":\n" + out});
      if (wb::bodyNodeCount(*mutant) > bound)
        wb::fuzz::die({"mutator grows a program past its bound",
                       file.string() + " seed " + std::to_string(seed) + ": " + std::to_string(wb::bodyNodeCount(*mutant)) +
                           " body nodes, at most " + std::to_string(bound) + " allowed:\n" + out});
      shrunk += input && wb::bodyNodeCount(*mutant) < wb::bodyNodeCount(*input);
      // Mutating the output again, as libFuzzer does, must give what a fresh read of it gives.
      const std::string again = wb::fuzz::mutateText(out, static_cast<std::uint32_t>(seed + 1));
      if (wb::fuzz::mutateText(out, static_cast<std::uint32_t>(seed + 1), memo) != again)
        wb::fuzz::die({"mutation memo changes the output", file.string() + " seed " + std::to_string(seed) + ":\n" + out});
      if (std::optional<wb::fuzz::Finding> f = wb::fuzz::checkText(out)) {
        f->details = file.string() + " seed " + std::to_string(seed) + ":\n" + f->details;
        const std::optional<wb::Program> program = wb::fuzz::validProgramFromText(out);
        wb::fuzz::die(*f, program ? &*program : nullptr);
      }
      ++mutated;
    }
  }
  std::printf("mutator: %ld mutated programs from %zu files (%ld of them programs, %ld mutants smaller) pass\n",
              mutated, files.size(), programs, shrunk);
  return files.empty() ? 1 : 0;
}
