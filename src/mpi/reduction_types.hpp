// mpi/reduction_types.hpp — MPI's predefined datatypes and operations as multilane's element
// types and operations (reduction.hpp).
//
// Only what every rank can decide alike from arguments MPI requires to agree: the datatype and
// the operation of a reduction are the same on every rank, so a call that maps on one rank maps
// on all. User operations, MPI_REPLACE, MPI_NO_OP, derived datatypes, MPI_LONG_DOUBLE, the
// complex types and MPI_CHAR (no arithmetic in MPI) do not map: those calls go to the MPI
// library. C integer types map by their size and signedness on this platform. So do the value-
// index pairs with holes (MPI_DOUBLE_INT, MPI_LONG_INT, MPI_SHORT_INT): MPI packs their data
// bytes, and the kernels combine the C struct layout.
#pragma once

#include <mpi.h>

#include <optional>

#include "multilane/reduction.hpp"

namespace multilane::mpi {

// nullopt when the pair does not map, or does not go together (MPI_SUM on MPI_FLOAT_INT):
// the MPI library then serves the call, or reports it.
std::optional<Reduction> reduction_of(MPI_Datatype type, MPI_Op op);

}  // namespace multilane::mpi
