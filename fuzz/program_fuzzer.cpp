// fuzz/program_fuzzer.cpp: bytes -> gen::ByteChoices -> generator -> every property of
// fuzz/fuzz_checks.h: `early` equals S_par under the oracle and never fails, every other
// placement runs without crashing, early's memory peak <= end's, read(write(p)) == p.
// The generator makes only valid programs, so every input is a meaningful test; libFuzzer's
// mutations of the bytes steer the swarm policy, the op choices and the shapes.
#include <cstddef>
#include <cstdint>
#include <span>

#include "fuzz/fuzz_checks.h"
#include "fuzz/target.h"

namespace wb::fuzz {

std::optional<InputProgram> inputProgram(std::span<const std::uint8_t> data) {
  return InputProgram{generateFromBytes(data).program, programScope(data)};
}

}  // namespace wb::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // The generator consumes a few hundred bytes at most; longer inputs only repeat programs.
  if (size > 4096) return -1;
  std::span<const std::uint8_t> bytes(data, size);
  if (std::optional<wb::fuzz::Finding> f = wb::fuzz::checkGeneratedBytes(bytes)) {
    wb::gen::Generated generated = wb::fuzz::generateFromBytes(bytes);
    wb::fuzz::die(*f, &generated.program);
  }
  return 0;
}
