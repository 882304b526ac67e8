// mpi/settings.hpp — what the user asks of the PMPI library, read once from the environment.
//
//   MULTILANE_MPI=off              every call goes to the MPI library (on, the default: the policy)
//   MULTILANE_EXPLAIN=1            rank 0 of each communicator prints every choice on stderr
//   MULTILANE_ALGORITHM_<COLL>=X   forces the choice for BCAST, SCATTER, GATHER, ALLGATHER,
//                                  ALLTOALL or BARRIER: "mpi" (the library's own), "auto"
//                                  (multilane's model picks) or one of multilane's algorithms
//                                  ("multilane" means auto where no algorithm has that name)
//   MULTILANE_MPI_SMALL=BYTES      on one node, calls below this size stay with the MPI library
//                                  (default: per collective, route_policy.hpp)
//   MULTILANE_PLATFORM=FILE        the platform's sites, nodes and lanes; ranks are matched to
//                                  its nodes by name (platform_match.hpp)
// The variables must be the same on every rank (each rank decides alone, and all must agree).
// A bad value is an error at MPI_Init naming the variable and what is allowed.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "mpi/wrapped_call.hpp"

namespace multilane::mpi {

struct Settings {
  bool enabled = true;
  bool explain = false;
  std::uint64_t small_bytes = 0;                  // MULTILANE_MPI_SMALL; 0: the policy's table
  std::array<std::string, kWrappedCalls> forced;  // "" when the policy decides
  std::string platform_file;                      // "" without MULTILANE_PLATFORM

  // Reads the process environment; throws UsageError on a bad value.
  static Settings from_environment();
};

}  // namespace multilane::mpi
