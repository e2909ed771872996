// fuzz/placement_fuzzer.cpp: bytes -> gen::ByteChoices -> generator -> the properties of our
// placements on a generated program: `early` and `end` place without throwing, `early` never
// fails, both give valid programs, placing early's result again changes nothing; early's memory
// peak <= end's plus its clones. And the generator's program validates. The oracle is
// program_fuzzer's; the models' crash-freedom and the round trip are model_fuzzer's. The same
// bytes denote the same program in the three targets, so they share their seed corpus.
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
  scope.oracle = false;
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
