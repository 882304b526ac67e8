// sim/radix_sort.hpp — sorting 64-bit keys by least-significant-digit radix sort.
//
// The event queue sorts the keys of every instant, often thousands of them. Event keys vary
// in a few of their bytes only (an id below 2^24, a version, a kind), so a radix sort that
// skips the bytes on which all keys agree makes 3 to 5 linear passes, several times fewer
// operations than a comparison sort. Short runs use std::sort.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace multilane::sim {

// Sorts `keys` ascending; `scratch` is working storage, kept between calls to avoid
// allocating (its contents are unspecified afterwards).
template <class Vector>
void radix_sort(Vector& keys, Vector& scratch) {
  constexpr std::size_t kSmall = 64;
  const std::size_t n = keys.size();
  if (n < kSmall) {
    std::sort(keys.begin(), keys.end());
    return;
  }
  std::uint64_t all_and = ~std::uint64_t{0}, all_or = 0;
  for (const std::uint64_t k : keys) {
    all_and &= k;
    all_or |= k;
  }
  const std::uint64_t varying = all_and ^ all_or;  // bits that differ between some keys
  scratch.resize(n);
  for (int shift = 0; shift < 64; shift += 8) {
    if (((varying >> shift) & 0xff) == 0) continue;
    std::array<std::size_t, 256> offset{};
    for (const std::uint64_t k : keys) ++offset[(k >> shift) & 0xff];
    std::size_t sum = 0;
    for (std::size_t& o : offset) {
      const std::size_t count = o;
      o = sum;
      sum += count;
    }
    for (const std::uint64_t k : keys) scratch[offset[(k >> shift) & 0xff]++] = k;
    keys.swap(scratch);
  }
}

}  // namespace multilane::sim
