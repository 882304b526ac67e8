// mpi/discovery.hpp — what the ranks of a communicator find out about where they run, with
// PMPI_* calls on that communicator only (discovered_platform.hpp turns it into a platform).
//
//   1. each rank: its host hash, MULTILANE_SITE, its lanes (or why it has none it may use);
//      three all-gathers, so that a rank whose discovery fails makes every rank fail with its
//      message instead of leaving them waiting;
//   2. when no rank names a site and the ranks span several nodes: the round trips between one
//      leader per node (round_trips.hpp), or, when this process has measured those nodes
//      before (a communicator split from one already set up), the figures it kept; rank 0
//      decides which and broadcasts the matrix, so every rank clusters the same figures.
#pragma once

#include <mpi.h>

#include "mpi/discovered_platform.hpp"

namespace multilane::mpi {

// Collective over `comm`. Throws UsageError (a rank's bad MULTILANE_LANES or MULTILANE_SITE,
// named) or CommunicationError.
Discovery discover(MPI_Comm comm, int rank, int size);

}  // namespace multilane::mpi
