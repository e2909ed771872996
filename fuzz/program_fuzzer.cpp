// fuzz/program_fuzzer.cpp: bytes -> gen::ByteChoices -> generator -> the oracle: `early` equals
// S_par (and does not fail) on every program the generator makes, in both view modes, on two
// input sets seeded by the bytes; and the generator's program validates. The other properties
// of generated programs are placement_fuzzer's and model_fuzzer's.
// The generator makes only valid programs, so every input is a meaningful test; libFuzzer's
// mutations of the bytes steer the swarm policy, the op choices and the shapes.
#include <cstddef>
#include <cstdint>
#include <span>

#include "fuzz/fuzz_checks.h"
#include "fuzz/target.h"

namespace wb::fuzz {

namespace {

CheckScope scopeOf(std::span<const std::uint8_t> bytes) {
  CheckScope scope;
  scope.roundTrip = false;
  scope.placements = false;
  scope.models = false;
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
