/* bench/after_setup.c — how long the MPI library's small calls take right after a multilane
 * job is set up: one MPI_Bcast of an int (the set-up, when MULTILANE_ALGORITHM_BCAST sends it to
 * multilane), then BLOCKS blocks of CALLS MPI_Allreduce calls of two floats, each between two
 * barriers as OSU times them. Prints the set-up call's time and each block's mean time per call
 * (mean over the ranks), in microseconds.
 *
 *   mpirun -n 4 [-x LD_PRELOAD=libmultilane_mpi.so -x MULTILANE_ALGORITHM_BCAST=auto
 *                -x MULTILANE_ALGORITHM_ALLREDUCE=mpi] after_setup [BLOCKS [CALLS]]
 *
 * It shows whether the MPI library's own calls slow down after a served call, as when unbound
 * ranks sharing cores sleep and wake. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "count_arg.h"

int main(int argc, char** argv) {
  const int blocks = argc > 1 ? count_arg("after_setup", argv[1], "BLOCKS", 10000) : 30;
  const int calls = argc > 2 ? count_arg("after_setup", argv[2], "CALLS", 1000000) : 100;
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  float send[2] = {1, 2}, recv[2];
  int flag = rank;
  MPI_Barrier(MPI_COMM_WORLD);
  const double set_up_start = MPI_Wtime();
  MPI_Bcast(&flag, 1, MPI_INT, 0, MPI_COMM_WORLD);
  const double set_up = MPI_Wtime() - set_up_start;
  double* means = malloc(sizeof(double) * (size_t)blocks);
  for (int b = 0; b < blocks; ++b) {
    double sum = 0;
    for (int i = 0; i < calls; ++i) {
      MPI_Barrier(MPI_COMM_WORLD);
      const double start = MPI_Wtime();
      MPI_Allreduce(send, recv, 2, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      sum += MPI_Wtime() - start;
      MPI_Barrier(MPI_COMM_WORLD);
    }
    means[b] = sum / calls;
  }
  MPI_Allreduce(MPI_IN_PLACE, means, blocks, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    printf("set-up call %.1f us; blocks of %d calls (us per call):", set_up * 1e6, calls);
    for (int b = 0; b < blocks; ++b) printf(" %.2f", means[b] / size * 1e6);
    printf("\n");
  }
  free(means);
  MPI_Finalize();
  return 0;
}
