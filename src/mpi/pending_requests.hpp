// mpi/pending_requests.hpp — non-blocking collectives run by multilane, as MPI requests.
//
// Design: each call routed to multilane returns a generalized request (PMPI_Grequest_start)
// that owns the call (its multilane Request and temporary buffers) as its extra state. MPI
// cannot complete it by itself: it completes when the library calls PMPI_Grequest_complete,
// which needs a thread that is inside MPI (a helper thread would need MPI_THREAD_MULTIPLE).
// So the library wraps the completion calls, MPI_Wait, MPI_Test, their -all, -any and -some
// forms and MPI_Request_get_status: before handing the requests to PMPI_*, it completes every
// request of its own whose multilane call is done (finish: unpack; then PMPI_Grequest_complete). A
// wait that would block on one of its own requests
//   * waits for the multilane calls directly when every request in the array is the library's
//     (multilane progresses on its own thread; the wait is bounded by the engine's timeout);
//   * otherwise polls: completes what is done and tries PMPI_Test*, so MPI's own requests keep
//     progressing too (a peer may need them to reach the collective this rank waits for).
// A v-form whose counts only some ranks know (MPI_Igatherv, MPI_Iscatterv, MPI_Ialltoallv) on
// an algorithm that needs them all sends them first on multilane's engine
// (Communicator::irunv_sharing_counts()), which then starts the call by itself: its data moves
// while a rank blocks in a call the library does not wrap (MPI_Recv), as MPI's own would.
// The query callback reports the call's error code (mpi_errors.hpp) in the status; elements
// are 0 bytes, source and tag MPI_UNDEFINED, as for any collective's request.
// MPI_Cancel is not wrapped: it has no effect on such a request.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <string>

#include "mpi/collective_call.hpp"
#include "multilane/communicator.hpp"
#include "runtime/tcp/transport_error.hpp"

namespace multilane::mpi {

struct PendingCall {
  std::unique_ptr<CollectiveCall> call;
  Request request;
  std::shared_ptr<Communicator> owner;  // the job runs the call even if its MPI_Comm was freed
  std::string function;                 // "MPI_Ibcast", for error messages
  MPI_Request handle = MPI_REQUEST_NULL;
  int error = MPI_SUCCESS;
  std::uint64_t sequence = 0;  // start_pending()'s order
  bool claimed = false;        // a thread works on it (pending_requests.cpp); under its mutex
};

// Returns the generalized request that completes with `pending`.
MPI_Request start_pending(std::unique_ptr<PendingCall> pending);
// Completes every pending call whose multilane call is done.
void progress_pending();
// Orders what every call completed so far wrote before what this thread does next (the
// wrapped waits and tests call it once PMPI_* returned: pending_requests.cpp says why).
void see_completions();
// Waits for every pending call among `requests` (all of them the library's) and completes it.
void finish_pending(int count, const MPI_Request* requests);
// How many of `requests` are pending calls of the library.
int count_pending(int count, const MPI_Request* requests);
// Waits for every pending call (at stop_library()).
void finish_all_pending();

}  // namespace multilane::mpi
