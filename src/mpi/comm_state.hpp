// mpi/comm_state.hpp — what the library keeps per MPI communicator, cached as an attribute.
//
// A communicator's state is made at its first wrapped collective (every rank is in that call):
// the layout and its route policy at once, the multilane job at the first call routed to multilane
// (comm_bootstrap.hpp). It is an attribute of a keyval with MPI_COMM_NULL_COPY_FN (a dup'ed
// communicator starts afresh, with a job of its own) whose delete callback frees it, at
// MPI_Comm_free, or at stop_library() for the communicators still alive (MPI_COMM_WORLD,
// MPI_COMM_SELF and whatever the program never freed), before PMPI_Finalize. Caching by
// attribute, not by handle, is what keeps a freed handle that MPI reuses from finding a stale
// job.
#pragma once

#include <mpi.h>

#include <memory>

#include "mpi/comm_bootstrap.hpp"
#include "mpi/route_policy.hpp"
#include "multilane/communicator.hpp"

namespace multilane::mpi {

struct CommState {
  MPI_Comm comm = MPI_COMM_NULL;
  CommLayout layout;
  std::unique_ptr<RoutePolicy> route;  // on the layout's platform, keeping each call's route
  // Null until the first call routed to multilane. Shared with the non-blocking calls in
  // flight: MPI lets a program free a communicator before waiting for them.
  std::shared_ptr<Communicator> multilane;
};

// Creates the keyval (at start_library()).
void create_comm_keyval();
// The state of `comm`, made now if it has none (a collective step: call it from a collective).
CommState& state_of(MPI_Comm comm);
// The state's multilane job, joined now if it has none (collective, like state_of).
std::shared_ptr<Communicator> multilane_of(CommState& state);
// Frees the state of every communicator still alive, then the keyval (at stop_library()).
void free_all_comm_states();
// Ends every communicator's multilane job without MPI calls (before PMPI_Abort): the shared
// memory segments this process made are unlinked, which a killed process would leave behind.
void end_all_multilane_jobs();

}  // namespace multilane::mpi
