/* tests/mpi/thread_multiple.c — a program initialised with MPI_THREAD_MULTIPLE: the library
 * leaves every call to the MPI library (a multilane Communicator is used by one thread at a
 * time), and the calls still give exact results. Prints "provided MPI_THREAD_MULTIPLE" when MPI
 * granted it; run with MULTILANE_EXPLAIN=1 and forced routes, nothing may be explained. */
#include "mltest_colls.h"

int main(int argc, char** argv) {
  int provided = MPI_THREAD_SINGLE;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0 && provided == MPI_THREAD_MULTIPLE) printf("provided MPI_THREAD_MULTIPLE\n");
  MlType ints = mltest_dense(MPI_INT, "MPI_INT", sizeof(int));
  mltest_all_collectives(MPI_COMM_WORLD, &ints, 1000, 1);
  return mltest_finish();
}
