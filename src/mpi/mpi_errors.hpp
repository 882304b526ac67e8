// mpi/mpi_errors.hpp — a failure of a wrapped call, reported the way the communicator's error
// handler asks.
//
// The message names the rank, the call and the cause ("multilane: rank 3 of 8 in MPI_Bcast on
// a communicator of 8 ranks: rank 5 closed its connection ..."). It becomes a new error code of
// the library's error class (PMPI_Add_error_code / PMPI_Add_error_string), so MPI_Error_string
// and MPI_Error_class of the returned code give the message and that class. Then:
//   MPI_ERRORS_ARE_FATAL (the default)  the message goes to stderr, the process ends its multilane
//                                       jobs (unlinking its shared memory) and, half a second
//                                       later, PMPI_Abort ends the job;
//   MPI_ERRORS_RETURN                   the code is returned;
//   a user's handler                    PMPI_Comm_call_errhandler calls it, the code is returned.
#pragma once

#include <mpi.h>

#include <string>
#include <string_view>

namespace multilane::mpi {

// The code to return from the wrapped call (if the handler returns at all).
int report_failure(MPI_Comm comm, std::string_view function, const std::string& cause);

}  // namespace multilane::mpi
