// platform/placement_check.hpp — recognising a block placement (private to the platform layer).
#pragma once

#include "multilane/platform.hpp"

namespace multilane {

// True when the ranks are exactly what Platform::place_block(num_ranks()) would give: the
// writer then writes `ranks = N` instead of a node per rank, and describe says "block".
bool is_block_placement(const Platform& platform);

}  // namespace multilane
