// mpi/placement_key.hpp — a communicator's placement as a key: where each of its ranks runs.
//
// Two communicators of the same placement (an MPI_Comm_dup, an MPI_Comm_split that keeps the
// same ranks in the same order, or the same job shape in a later run) share their routes:
// the key is what the decision store and the tuning file are indexed by. It depends on each
// rank's site, node and lane count only, not on host names, so a production run on other
// nodes of the same shape starts from the routes a tuning run measured.
#pragma once

#include <string>

#include "multilane/platform.hpp"

namespace multilane::mpi {

struct PlacementKey {
  std::string fingerprint;  // 16 hex digits
  std::string words;        // "8 ranks on 4 nodes of 2 sites"
  int ranks = 0;
};

PlacementKey placement_key(const Platform& platform);

}  // namespace multilane::mpi
