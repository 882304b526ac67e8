// radix_sort (sim/radix_sort.hpp) sorts like std::sort, whichever bytes of the keys vary.
#include "sim/radix_sort.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

namespace multilane::sim {
namespace {

TEST(RadixSort, SortsLikeStdSort) {
  std::mt19937_64 rng(7);
  // Masks choose which bytes vary: all of them, event-key-like (kind, version, id), one byte.
  const std::uint64_t masks[] = {~std::uint64_t{0}, 0xc0ff0000'00ffffffull, 0x0000ff00'00000000ull,
                                 0};
  std::vector<std::uint64_t> scratch;
  for (const std::uint64_t mask : masks) {
    for (const std::size_t n : {0, 1, 5, 63, 64, 65, 1000, 20000}) {
      std::vector<std::uint64_t> keys(n);
      const std::uint64_t base = rng();
      for (auto& k : keys) k = (base & ~mask) | (rng() & mask);
      if (n > 10) keys[n / 2] = keys[n / 3];  // a duplicate
      std::vector<std::uint64_t> expected = keys;
      std::sort(expected.begin(), expected.end());
      radix_sort(keys, scratch);
      EXPECT_EQ(keys, expected) << "mask " << mask << " n " << n;
    }
  }
}

}  // namespace
}  // namespace multilane::sim
