/* tests/mpi/v_while_blocked.c — nonblocking v-forms move their data while a rank blocks in a
 * call the library does not wrap, whatever counts their algorithm reads: only each rank's own
 * (MULTILANE_ALGORITHM_GATHERV=linear, ALLTOALLV=pairwise), or every rank's, which then travel
 * first on multilane's engine (GATHERV=binomial, ALLTOALLV=auto).
 *
 * Every rank starts MPI_Ialltoallv, MPI_Igatherv (root 0) and MPI_Iscatterv (root 0) with
 * uneven counts (zeros among them); rank 0 then blocks in MPI_Recv from the last rank, which
 * sends only after its own MPI_Waitall returned, so the last rank's calls must complete while
 * rank 0 is in MPI_Recv (a call that waited for rank 0's next wrapped call to start would
 * deadlock). Then rank 0 waits for its own. Every int is checked, the rounds run twice. Prints
 * "No Errors". */
#include "mltest.h"

static int value(int origin, int dest, int k, int round) {
  return origin * 1000003 + dest * 7919 + k * 13 + round * 101 + 1;
}

/* Ints from rank i to rank j of the alltoallv; of rank i's block of the gatherv and scatterv. */
static int pair_count(int i, int j) {
  return (i + 2 * j) % 3 * 5;
}
static int block_count(int i) {
  return i % 3 == 1 ? 0 : 7 + i;
}

static void expect_ints(const int* got, const int* want, int n, const char* what, int round) {
  for (int k = 0; k < n; ++k) {
    if (got[k] != want[k]) {
      MLTEST_FAIL("%s round %d: int %d is %d, expected %d", what, round, k, got[k], want[k]);
      return;
    }
  }
}

static void run_round(int rank, int p, int round) {
  int *scounts = malloc(sizeof(int) * p), *sdispls = malloc(sizeof(int) * p);
  int *rcounts = malloc(sizeof(int) * p), *rdispls = malloc(sizeof(int) * p);
  int *bcounts = malloc(sizeof(int) * p), *bdispls = malloc(sizeof(int) * p);
  int sn = 0, rn = 0, bn = 0;
  for (int j = 0; j < p; ++j) {
    scounts[j] = pair_count(rank, j);
    sdispls[j] = sn;
    sn += scounts[j];
    rcounts[j] = pair_count(j, rank);
    rdispls[j] = rn;
    rn += rcounts[j];
    bcounts[j] = block_count(j);
    bdispls[j] = bn;
    bn += bcounts[j];
  }
  int* asend = mltest_alloc(sizeof(int) * (sn + 1));
  int* arecv = mltest_alloc(sizeof(int) * (rn + 1));
  int* awant = mltest_alloc(sizeof(int) * (rn + 1));
  for (int j = 0; j < p; ++j) {
    for (int k = 0; k < scounts[j]; ++k) asend[sdispls[j] + k] = value(rank, j, k, round);
    for (int k = 0; k < rcounts[j]; ++k) awant[rdispls[j] + k] = value(j, rank, k, round);
  }
  const int own = block_count(rank);
  int* gsend = mltest_alloc(sizeof(int) * (own + 1));
  for (int k = 0; k < own; ++k) gsend[k] = value(rank, 0, k, round);
  int* grecv = mltest_alloc(sizeof(int) * (bn + 1));
  int* ssend = mltest_alloc(sizeof(int) * (bn + 1));
  int* srecv = mltest_alloc(sizeof(int) * (own + 1));
  for (int j = 0; j < p; ++j) {
    for (int k = 0; k < bcounts[j]; ++k) ssend[bdispls[j] + k] = value(0, j, k, round + 7);
  }
  MPI_Request requests[3];
  MLTEST_CHECK_MPI(MPI_Ialltoallv(asend, scounts, sdispls, MPI_INT, arecv, rcounts, rdispls,
                                  MPI_INT, MPI_COMM_WORLD, &requests[0]));
  MLTEST_CHECK_MPI(MPI_Igatherv(gsend, own, MPI_INT, grecv, bcounts, bdispls, MPI_INT, 0,
                                MPI_COMM_WORLD, &requests[1]));
  MLTEST_CHECK_MPI(MPI_Iscatterv(ssend, bcounts, bdispls, MPI_INT, srecv, own, MPI_INT, 0,
                                 MPI_COMM_WORLD, &requests[2]));
  int token = -1;
  if (p > 1 && rank == 0) {
    MLTEST_CHECK_MPI(MPI_Recv(&token, 1, MPI_INT, p - 1, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    if (token != round) MLTEST_FAIL("round %d: the last rank sent %d", round, token);
  }
  MPI_Status statuses[3];
  MLTEST_CHECK_MPI(MPI_Waitall(3, requests, statuses));
  if (p > 1 && rank == p - 1) {
    token = round;
    MLTEST_CHECK_MPI(MPI_Send(&token, 1, MPI_INT, 0, 5, MPI_COMM_WORLD));
  }
  expect_ints(arecv, awant, rn, "MPI_Ialltoallv", round);
  if (rank == 0) {
    for (int j = 0; j < p; ++j) {
      for (int k = 0; k < bcounts[j]; ++k) {
        if (grecv[bdispls[j] + k] != value(j, 0, k, round)) {
          MLTEST_FAIL("MPI_Igatherv round %d: int %d of rank %d's block is %d", round, k, j,
                      grecv[bdispls[j] + k]);
          break;
        }
      }
    }
  }
  for (int k = 0; k < own; ++k) {
    if (srecv[k] != value(0, rank, k, round + 7)) {
      MLTEST_FAIL("MPI_Iscatterv round %d: int %d is %d", round, k, srecv[k]);
      break;
    }
  }
  free(asend), free(arecv), free(awant), free(gsend), free(grecv), free(ssend), free(srecv);
  free(scounts), free(sdispls), free(rcounts), free(rdispls), free(bcounts), free(bdispls);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, p = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  /* A blocking call first sets the communicator up: a nonblocking one never does. */
  int ranks = 0;
  MLTEST_CHECK_MPI(MPI_Allreduce(&(int){1}, &ranks, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
  if (ranks != p) MLTEST_FAIL("MPI_Allreduce: %d ranks, expected %d", ranks, p);
  for (int round = 0; round < 2; ++round) run_round(rank, p, round);
  return mltest_finish();
}
