// fuzz/generated_fuzzer.cpp: the five targets over generated programs, one source built five
// times (fuzz/CMakeLists.txt defines WBCHECK_GENERATED_TARGET as the target's name): bytes ->
// gen::ByteChoices -> generator (at most kFuzzMaxNodes body nodes) -> the properties of one
// group. The generator makes only valid programs, so every input is a meaningful test;
// libFuzzer's mutations of the bytes steer the swarm policy, the op choices and the shapes. The
// same bytes denote the same program in the five targets, so they share their seed corpus
// (fuzz/corpus/generator), and every target checks that the generator's program validates.
//
//   program_fuzzer    the oracle: `early` equals S_par (and does not fail) in both view modes,
//                     on two input sets seeded by the bytes.
//   placement_fuzzer  our placements: `early` and `end` place without throwing, `early` never
//                     fails, both give valid programs, placing early's result again changes
//                     nothing.
//   memplan_fuzzer    the memory plans of `early` and `end` build, and early's peak <= end's
//                     plus its clones (both placed without throwing, early without failing).
//   model_fuzzer      the models of real code (upstream, every version of PR #20744, draft
//                     #13857) place without throwing (their wrong results are their documented
//                     bugs, so crash-freedom is what is asked of them).
//   round_trip_fuzzer read(write(p)) == p: the printed program is the program (what fuzz/ci-fuzz.sh
//                     relies on when it prints a finding's program).
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "fuzz/fuzz_checks.h"
#include "fuzz/target.h"

#ifndef WBCHECK_GENERATED_TARGET
#error "fuzz/CMakeLists.txt defines WBCHECK_GENERATED_TARGET: program_fuzzer, placement_fuzzer, memplan_fuzzer, model_fuzzer or round_trip_fuzzer"
#endif

namespace wb::fuzz {

namespace {

// The property group of this target, chosen when it is compiled.
constexpr CheckScope kProperties = propertyGroup(WBCHECK_GENERATED_TARGET);
static_assert(checksSomething(kProperties) && !std::string_view(WBCHECK_GENERATED_TARGET).starts_with("text_"),
              "WBCHECK_GENERATED_TARGET names no target over generated programs");

CheckScope scopeOf(std::span<const std::uint8_t> bytes) {
  CheckScope scope = kProperties;
  scope.seed = seedOfBytes(bytes);
  return scope;
}

}  // namespace

std::optional<InputProgram> inputProgram(std::span<const std::uint8_t> data) {
  return InputProgram{generateFromBytes(data).program, scopeOf(data)};
}

}  // namespace wb::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> bytes(data, size);
  return wb::fuzz::testGeneratedBytes(bytes, wb::fuzz::scopeOf(bytes));
}
