// core/text_binary.cpp: the reader's test for binary input (text_syntax.h): a program text has
// no control characters but whitespace.
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "core/text_syntax.h"

namespace wb::text {

namespace {

// The bytes that never occur in a printout: control characters other than tab, line feed,
// form feed and carriage return, and DEL.
constexpr std::array<bool, 256> kBinaryByte = [] {
  std::array<bool, 256> binary{};
  for (int u = 0; u < 0x20; ++u) binary[u] = u != '\t' && u != '\n' && u != '\f' && u != '\r';
  binary[0x7f] = true;
  return binary;
}();

// Eight bytes at a time (SWAR): a mask with the high bit of each byte of `word` that is a binary
// byte (kBinaryByte). Each test is exact per byte: no carry crosses a byte boundary.
constexpr std::uint64_t kEachByte = 0x0101010101010101u;
constexpr std::uint64_t kHighBits = 0x80 * kEachByte;
constexpr std::uint64_t bytesEqualTo(std::uint64_t word, unsigned char c) {
  const std::uint64_t y = word ^ (c * kEachByte);  // zero where word has c
  return ~(((y & ~kHighBits) + ~kHighBits) | y) & kHighBits;
}
constexpr std::uint64_t binaryBytes(std::uint64_t word) {
  // (b & 0x7f) + 0x60 reaches the high bit iff (b & 0x7f) >= 0x20; b < 0x80 as well: b < 0x20.
  const std::uint64_t control = ~(((word & ~kHighBits) + 0x60 * kEachByte) | word) & kHighBits;
  const std::uint64_t allowed =
      bytesEqualTo(word, '\t') | bytesEqualTo(word, '\n') | bytesEqualTo(word, '\f') | bytesEqualTo(word, '\r');
  return (control & ~allowed) | bytesEqualTo(word, 0x7f);
}
static_assert(binaryBytes(0x0a09207e7f000d0cu) == 0x0000000080800000u);
static_assert(binaryBytes(0xff9f80201f0b0801u) == 0x0000000080808080u);

}  // namespace

// Rejects binary bytes up front with a position. The common case, none, is one pass over the
// input many bytes at a time, without a comparison per byte: in a fuzzing build, every
// comparison (the loop's, and the sanitizers' own checks) is reported to the fuzzer, and a byte
// loop was most of a small input's reading time. The line of the first binary byte is looked for
// only when there is one.
void rejectBinary(std::string_view input, const Source& source) {
  std::uint64_t binary = 0;
  // 16 bytes at a time in a vector register (GCC's and Clang's vector extension: SSE2 on any
  // x86-64, whose registers are 16 bytes: a wider vector is spelt out through memory; and no
  // scalar comparison for a fuzzing build to trace); then 8 at a time.
  // Signed bytes: SSE2 compares signed bytes only, and GCC spells an unsigned comparison out
  // byte by byte (slower than the 8-byte words below); a byte of 0x80 or more is negative here.
  using Bytes = signed char __attribute__((vector_size(16)));
  std::size_t at = 0;
  if (input.size() >= 16) {
    Bytes found{};
    for (; at + 16 <= input.size(); at += 16) {
      Bytes b;
      std::memcpy(&b, input.data() + at, 16);
      const Bytes control = (b >= 0) & (b < 0x20) & (b != '\t') & (b != '\n') & (b != '\f') & (b != '\r');
      found |= control | (b == 0x7f);
    }
    for (int k = 0; k < 16; ++k) binary |= static_cast<unsigned char>(found[k]);
  }
  for (; at + 8 <= input.size(); at += 8) {
    std::uint64_t word;
    std::memcpy(&word, input.data() + at, 8);
    binary |= binaryBytes(word);
  }
  for (; at < input.size(); ++at) binary |= kBinaryByte[static_cast<unsigned char>(input[at])];
  if (!binary) return;
  for (std::size_t i = 0; i < source.lineCount(); ++i) {
    std::string_view l = source.line(i);
    for (std::size_t j = 0; j < l.size(); ++j) {
      unsigned char u = static_cast<unsigned char>(l[j]);
      if (kBinaryByte[u]) {
        char hex[8];
        std::snprintf(hex, sizeof hex, "0x%02x", u);
        source.fail(Pos{static_cast<int>(i + 1), static_cast<int>(j + 1)},
                    std::string("binary data (byte ") + hex + "): not a program text");
      }
    }
  }
}

}  // namespace wb::text
