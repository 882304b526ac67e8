// Recognising a block placement (contract in placement_check.hpp).
#include "platform/placement_check.hpp"

namespace multilane {

// Walks the ranks against the block order without building that placement: a platform may have
// a hundred thousand nodes.
bool is_block_placement(const Platform& platform) {
  const auto& ranks = platform.ranks;
  std::size_t next = 0;
  const std::size_t matched =
      for_each_block_place(platform.nodes, ranks.size(), [&](const RankPlace& place) {
        const RankPlace& rank = ranks[next++];
        return rank.node == place.node && rank.core == place.core;
      });
  return matched == ranks.size();
}

}  // namespace multilane
