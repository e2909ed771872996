// fuzz/text_fuzzer.cpp: bytes -> the program reader (core/text.h), alone. The reader must never
// crash, hang or recurse without bound, and must reject with a positioned diagnostic; on a
// program it accepts, validate() and the parsing of its own `Schemas:` lines must not throw.
// What is then asked of an accepted program is text_program_fuzzer's: this target stays
// cheap, because untrusted text should have millions of executions behind it. libFuzzer's own
// byte mutations with the dictionary (text.dict) reach the reader's error paths.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "fuzz/fuzz_checks.h"
#include "fuzz/target.h"

namespace wb::fuzz {

// The reader's findings are about the text itself, not a program: the raw input is the
// regression (fuzz/corpus/text/regressions/), so --print and --shrink have nothing to do.
std::optional<InputProgram> inputProgram(std::span<const std::uint8_t>) { return std::nullopt; }

}  // namespace wb::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // Inputs past 64 KiB add nothing a smaller one cannot reach, and slow the search.
  if (size > (64u << 10)) return -1;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  if (std::optional<wb::fuzz::Finding> f = wb::fuzz::checkReader(text)) wb::fuzz::die(*f);
  return 0;
}
