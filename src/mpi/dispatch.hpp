// mpi/dispatch.hpp — the path every wrapped collective takes: describe the call, look up (or
// make) the communicator's state, ask the route policy, explain, and run it with multilane.
//
// nullopt means "the MPI library's": the wrapper then calls PMPI_* with the caller's
// arguments untouched. Otherwise the value is the MPI return code (MPI_SUCCESS, or the code
// of a failure reported by mpi_errors.hpp).
#pragma once

#include <mpi.h>

#include <optional>

#include "mpi/collective_call.hpp"

namespace multilane::mpi {

std::optional<int> run_blocking(WrappedCall call, MPI_Comm comm, const MpiArgs& args);
// On multilane's route, *request is a generalized request (pending_requests.hpp).
std::optional<int> start_nonblocking(WrappedCall call, MPI_Comm comm, const MpiArgs& args,
                                     MPI_Request* request);

}  // namespace multilane::mpi
