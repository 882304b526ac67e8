// mpi/pmpi_check.hpp — a failed PMPI_* call the library makes on its own behalf becomes a
// multilane::CommunicationError naming the call and MPI's message, so that the wrapped call
// reports it like any other failure (mpi_errors.hpp).
#pragma once

#include <mpi.h>

namespace multilane::mpi {

void pmpi_check(int code, const char* call);

}  // namespace multilane::mpi
