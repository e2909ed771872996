// fuzz/text_program_fuzzer.cpp: bytes -> the program reader -> every property of a program it
// accepts that validates: read(write(p)) == p, every placement places (early and end validly,
// early idempotently), early's memory peak <= end's, and, when small enough to interpret,
// early == S_par under the oracle; the reader's own properties (text_fuzzer's) come with it.
// These are programs no generator policy makes (three printed forms, schema-less and custom
// ops, corpus printouts): in the libFuzzer build a structure-aware mutator (fuzz/mutator.h)
// edits the graph of inputs that are programs, alternating with libFuzzer's byte mutations.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <span>
#include <string_view>

#include "fuzz/fuzz_checks.h"
#include "fuzz/mutator.h"
#include "fuzz/target.h"

namespace wb::fuzz {

std::optional<InputProgram> inputProgram(std::span<const std::uint8_t> data) {
  std::string_view text(reinterpret_cast<const char*>(data.data()), data.size());
  std::optional<Program> program = validProgramFromText(text);
  if (!program) return std::nullopt;
  CheckScope scope = textScope(*program);
  return InputProgram{std::move(*program), scope};
}

}  // namespace wb::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // Inputs past 64 KiB add nothing a smaller one cannot reach, and slow the search.
  if (size > (64u << 10)) return -1;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  if (std::optional<wb::fuzz::Finding> f = wb::fuzz::checkText(text)) {
    // The reader itself may be what threw: then there is no program to show.
    std::optional<wb::Program> program;
    try {
      program = wb::fuzz::validProgramFromText(text);
    } catch (...) {
    }
    wb::fuzz::die(*f, program ? &*program : nullptr);
  }
  return 0;
}

#ifdef WBCHECK_LIBFUZZER
// libFuzzer's own mutator, callable from a custom one.
extern "C" std::size_t LLVMFuzzerMutate(std::uint8_t* data, std::size_t size, std::size_t maxSize);

// Once a custom mutator exists libFuzzer calls nothing else, so a third of the steps are its
// byte mutations: the reader's error paths need malformed text, which graph edits never make.
extern "C" std::size_t LLVMFuzzerCustomMutator(std::uint8_t* data, std::size_t size, std::size_t maxSize,
                                               unsigned int seed) {
  if (seed % 3 == 0) return LLVMFuzzerMutate(data, size, maxSize);
  std::string text = wb::fuzz::mutateText(std::string_view(reinterpret_cast<const char*>(data), size), seed);
  if (text.size() > maxSize) return LLVMFuzzerMutate(data, size, maxSize);
  std::memcpy(data, text.data(), text.size());
  return text.size();
}
#endif
