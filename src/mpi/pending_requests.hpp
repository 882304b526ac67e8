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
// A v-form whose counts only some ranks know (MPI_Igatherv, MPI_Iscatterv, MPI_Ialltoallv)
// first exchanges them without waiting (PMPI_Ibcast or PMPI_Iallgather); its multilane call
// starts once they are here, when a completion call finds the exchange done. Multilane numbers a
// communicator's calls in the order they start, the same on every rank, so such a deferred
// call starts before any later call of its communicator: a later call first waits for the
// earlier exchanges (start_deferred()), which every rank has already begun, so the wait ends
// as soon as MPI progresses them. Until then the call moves no data: a rank that blocks in a
// call the library does not wrap (MPI_Recv) holds back the ranks waiting for it, which MPI's
// own progress would not. So the library defers only calls the program forces to multilane
// (MULTILANE_ALGORITHM_<COLL>); by default such a call is the MPI library's.
// The query callback reports the call's error code (mpi_errors.hpp) in the status; elements
// are 0 bytes, source and tag MPI_UNDEFINED, as for any collective's request.
// MPI_Cancel is not wrapped: it has no effect on such a request.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <functional>
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
  // A deferred call: the counts' exchange, and what starts the multilane call after it (empty
  // once started); why the start failed, if it did.
  MPI_Request counts_exchange = MPI_REQUEST_NULL;
  std::function<Request()> start;
  runtime::Outcome start_failure;
  std::uint64_t sequence = 0;  // start_pending()'s order
  bool claimed = false;        // a thread works on it (pending_requests.cpp); under its mutex
};

// Returns the generalized request that completes with `pending`.
MPI_Request start_pending(std::unique_ptr<PendingCall> pending);
// Completes every pending call whose multilane call is done.
void progress_pending();
// Waits for every pending call among `requests` (all of them the library's) and completes it.
void finish_pending(int count, const MPI_Request* requests);
// How many of `requests` are pending calls of the library.
int count_pending(int count, const MPI_Request* requests);
// Waits for every pending call (at stop_library()).
void finish_all_pending();
// Starts every deferred call of `owner`, in the order they were made, waiting for their
// counts' exchanges: before any later call of that communicator starts.
void start_deferred(const Communicator* owner);

}  // namespace multilane::mpi
