/* tests/mpi/coll_comms.c — the wrapped collectives on communicators other than
 * MPI_COMM_WORLD: MPI_Comm_split into odd and even ranks, a split with reversed keys (rank
 * order turned around), MPI_Comm_dup, MPI_Comm_create of the first half; then each is freed
 * and a fresh dup (which may reuse a freed handle) must work too. Every element checked. */
#include "mltest_colls.h"

/* 1 MiB + 3 bytes only where `large` (the suite's time is short). */
static void exercise(MPI_Comm comm, int* round, int large) {
  MlType ints = mltest_dense(MPI_INT, "MPI_INT", sizeof(int));
  MlType bytes = mltest_dense(MPI_BYTE, "MPI_BYTE", 1);
  mltest_all_collectives(comm, &ints, 7, ++*round);
  mltest_all_collectives(comm, &ints, 1000, ++*round);
  if (large) mltest_all_collectives(comm, &bytes, (1L << 20) + 3, ++*round);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size, round = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  MPI_Comm parity, reversed, dup, half;
  MLTEST_CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &parity));
  MLTEST_CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &reversed));
  MLTEST_CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
  MPI_Group world_group, half_group;
  MPI_Comm_group(MPI_COMM_WORLD, &world_group);
  int range[1][3] = {{0, (size - 1) / 2, 1}};
  MPI_Group_range_incl(world_group, 1, range, &half_group);
  MLTEST_CHECK_MPI(MPI_Comm_create(MPI_COMM_WORLD, half_group, &half));

  int reversed_rank = -1;
  MPI_Comm_rank(reversed, &reversed_rank);
  if (reversed_rank != size - 1 - rank) MLTEST_FAIL("reversed split gave rank %d", reversed_rank);

  exercise(parity, &round, 0);
  exercise(reversed, &round, 1);
  exercise(dup, &round, 0);
  if (half != MPI_COMM_NULL) {
    exercise(half, &round, 0);
  } else {
    round += 2; /* the rounds stay the same on every rank */
  }
  exercise(MPI_COMM_WORLD, &round, 0); /* interleaved with the others' states */

  MPI_Comm_free(&parity);
  MPI_Comm_free(&reversed);
  MPI_Comm_free(&dup);
  if (half != MPI_COMM_NULL) MPI_Comm_free(&half);
  MPI_Group_free(&half_group);
  MPI_Group_free(&world_group);

  for (int i = 0; i < 3; ++i) { /* fresh communicators after frees */
    MPI_Comm again;
    MLTEST_CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &again));
    exercise(again, &round, i == 0);
    MPI_Comm_free(&again);
  }
  return mltest_finish();
}
