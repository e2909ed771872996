// core/name_index.h: fast lookups of texts (node names, call targets, input-spec keys) and the
// memory helpers of passes over whole graphs.
//
// FlatNameIndex maps a text to an id without keeping copies of the texts: an open-addressing
// table of (hash, id) pairs; the schema table, the alias analysis (targets), validate (duplicate
// names) and the rewrite (input specs) use it. prefetchNode() starts loading a node a pass will
// reach soon. The alias analysis's per-node arrays and the indices' slot arrays live on huge
// pages (HugePageAllocator): a fresh array of tens of megabytes otherwise costs a page fault per
// 4 KiB, and an index is probed at random. The node arrays of a program do not (see
// HugePageAllocator).
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <new>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "core/ir.h"

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace wb {

namespace detail {
// Unaligned loads of 8 and 4 bytes: names sit at any address.
inline std::uint64_t load64(const char* p) {
  std::uint64_t w;
  std::memcpy(&w, p, 8);
  return w;
}
inline std::uint64_t load32(const char* p) {
  std::uint32_t w;
  std::memcpy(&w, p, 4);
  return w;
}
}  // namespace detail

// A hash of a name for the flat indices below (FNV-style multiply over 8-byte words, then a
// final mix so the low bits, which pick the slot, depend on every byte). Only speed depends on
// it: nothing iterates an index, so no result depends on hash order.
inline std::uint64_t hashName(std::string_view s) {
  using detail::load32;
  using detail::load64;
  constexpr std::uint64_t kMul = 0x9E3779B97F4A7C15ull;
  std::uint64_t h = s.size() * kMul;
  const char* p = s.data();
  std::size_t n = s.size();
  for (; n > 8; p += 8, n -= 8) {
    h = (h ^ load64(p)) * kMul;
    h ^= h >> 29;
  }
  // The last 1 to 8 bytes in at most two loads (overlapping ones when the name is long enough):
  // a byte-by-byte copy of the tail stalls on store forwarding, and most names are short.
  std::uint64_t w = 0;
  if (s.size() >= 8) w = load64(s.data() + s.size() - 8);
  else if (n >= 4) w = (load32(p) << 32) | load32(p + n - 4);
  else if (n > 0) w = (std::uint64_t{static_cast<unsigned char>(p[0])} << 16) |
                      (std::uint64_t{static_cast<unsigned char>(p[n / 2])} << 8) | static_cast<unsigned char>(p[n - 1]);
  h = (h ^ w) * kMul;
  h ^= h >> 32;
  h *= 0xD6E8FEB86659FD93ull;
  h ^= h >> 32;
  return h;
}

// a == b for names, inline: most names are a few bytes long, and the library memcmp behind
// string_view's == is a call whose set-up costs more than the comparison. Loads stay inside
// both strings: two overlapping words for 8 bytes or more, two overlapping halves below.
inline bool sameName(std::string_view a, std::string_view b) {
  const std::size_t n = a.size();
  if (n != b.size()) return false;
  using detail::load32;
  using detail::load64;
  const char* x = a.data();
  const char* y = b.data();
  if (n > 16) return std::memcmp(x, y, n) == 0;
  if (n >= 8) return load64(x) == load64(y) && load64(x + n - 8) == load64(y + n - 8);
  if (n >= 4) return load32(x) == load32(y) && load32(x + n - 4) == load32(y + n - 4);
  for (std::size_t i = 0; i < n; ++i)
    if (x[i] != y[i]) return false;
  return true;
}

// Starts loading a node that a pass over the graph will reach soon. Passes over large graphs
// stream the nodes from memory; a Node spans several cache lines, which the hardware
// prefetchers do not reliably follow.
inline void prefetchNode(const Node& node) {
  const char* p = reinterpret_cast<const char*>(&node);
  for (std::size_t line = 0; line < sizeof(Node); line += 64) __builtin_prefetch(p + line);
}

// Starts loading the arguments of a node a pass will reach soon (they live elsewhere on the
// heap); the node itself should have been prefetched some steps earlier (prefetchNode).
inline void prefetchArgs(const Node& node) {
  if (node.args.empty()) return;
  const char* p = reinterpret_cast<const char*>(node.args.data());
  const std::size_t bytes = node.args.size() * sizeof(Arg);
  for (std::size_t line = 0; line < bytes && line < 4 * 64; line += 64) __builtin_prefetch(p + line);
}

// An allocator for the large arrays of an analysis: an array of 1 MiB or more gets a mapping of
// its own, 2 MiB-aligned and advised for huge pages, so that all of it is backed by huge pages
// (advice on a block malloc placed reaches only its aligned interior, and a block the heap
// recycles may have lost it). Smaller arrays come from the heap as usual. Stateless: every
// instance can free what another allocated.
//
// Not for the node arrays of a program (Graph::nodes, hundreds of megabytes at 10^6 nodes,
// written once front to back): with the kernel's defrag policy `madvise`, a fault in advised
// memory compacts memory to find a free huge page, and on a loaded machine that made the
// placement of 10^6 nodes vary from 0.1 to 0.6 s of CPU, mostly sys time (bench/README.md,
// read_report). Plain 4 KiB pages cost less than that worst case.
template <typename T>
struct HugePageAllocator {
  using value_type = T;
  static constexpr std::size_t kHuge = std::size_t{2} << 20;
  static constexpr std::size_t kMinBytes = std::size_t{1} << 20;

  HugePageAllocator() = default;
  template <typename U>
  HugePageAllocator(const HugePageAllocator<U>&) noexcept {}

  T* allocate(std::size_t n) {
    if (n > std::numeric_limits<std::size_t>::max() / sizeof(T) - kHuge) throw std::bad_array_new_length();
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (n * sizeof(T) >= kMinBytes) {
      const std::size_t bytes = mappedBytes(n);
      // Map one huge page more than needed and trim both ends to the aligned middle.
      void* raw = mmap(nullptr, bytes + kHuge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (raw == MAP_FAILED) throw std::bad_alloc();
      const std::uintptr_t begin = reinterpret_cast<std::uintptr_t>(raw);
      const std::uintptr_t aligned = (begin + kHuge - 1) & ~(kHuge - 1);
      if (aligned > begin) munmap(raw, aligned - begin);
      const std::uintptr_t tail = aligned + bytes;
      if (begin + bytes + kHuge > tail) munmap(reinterpret_cast<void*>(tail), begin + bytes + kHuge - tail);
      madvise(reinterpret_cast<void*>(aligned), bytes, MADV_HUGEPAGE);
      return reinterpret_cast<T*>(aligned);
    }
#endif
    return std::allocator<T>().allocate(n);
  }
  void deallocate(T* p, std::size_t n) noexcept {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (n * sizeof(T) >= kMinBytes) {
      munmap(p, mappedBytes(n));
      return;
    }
#endif
    std::allocator<T>().deallocate(p, n);
  }
  template <typename U>
  friend bool operator==(const HugePageAllocator&, const HugePageAllocator<U>&) {
    return true;
  }

 private:
  static std::size_t mappedBytes(std::size_t n) { return (n * sizeof(T) + kHuge - 1) & ~(kHuge - 1); }
};

// A std::vector whose storage, once large, is on huge pages (see HugePageAllocator).
template <typename T>
using HugePageVector = std::vector<T, HugePageAllocator<T>>;

// Text -> id: open addressing over one flat array of (32 bits of hash, id); the texts stay where
// they are and `keyOf(id)` fetches one, so a slot is 8 bytes and a text is compared only on a
// likely hit.
template <typename KeyOf>
class FlatNameIndex {
 public:
  explicit FlatNameIndex(KeyOf keyOf, std::size_t expected) : keyOf_(std::move(keyOf)) {
    std::size_t capacity = 8;
    while (capacity < expected * 2 + 2) capacity <<= 1;
    allocateSlots(capacity);
  }
  // Adds keyOf(id) -> id unless the name is present (the first id stays). Returns the id the
  // name maps to. The table grows as needed.
  std::uint32_t insert(std::uint32_t id) { return insertHashed(id, hashName(keyOf_(id))); }
  // insert() with the name's hashName() already computed.
  std::uint32_t insertHashed(std::uint32_t id, std::uint64_t h) {
    if ((size_ + 1) * 2 > slots_.size()) grow();
    const std::string_view name = keyOf_(id);
    for (std::size_t at = h & mask_;; at = (at + 1) & mask_) {
      Slot& s = slots_[at];
      if (s.id == kNone) {
        s = Slot{static_cast<std::uint32_t>(h >> 32), id};
        ++size_;
        return id;
      }
      if (s.hash == static_cast<std::uint32_t>(h >> 32) && sameName(keyOf_(s.id), name)) return s.id;
    }
  }
  // The id of `name`, or kNone.
  std::uint32_t find(std::string_view name) const { return findHashed(name, hashName(name)); }
  // find() with hashName(name) already computed (one hash for lookups in several indices).
  std::uint32_t findHashed(std::string_view name, std::uint64_t h) const {
    for (std::size_t at = h & mask_;; at = (at + 1) & mask_) {
      const Slot& s = slots_[at];
      if (s.id == kNone) return kNone;
      if (s.hash == static_cast<std::uint32_t>(h >> 32) && sameName(keyOf_(s.id), name)) return s.id;
    }
  }
  // Starts loading the slot where a text of hash `h` is inserted or found first: a large
  // index is probed at random, and a probe a few hundred instructions after its prefetch does
  // not wait for memory.
  void prefetch(std::uint64_t h) const { __builtin_prefetch(slots_.data() + (h & mask_)); }
  static constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();

 private:
  struct Slot {
    std::uint32_t hash = 0;
    std::uint32_t id = kNone;
  };
  void grow() {
    HugePageVector<Slot> old = std::move(slots_);
    allocateSlots(old.size() * 2);
    for (const Slot& o : old) {
      if (o.id == kNone) continue;
      std::size_t at = hashName(keyOf_(o.id)) & mask_;
      while (slots_[at].id != kNone) at = (at + 1) & mask_;
      slots_[at] = o;
    }
  }
  // A large index is probed at random: huge pages spare both the page faults of the fresh array
  // and the TLB misses of the probes.
  void allocateSlots(std::size_t capacity) {
    slots_.assign(capacity, Slot{});
    mask_ = capacity - 1;
  }
  KeyOf keyOf_;
  HugePageVector<Slot> slots_;
  std::size_t mask_ = 0;
  std::size_t size_ = 0;
};

}  // namespace wb
