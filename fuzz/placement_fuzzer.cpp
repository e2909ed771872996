// fuzz/placement_fuzzer.cpp: bytes -> gen::ByteChoices -> generator -> every property of a
// generated program but the oracle (program_fuzzer's): read(write(p)) == p; every placement
// places without throwing, `early` never fails, `early` and `end` give valid programs, placing
// early's result again changes nothing; early's memory peak <= end's plus its clones. And the
// generator's program validates. The same bytes denote the same program as in program_fuzzer,
// so the two targets share their seed corpus.
#include <cstddef>
#include <cstdint>
#include <span>

#include "fuzz/fuzz_checks.h"
#include "fuzz/target.h"

namespace wb::fuzz {

namespace {

CheckScope scopeOf(std::span<const std::uint8_t> bytes) {
  CheckScope scope;
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
