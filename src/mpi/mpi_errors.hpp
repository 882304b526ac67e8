// mpi/mpi_errors.hpp — a failure of a wrapped call, reported the way the communicator's error
// handler asks, under the MPI error class of its kind.
//
// The message names the rank, the call, the kind and the cause ("multilane: rank 3 (world rank
// 3) in MPI_Bcast on a communicator of 8 ranks: peer gone: rank 5 closed its connections ...").
// It becomes a new error code (PMPI_Add_error_code / PMPI_Add_error_string) of the class of its
// kind (multilane/errors.hpp):
//   usage, platform  MPI_ERR_ARG      (a setting or file of multilane's; the MPI library itself
//                                      reports the arguments of a call: count, type, root, op)
//   resource         MPI_ERR_NO_MEM
//   timeout, peer gone, authentication, mismatch, protocol, internal: a class of multilane's
//                    own each (PMPI_Add_error_class), whose MPI_Error_string is
//                    "multilane: <kind>" ("multilane: peer gone").
// Where the MPI library does not keep a code's own text under a predefined class (MPICH gives
// the class's text), usage and resource get classes of their own too, so MPI_Error_string of the
// code always gives the message. MPI_Error_class of the code gives the class. Then:
//   MPI_ERRORS_ARE_FATAL (the default)  the message goes to stderr, the process ends its multilane
//                                       jobs (unlinking its shared memory) and, half a second
//                                       later, PMPI_Abort ends the job;
//   MPI_ERRORS_RETURN                   the code is returned;
//   a user's handler                    PMPI_Comm_call_errhandler calls it, the code is returned.
#pragma once

#include <mpi.h>

#include <array>
#include <exception>
#include <string_view>

#include "multilane/errors.hpp"
#include "runtime/tcp/transport_error.hpp"

namespace multilane::mpi {

// The MPI error class of each ErrorKind, indexed by the kind.
using ErrorClasses = std::array<int, static_cast<std::size_t>(ErrorKind::internal) + 1>;

// Made once, when the library starts (after MPI_Init).
ErrorClasses make_error_classes();

// The code to return from the wrapped call (if the handler returns at all).
int report_failure(MPI_Comm comm, std::string_view function, const runtime::Failure& failure);
int report_failure(MPI_Comm comm, std::string_view function, const std::exception& error);

}  // namespace multilane::mpi
