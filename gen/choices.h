// gen/choices.h: the source of every decision the generator makes (DESIGN §9).
//
// The generator never draws randomness itself; it asks a Choices object for integers in a
// range. Three sources exist so that one generator serves every driver:
//   RandomChoices  seeded xoshiro256** (same seed, same program on every machine: no std::
//                  distributions, whose output is implementation-defined);
//   ByteChoices    a byte buffer consumed like libFuzzer's FuzzedDataProvider (written here);
//                  when the bytes run out every pick returns its lowest value, so any buffer
//                  yields a program;
//   RapidCheck     gen/rapidcheck_choices.h (header-only, tests only), so shrinking applies.
// Convention shared by all helpers: the lowest pick is the simplest choice (fewest nodes,
// feature off, first alternative), because exhausted bytes and RapidCheck's shrinking both
// move towards it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace wb::gen {

class Choices {
 public:
  virtual ~Choices() = default;

  // An integer in [lo, hi] (inclusive). lo <= hi is required; pick(lo, lo) == lo.
  virtual std::int64_t pick(std::int64_t lo, std::int64_t hi) = 0;

  // True with probability pTrue (in steps of 1/1000). The lowest pick means false, so
  // exhausted and shrunk sources switch features off.
  bool flip(double pTrue) {
    const auto threshold = static_cast<std::int64_t>(1000.0 - pTrue * 1000.0 + 0.5);
    return pick(0, 999) >= threshold;
  }

  // An index into a container of `size` elements (size > 0).
  std::size_t index(std::size_t size) {
    return static_cast<std::size_t>(pick(0, static_cast<std::int64_t>(size) - 1));
  }

  template <typename T>
  const T& element(const std::vector<T>& items) {
    return items[index(items.size())];
  }

  // An index drawn with the given non-negative integer weights (not all zero). Index 0 stays
  // the lowest choice when its weight is positive.
  std::size_t weighted(const std::vector<int>& weights) { return weighted(std::span<const int>(weights)); }
  std::size_t weighted(std::span<const int> weights) {
    std::int64_t total = 0;
    for (int w : weights) total += w;
    std::int64_t r = pick(0, total - 1);
    for (std::size_t i = 0; i < weights.size(); ++i) {
      if (r < weights[i]) return i;
      r -= weights[i];
    }
    return weights.size() - 1;
  }
};

// splitmix64: turns any 64-bit seed into well-mixed state words.
inline std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// xoshiro256** seeded through splitmix64; picks are unbiased (rejection sampling).
class RandomChoices final : public Choices {
 public:
  explicit RandomChoices(std::uint64_t seed) {
    std::uint64_t sm = seed;
    for (auto& word : state_) word = splitmix64(sm);
  }

  std::uint64_t next() {
    const std::uint64_t result = rotl(state_[1] * 5, 7) * 9;
    const std::uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = rotl(state_[3], 45);
    return result;
  }

  std::int64_t pick(std::int64_t lo, std::int64_t hi) override {
    if (hi <= lo) return lo;
    const std::uint64_t span = static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo);
    if (span == ~std::uint64_t{0}) return static_cast<std::int64_t>(next());
    const std::uint64_t bound = span + 1;
    // Reject the top partial block so every value is equally likely.
    const std::uint64_t limit = ~std::uint64_t{0} - (~std::uint64_t{0} % bound);
    std::uint64_t r = next();
    while (r >= limit) r = next();
    return static_cast<std::int64_t>(static_cast<std::uint64_t>(lo) + r % bound);
  }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t state_[4] = {};
};

// Consumes a byte buffer front to back, as many bytes per pick as the range needs (like
// FuzzedDataProvider::ConsumeIntegralInRange). Exhausted: every pick returns lo.
class ByteChoices final : public Choices {
 public:
  explicit ByteChoices(std::span<const std::uint8_t> bytes) : bytes_(bytes) {}

  std::int64_t pick(std::int64_t lo, std::int64_t hi) override {
    if (hi <= lo) return lo;
    const std::uint64_t span = static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo);
    std::uint64_t acc = 0;
    std::size_t bitsRead = 0;
    while (bitsRead < 64 && (span >> bitsRead) > 0 && offset_ < bytes_.size()) {
      acc = (acc << 8) | bytes_[offset_++];
      bitsRead += 8;
    }
    if (span != ~std::uint64_t{0}) acc %= span + 1;
    return static_cast<std::int64_t>(static_cast<std::uint64_t>(lo) + acc);
  }

  std::size_t consumed() const { return offset_; }
  bool exhausted() const { return offset_ >= bytes_.size(); }

 private:
  std::span<const std::uint8_t> bytes_;
  std::size_t offset_ = 0;
};

}  // namespace wb::gen
