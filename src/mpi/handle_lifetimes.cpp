// mpi/handle_lifetimes.cpp — the wrapped MPI_Type_free and MPI_Op_free: a freed handle may name
// a new datatype or op later, so the calls remembered by handle are forgotten
// (repeated_calls.hpp, pass_through_state.hpp).
#include <mpi.h>

#include "mpi/pass_through_state.hpp"

extern "C" {

int MPI_Type_free(MPI_Datatype* datatype) {
  multilane::mpi::pass_through_state.handle_generation.fetch_add(1, std::memory_order_relaxed);
  return PMPI_Type_free(datatype);
}

int MPI_Op_free(MPI_Op* op) {
  multilane::mpi::pass_through_state.handle_generation.fetch_add(1, std::memory_order_relaxed);
  return PMPI_Op_free(op);
}

}  // extern "C"
