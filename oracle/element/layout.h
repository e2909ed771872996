// oracle/element/layout.h: the element tier's layout algebra (internal to oracle/).
//
// A value of the element tier lives in a storage (a range of the run's arena) as a strided
// layout: storage, offset, sizes and strides, all known at compile time. This header holds the
// shapes and layouts and the pure functions over them (element counts, row-major walks,
// contiguous strides, broadcasting), and the compile error every part of the tier throws.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/shape_rules.h"

namespace wb::oracle::detail {

// A compile error: the program cannot be run in the element tier.
struct Unsupported {
  std::string why;
};

[[noreturn]] inline void fail(std::string why) { throw Unsupported{std::move(why)}; }

// Sizes or strides, stored inline: layouts are copied with every value a compile resolves, and
// a shape on the heap would be an allocation per copy (bench/README.md, "The element
// compiler's records"). A rank above kMaxRank is left to the storage tier (a compile error
// that says so); PyTorch programs stay below it (the generator's ranks are at most 4, a few
// unsqueezes more after views).
class Shape {
 public:
  static constexpr std::size_t kMaxRank = 8;
  // The array is not zeroed: only [0, size) is ever read, and values are made by the thousand
  // in a compile. Copies are the trivial copy.
  Shape() {}
  Shape(std::size_t n, std::int64_t value) { assign(n, value); }
  Shape(std::initializer_list<std::int64_t> values) {
    for (std::int64_t v : values) push_back(v);
  }
  explicit Shape(const std::vector<std::int64_t>& values) {
    for (std::int64_t v : values) push_back(v);
  }

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  std::int64_t& operator[](std::size_t i) { return data_[i]; }
  std::int64_t operator[](std::size_t i) const { return data_[i]; }
  std::int64_t* begin() { return data_.data(); }
  std::int64_t* end() { return data_.data() + size_; }
  const std::int64_t* begin() const { return data_.data(); }
  const std::int64_t* end() const { return data_.data() + size_; }
  void clear() { size_ = 0; }
  void push_back(std::int64_t v) {
    if (size_ == kMaxRank) tooLarge();
    data_[size_++] = v;
  }
  // Size n, elements not set (the caller sets every one).
  void resizeUnset(std::size_t n) {
    if (n > kMaxRank) tooLarge();
    size_ = static_cast<std::uint8_t>(n);
  }
  void assign(std::size_t n, std::int64_t value) {
    if (n > kMaxRank) tooLarge();
    std::fill_n(data_.begin(), n, value);
    size_ = static_cast<std::uint8_t>(n);
  }
  std::int64_t* insert(std::int64_t* at, std::int64_t v) {
    if (size_ == kMaxRank) tooLarge();
    std::copy_backward(at, end(), end() + 1);
    *at = v;
    ++size_;
    return at;
  }
  std::int64_t* erase(std::int64_t* at) {
    std::copy(at + 1, end(), at);
    --size_;
    return at;
  }
  // A loop: ranks are small, and std::equal on integers is a call to memcmp.
  friend bool operator==(const Shape& a, const Shape& b) {
    if (a.size_ != b.size_) return false;
    for (std::size_t i = 0; i < a.size_; ++i)
      if (a.data_[i] != b.data_[i]) return false;
    return true;
  }

 private:
  [[noreturn]] static void tooLarge() {
    throw Unsupported{"rank above " + std::to_string(kMaxRank) + " (element tier)"};
  }
  std::array<std::int64_t, kMaxRank> data_;
  std::uint8_t size_ = 0;
};

struct Layout {
  std::uint32_t storage = 0;
  std::int64_t offset = 0;
  Shape sizes;
  Shape strides;

  Layout() {}
};
// Copied as plain bytes (CValue's copies, a fork's block copy of its values).
static_assert(std::is_trivially_copyable_v<Shape> && std::is_trivially_copyable_v<Layout>);

inline std::int64_t numelOf(const Shape& shape) {
  std::int64_t n = 1;
  for (std::int64_t s : shape) n *= s;
  return n;
}

// The next index of a row-major walk over `sizes` (the last dimension fastest); past the last
// element it wraps to all zeros.
inline void advanceRowMajor(Shape& idx, const Shape& sizes) {
  for (std::size_t d = idx.size(); d-- > 0;) {
    if (++idx[d] < sizes[d]) return;
    idx[d] = 0;
  }
}

// advanceRowMajor over the first idx.size() dimensions of a strided layout, keeping `pos` (the
// storage position of idx) up to date.
inline void advanceStrided(Shape& idx, const Shape& sizes, const Shape& strides, std::int64_t& pos) {
  for (std::size_t d = idx.size(); d-- > 0;) {
    if (++idx[d] < sizes[d]) {
      pos += strides[d];
      return;
    }
    pos -= strides[d] * (sizes[d] - 1);
    idx[d] = 0;
  }
}

// The row-major strides of `sizes`, written into `strides` (in place: a Shape is a large record).
inline void setContiguousStrides(const Shape& sizes, Shape& strides) {
  const std::size_t rank = sizes.size();
  strides.resizeUnset(rank);
  if (rank == 0) return;
  strides[rank - 1] = 1;
  for (std::size_t i = rank - 1; i-- > 0;) strides[i] = strides[i + 1] * std::max<std::int64_t>(sizes[i + 1], 1);
}

inline Shape contiguousStrides(const Shape& sizes) {
  Shape strides;
  setContiguousStrides(sizes, strides);
  return strides;
}

inline bool isContiguous(const Layout& l) {
  std::int64_t expected = 1;
  for (std::size_t i = l.sizes.size(); i-- > 0;) {
    if (l.sizes[i] == 1) continue;
    if (l.strides[i] != expected) return false;
    expected *= l.sizes[i];
  }
  return true;
}

inline Shape broadcastShapes(const Shape& a, const Shape& b) {
  Shape out(std::max(a.size(), b.size()), 1);
  for (std::size_t i = 0; i < out.size(); ++i) {
    std::int64_t x = i < out.size() - a.size() ? 1 : a[i - (out.size() - a.size())];
    std::int64_t y = i < out.size() - b.size() ? 1 : b[i - (out.size() - b.size())];
    const std::optional<std::int64_t> d = broadcastDim(x, y);
    if (!d) fail("shapes do not broadcast");
    out[i] = *d;
  }
  return out;
}

inline Layout expandTo(const Layout& l, const Shape& target) {
  if (target.size() < l.sizes.size()) fail("cannot broadcast to a shape of lower rank");
  Layout r;
  r.storage = l.storage;
  r.offset = l.offset;
  r.sizes = target;
  r.strides.assign(target.size(), 0);
  std::size_t lead = target.size() - l.sizes.size();
  for (std::size_t i = 0; i < l.sizes.size(); ++i) {
    std::int64_t s = l.sizes[i], t = target[lead + i];
    if (t == -1) t = s;
    r.sizes[lead + i] = t;
    if (s == t) r.strides[lead + i] = l.strides[i];
    else if (s == 1) r.strides[lead + i] = 0;
    else fail("shapes do not broadcast");
  }
  return r;
}

}  // namespace wb::oracle::detail
