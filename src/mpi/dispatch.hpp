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
#pragma once

#include <mpi.h>

#include "mpi/collective_call.hpp"

namespace multilane::mpi {

using MpiCall = int (*)(const MpiArgs& args, MPI_Comm comm);
using MpiStart = int (*)(const MpiArgs& args, MPI_Comm comm, MPI_Request* request);

int run_blocking(WrappedCall call, MPI_Comm comm, const MpiArgs& args, MpiCall mpi);
// On multilane's route, *request is a generalized request (pending_requests.hpp).
int start_nonblocking(WrappedCall call, MPI_Comm comm, const MpiArgs& args, MPI_Request* request,
                      MpiStart mpi);

}  // namespace multilane::mpi
