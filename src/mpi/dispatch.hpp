// mpi/dispatch.hpp — the path every wrapped collective takes: describe the call, find its
// communicator's state and its class's route, and run it with multilane or the MPI library.
//
// `mpi` runs the call with the MPI library (PMPI_*) on the caller's arguments untouched; the
// return value is the wrapped function's.
//
// A blocking call runs on the caller's thread either way. Its class's route (measured_route.hpp)
// costs one hash look-up once decided; while the class is explored, this call runs the
// candidate whose turn it is and is timed. A nonblocking call never talks to the other ranks
// to decide or to set up: it takes its class's decision when there is one, else the default
// route (route_policy.hpp), and the MPI library's when the communicator has no state or no
// multilane job yet.
//
// A call that goes to the MPI library at once passes through: one that moves no data (and is
// not forced), or the same call again on the thread's last communicator after a route that
// lasts gave it to the MPI library (repeated_calls.hpp). That test is inline in each wrapper and
// reads a few cache lines (pass_through_state.hpp); everything else is route_blocking's or
// route_nonblocking's, out of line.
#pragma once

#include <mpi.h>

#include "mpi/collective_call.hpp"
#include "mpi/comm_state.hpp"
#include "mpi/pass_through_state.hpp"

namespace multilane::mpi {

using MpiCall = int (*)(const MpiArgs& args, MPI_Comm comm);
using MpiStart = int (*)(const MpiArgs& args, MPI_Comm comm, MPI_Request* request);

// A call with nothing to move on any rank: a zero count where MPI makes every rank's data the
// same size (the bcast's signature, the reductions' count). Unless forced, the route gives such
// a call to the MPI library too; checked first, it costs one comparison (OSU's
// reduce_scatter_block of 4 B on 4 ranks is such a call, and takes the MPI library 30 ns).
[[gnu::always_inline]] inline bool moves_nothing(WrappedCall call, const MpiArgs& args) {
  switch (call) {
    case WrappedCall::Bcast:
    case WrappedCall::Allreduce:
    case WrappedCall::Reduce:
    case WrappedCall::ReduceScatterBlock:
    case WrappedCall::Scan:
    case WrappedCall::Exscan:
      return args.recvcount == 0;
    default:
      return false;
  }
}

// A call that moves nothing and that MULTILANE_ALGORITHM_<COLL> does not force.
[[gnu::always_inline]] inline bool unforced_without_data(WrappedCall call, const MpiArgs& args) {
  const std::uint32_t bit = 1u << static_cast<unsigned>(call);
  return moves_nothing(call, args) &&
         (pass_through_state.forced.load(std::memory_order_relaxed) & bit) == 0;
}

// Whether the call goes to the MPI library without a look-up (above).
[[gnu::always_inline]] inline bool passes_through(WrappedCall call, bool nonblocking, MPI_Comm comm,
                                                  const MpiArgs& args) {
  if (!pass_through_state.open.load(std::memory_order_relaxed)) return false;
  if (unforced_without_data(call, args)) return true;
  const CommState* state = cached_state(comm);
  return state && state->to_mpi_again.match(call, nonblocking, args);
}

// Every other blocking call: its communicator's state, its class's route, and the call.
int route_blocking(WrappedCall call, MPI_Comm comm, const MpiArgs& args, MpiCall mpi);

[[gnu::always_inline]] inline int run_blocking(WrappedCall call, MPI_Comm comm, const MpiArgs& args,
                                               MpiCall mpi) {
  if (passes_through(call, false, comm, args)) return mpi(args, comm);  // not counted
  return route_blocking(call, comm, args, mpi);
}

// Every other nonblocking call. On multilane's route, *request is a generalized request
// (pending_requests.hpp).
int route_nonblocking(WrappedCall call, MPI_Comm comm, const MpiArgs& args, MPI_Request* request,
                      MpiStart mpi);

[[gnu::always_inline]] inline int start_nonblocking(WrappedCall call, MPI_Comm comm,
                                                    const MpiArgs& args, MPI_Request* request,
                                                    MpiStart mpi) {
  if (passes_through(call, true, comm, args)) return mpi(args, comm, request);  // not counted
  return route_nonblocking(call, comm, args, request, mpi);
}

}  // namespace multilane::mpi
