// platform/placement_check.hpp — the block order of ranks, and recognising a placement that
// follows it (private to the platform layer).
#pragma once

#include <cstddef>
#include <vector>

#include "multilane/platform.hpp"

namespace multilane {

// Hands `visit` the places of the first `count` ranks of a block placement, in rank order:
// node 0's cores, then node 1's, ... (fewer when the nodes have fewer cores), until `visit`
// returns false. Returns how many places it handed out. One home for the order that
// Platform::place_block() fills and is_block_placement() checks.
template <typename Visit>
std::size_t for_each_block_place(const std::vector<Node>& nodes, std::size_t count, Visit visit) {
  std::size_t placed = 0;
  for (int n = 0; n < static_cast<int>(nodes.size()) && placed < count; ++n) {
    for (int c = 0; c < nodes[static_cast<std::size_t>(n)].cores && placed < count; ++c) {
      if (!visit(RankPlace{.node = n, .core = c})) return placed;
      ++placed;
    }
  }
  return placed;
}

// True when the ranks are exactly what Platform::place_block(num_ranks()) would give: the
// writer then writes `ranks = N` instead of a node per rank, and describe says "block".
bool is_block_placement(const Platform& platform);

}  // namespace multilane
