// fuzz/read_fuzzer.cpp: the four targets over programs read from text, one source built four
// times (fuzz/CMakeLists.txt defines WBCHECK_READ_TARGET as the target's name): bytes -> the
// program reader -> the properties of one group on a program it accepts that validates (and
// whose own schemas parse). The reader's own properties (text_fuzzer's) come with each. These
// are programs no generator policy makes (three printed forms, schema-less and custom ops,
// corpus printouts): in the libFuzzer build a structure-aware mutator (fuzz/mutator.h) edits the
// graph of inputs that are programs, alternating with libFuzzer's byte mutations. The four
// share their seed corpus (fuzz/corpus/text and corpus/) and mirror the generator's targets:
//
//   text_program_fuzzer    the oracle (`early` == S_par, `early` does not fail) when the program
//                          is small enough to interpret (textProgramIsSmall).
//   text_placement_fuzzer  our placements: `early` and `end` place without throwing, `early`
//                          never fails, both give valid programs, placing early's result again
//                          changes nothing.
//   text_memplan_fuzzer    the memory plans: `early` and `end` place without throwing, `early`
//                          never fails; early's memory peak <= end's plus its clones.
//   text_model_fuzzer      the models of real code place without throwing; read(write(p)) == p.
//
// One group per target keeps an execution cheap under ASan+UBSan (fuzz/README.md, "Speed");
// fuzz_mutator_selftest checks every group on the mutator's output.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <span>
#include <string_view>

#include "fuzz/fuzz_checks.h"
#include "fuzz/mutator.h"
#include "fuzz/target.h"

#ifndef WBCHECK_READ_TARGET
#error "fuzz/CMakeLists.txt defines WBCHECK_READ_TARGET: text_program_fuzzer, text_placement_fuzzer, text_memplan_fuzzer or text_model_fuzzer"
#endif

namespace wb::fuzz {

namespace {

// The property group of this target, chosen when it is compiled.
constexpr CheckScope kProperties = propertyGroup(WBCHECK_READ_TARGET);
static_assert(checksSomething(kProperties) && std::string_view(WBCHECK_READ_TARGET).starts_with("text_"),
              "WBCHECK_READ_TARGET names no target over programs read from text");

}  // namespace

std::optional<InputProgram> inputProgram(std::span<const std::uint8_t> data) {
  std::string_view text(reinterpret_cast<const char*>(data.data()), data.size());
  std::optional<Program> program = validProgramFromText(text);
  if (!program) return std::nullopt;
  CheckScope scope = textScope(*program, kProperties);
  return InputProgram{std::move(*program), scope};
}

}  // namespace wb::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // Inputs past 64 KiB add nothing a smaller one cannot reach, and slow the search.
  if (size > (64u << 10)) return -1;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  if (std::optional<wb::fuzz::Finding> f = wb::fuzz::checkText(text, wb::fuzz::kProperties)) {
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
  // libFuzzer's C interface gives the mutator no other place to keep it (fuzz/mutator.h).
  static wb::fuzz::MutationMemo memo;
  std::string text = wb::fuzz::mutateText(std::string_view(reinterpret_cast<const char*>(data), size), seed, memo);
  if (text.size() > maxSize) return LLVMFuzzerMutate(data, size, maxSize);
  std::memcpy(data, text.data(), text.size());
  return text.size();
}
#endif
