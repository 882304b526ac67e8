// power_of_two.hpp — the largest power of two not above n.
//
// The recursive-doubling and recursive-halving steps fold the n - q ranks beyond the largest
// power of two q into the first q; every builder of those steps asks for the same q.
#pragma once

#include <bit>

namespace multilane {

// q = 2^floor(log2 n) for n >= 1; 1 for n <= 1 (a single position is its own cube).
constexpr int largest_power_of_two(int n) {
  return n <= 1 ? 1 : static_cast<int>(std::bit_floor(static_cast<unsigned>(n)));
}

}  // namespace multilane
