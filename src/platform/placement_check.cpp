// Recognising a block placement (contract in placement_check.hpp).
#include "platform/placement_check.hpp"

#include <algorithm>

namespace multilane {

bool is_block_placement(const Platform& platform) {
  Platform block;
  block.nodes = platform.nodes;
  if (platform.num_ranks() > block.total_cores()) return false;
  block.place_block(platform.num_ranks());
  return std::equal(
      block.ranks.begin(), block.ranks.end(), platform.ranks.begin(), platform.ranks.end(),
      [](const RankPlace& a, const RankPlace& b) { return a.node == b.node && a.core == b.core; });
}

}  // namespace multilane
