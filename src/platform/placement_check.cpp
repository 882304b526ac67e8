// Recognising a block placement (contract in placement_check.hpp).
#include "platform/placement_check.hpp"

#include <cstddef>

namespace multilane {

// Walks the ranks against the block order (node 0's cores, then node 1's, ...) without building
// that placement: a platform may have a hundred thousand nodes.
bool is_block_placement(const Platform& platform) {
  if (platform.num_ranks() > platform.total_cores()) return false;
  const auto& ranks = platform.ranks;
  std::size_t next = 0;
  for (int n = 0; n < static_cast<int>(platform.nodes.size()) && next < ranks.size(); ++n) {
    for (int c = 0; c < platform.nodes[n].cores && next < ranks.size(); ++c, ++next) {
      if (ranks[next].node != n || ranks[next].core != c) return false;
    }
  }
  return next == ranks.size();
}

}  // namespace multilane
