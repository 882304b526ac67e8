// mpi/comm_bootstrap.hpp — a multilane job over the ranks of an MPI communicator, set up with
// PMPI_* calls on that communicator only: no rendezvous server, no variables to set.
//
// Two steps, each collective (every rank of the communicator calls it at the same point, which
// a collective call guarantees):
//   gather_layout()   where the ranks run: which share a node, the nodes' lanes and sites
//                     (discovery.hpp, discovered_platform.hpp); with a platform file, the
//                     ranks placed on its nodes by name instead (platform_match.hpp). Done at
//                     a communicator's first wrapped collective; the route policy models on it.
//   join()            rank 0 draws a fresh 32-byte secret and a job id (libsodium) and
//                     PMPI_Bcasts them; every rank listens and PMPI_Allgathers its address
//                     (runtime/api/exchange_join.hpp), on the layout's platform (ranks of one
//                     host on one node, so the shared-memory layer serves them). Done at the
//                     first call routed to multilane.
// Both throw CommunicationError when a PMPI call or the setup fails.
#pragma once

#include <mpi.h>

#include <optional>
#include <string>
#include <vector>

#include "multilane/communicator.hpp"

namespace multilane::mpi {

struct CommLayout {
  int rank = 0;
  int size = 1;
  Platform platform;  // the file's or the discovered one, with exactly these ranks placed
  int nodes = 1;      // nodes holding ranks
  int sites = 1;      // sites holding ranks
};

// With `file` (MULTILANE_PLATFORM, read from `path`), the ranks are placed on its nodes by name
// (one PMPI_Allgatherv of the names) instead of by host hash.
CommLayout gather_layout(MPI_Comm comm, const std::optional<Platform>& file,
                         const std::string& path);
Communicator join(MPI_Comm comm, const CommLayout& layout);

}  // namespace multilane::mpi
