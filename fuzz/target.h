// fuzz/target.h: what each fuzz target defines besides LLVMFuzzerTestOneInput, for the replay
// driver's `--print` and `--shrink` modes (fuzz/replay_main.cpp). The libFuzzer builds link
// these too but never call them.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "core/ir.h"
#include "fuzz/fuzz_checks.h"

namespace wb::fuzz {

// The program a fuzz input denotes (program_fuzzer, placement_fuzzer: the generated program;
// text_program_fuzzer: the program read, if it validates) and the scope the target checks it
// with; nullopt when the input denotes no program, and always for text_fuzzer, whose findings
// are about the text itself.
struct InputProgram {
  Program program;
  CheckScope scope;
};
std::optional<InputProgram> inputProgram(std::span<const std::uint8_t> data);

}  // namespace wb::fuzz
