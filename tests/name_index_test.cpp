// tests/name_index_test.cpp: text lookups and large arrays for passes over whole graphs
// (core/name_index.h).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/name_index.h"

namespace wb {
namespace {

// Every length around the word sizes sameName() switches on, differing at every position.
TEST(NameIndex, SameNameAgreesWithStringEqualityAtEveryLengthAndPosition) {
  for (std::size_t n = 0; n <= 40; ++n) {
    std::string a(n, 'x');
    for (std::size_t i = 0; i < n; ++i) a[i] = static_cast<char>('a' + (i * 7) % 26);
    EXPECT_TRUE(sameName(a, std::string(a))) << n;
    EXPECT_FALSE(sameName(a, a + "y")) << n;
    for (std::size_t i = 0; i < n; ++i) {
      std::string b = a;
      b[i] = static_cast<char>(b[i] ^ 0x20);
      EXPECT_FALSE(sameName(a, b)) << n << " at " << i;
    }
  }
  // Views into a longer buffer compare only their own bytes.
  const std::string buffer = "copy_1copy_12";
  EXPECT_TRUE(sameName(std::string_view(buffer).substr(0, 6), "copy_1"));
  EXPECT_FALSE(sameName(std::string_view(buffer).substr(6, 7), "copy_1"));
}

TEST(NameIndex, FindsEveryInsertedNameAndKeepsTheFirstIdOfADuplicate) {
  std::vector<std::string> names;
  for (int i = 0; i < 5000; ++i) names.push_back("n" + std::to_string(i));
  names.push_back("n17");  // a duplicate: the first id stays
  auto keyOf = [&](std::uint32_t id) { return std::string_view(names[id]); };
  FlatNameIndex<decltype(keyOf)> index(keyOf, 4);  // grows many times
  for (std::uint32_t id = 0; id < names.size(); ++id) index.insert(id);
  for (std::uint32_t id = 0; id < 5000; ++id) EXPECT_EQ(index.find(names[id]), id);
  EXPECT_EQ(index.find("n17"), 17u);
  EXPECT_EQ(index.find("n5000"), index.kNone);
  EXPECT_EQ(index.find(""), index.kNone);
  EXPECT_EQ(index.findHashed("n42", hashName("n42")), 42u);
}

TEST(NameIndex, HugePageVectorsHoldTheirContentsAcrossGrowthCopiesAndMoves) {
  HugePageVector<std::uint64_t> small(100, 7);  // from the heap
  EXPECT_EQ(small[99], 7u);
  HugePageVector<std::uint64_t> v;
  for (std::uint64_t i = 0; i < 600'000; ++i) v.push_back(i * 3);  // crosses 1 MiB, regrows
  ASSERT_GE(v.capacity() * sizeof(std::uint64_t), HugePageAllocator<std::uint64_t>::kMinBytes);
#if defined(__linux__)
  // A large array is a mapping of its own, aligned for huge pages.
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(v.data()) % HugePageAllocator<std::uint64_t>::kHuge, 0u);
#endif
  for (std::uint64_t i = 0; i < v.size(); ++i) ASSERT_EQ(v[i], i * 3);
  HugePageVector<std::uint64_t> copy = v;
  EXPECT_EQ(copy, v);
  HugePageVector<std::uint64_t> moved = std::move(copy);
  EXPECT_EQ(moved, v);
  v.resize(10);
  v.shrink_to_fit();  // back to the heap
  EXPECT_EQ(v.back(), 27u);
  EXPECT_EQ(moved.size(), 600'000u);
}

}  // namespace
}  // namespace wb
