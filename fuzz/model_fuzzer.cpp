// fuzz/model_fuzzer.cpp: bytes -> gen::ByteChoices -> generator -> the models of real code
// (upstream, every version of PR #20744, draft #13857) place the program without throwing. Their
// wrong or invalid results are their documented bugs (the oracle's table, corpus/regressions),
// so crash-freedom is what is asked of them. And read(write(p)) == p (the round trip: here
// rather than in placement_fuzzer, which is the slower of the two), and the generator's program
// validates. The same bytes denote the same program as in program_fuzzer and placement_fuzzer
// (shared seed corpus).
#include <cstddef>
#include <cstdint>
#include <span>

#include "fuzz/fuzz_checks.h"
#include "fuzz/target.h"

namespace wb::fuzz {

namespace {

CheckScope scopeOf(std::span<const std::uint8_t> bytes) {
  CheckScope scope;
  scope.placements = false;
  scope.oracle = false;
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
