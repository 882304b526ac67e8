// mpi/settings.hpp — what the user asks of the PMPI library, read once from the environment.
//
//   MULTILANE_MPI=off              every call goes to the MPI library (on, the default: the policy)
//   MULTILANE_EXPLAIN=1            rank 0 of each communicator prints every choice on stderr
//   MULTILANE_ALGORITHM_<COLL>=X   forces the choice for BCAST, SCATTER, GATHER, ALLGATHER,
//                                  ALLTOALL or BARRIER: "mpi" (the library's own), "auto"
//                                  (multilane's model picks) or one of multilane's algorithms
//                                  ("multilane" means auto where no algorithm has that name)
//   MULTILANE_TUNING=FILE          routes measured by an earlier run are read from FILE at
//                                  MPI_Init, and what this run decides is written to it at
//                                  MPI_Finalize (decision_store.hpp)
//   MULTILANE_TUNING_MODE=MODE     "explore" (the default): undecided classes of calls are
//                                  measured; "frozen": never measured, so every run takes the
//                                  same routes (those of the file, else the default route)
//   MULTILANE_PLATFORM=FILE        the platform's sites, nodes and lanes; ranks are matched to
//                                  its nodes by name (platform_match.hpp)
//   MULTILANE_MAX_JOBS=N           at most N communicators of a process have a multilane job
//                                  (0-1024, 16 by default; comm_state.hpp)
// The variables must be the same on every rank (each rank decides alone, and all must agree).
// A bad value is an error at MPI_Init naming the variable and what is allowed.
#pragma once

#include <array>
#include <string>

#include "mpi/wrapped_call.hpp"

namespace multilane::mpi {

struct Settings {
  bool enabled = true;
  bool explain = false;
  bool profile = false;                           // MULTILANE_PROFILE=1 (call_profile.hpp)
  std::string tuning_file;                        // "" without MULTILANE_TUNING
  bool frozen = false;                            // MULTILANE_TUNING_MODE=frozen
  std::array<std::string, kWrappedCalls> forced;  // "" when the policy decides
  std::string platform_file;                      // "" without MULTILANE_PLATFORM
  int max_jobs = 16;                              // MULTILANE_MAX_JOBS

  // Reads the process environment; throws UsageError on a bad value.
  static Settings from_environment();
};

}  // namespace multilane::mpi
