// mpi/init_finalize.cpp — MPI_Init, MPI_Init_thread and MPI_Finalize: the MPI library's, with
// the PMPI library started after initialisation and stopped before finalisation (library.hpp).
#include <mpi.h>

#include "mpi/library.hpp"

extern "C" {

int MPI_Init(int* argc, char*** argv) {
  const int code = PMPI_Init(argc, argv);
  if (code == MPI_SUCCESS) multilane::mpi::start_library();
  return code;
}

int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  const int code = PMPI_Init_thread(argc, argv, required, provided);
  if (code == MPI_SUCCESS) multilane::mpi::start_library();
  return code;
}

int MPI_Finalize(void) {
  multilane::mpi::stop_library();
  return PMPI_Finalize();
}

}  // extern "C"
