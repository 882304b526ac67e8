// lane_coloring.hpp — give every concurrent tree edge a NIC of its own.
//
// The multi-lane idea of the broadcast paper: a node that sends to two children at once uses
// one lane per child, and a node that receives two halves at once receives each on its own
// lane. Over the sender/receiver bipartite multigraph of nodes this is a proper edge colouring,
// which exists with max-degree colours (König), found here with alternating paths.
#pragma once

#include <span>

#include "multilane/platform.hpp"
#include "tree.hpp"

namespace multilane::algo {

// Sets TreeEdge::lane for the Colored edges of all `trees` jointly (their edges run at the
// same time). With Δ the largest number of Colored edges leaving or entering one node:
//   - Δ >= the lanes both ends have: lane = colour mod lanes (each concurrent edge its own NIC
//     as far as there are NICs);
//   - Δ smaller: kAnyLane (each edge may stripe over all lanes, as the paper's chain does).
// Edges between two ranks of the same node and Striped edges get kAnyLane.
void assign_lanes(std::span<Tree* const> trees, const Platform& platform);

}  // namespace multilane::algo
