/* tests/mpi/mltest_colls.h — one checked call of each wrapped collective on any communicator:
 * fill with the pattern, call, check every element of every block (mltest.h). Blocks are
 * named by the rank in `comm` they come from; `in_place` uses MPI_IN_PLACE where MPI allows
 * it (scatter and gather at the root, allgather and alltoall everywhere). */
#ifndef MULTILANE_TESTS_MPI_MLTEST_COLLS_H
#define MULTILANE_TESTS_MPI_MLTEST_COLLS_H

#include "mltest.h"

static inline void mltest_bcast(MPI_Comm comm, const MlType* t, long count, int root, int round) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  unsigned char* buf = mltest_alloc(count * t->extent);
  if (rank == root) {
    mltest_fill(buf, t, count, root, 0, round);
  } else {
    memset(buf, 0xEE, count * t->extent);
  }
  MLTEST_CHECK_MPI(MPI_Bcast(buf, (int)count, t->type, root, comm));
  mltest_expect(buf, t, count, root, 0, round, "MPI_Bcast");
  free(buf);
}

static inline void mltest_scatter(MPI_Comm comm, const MlType* t, long count, int root,
                                  int in_place, int round) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const size_t block = count * t->extent;
  unsigned char* send = NULL;
  if (rank == root) {
    send = mltest_alloc(block * size);
    for (int i = 0; i < size; ++i) mltest_fill(send + block * i, t, count, root, i, round);
  }
  unsigned char* recv = mltest_alloc(block);
  memset(recv, 0xEE, block);
  if (in_place && rank == root) {
    MLTEST_CHECK_MPI(
        MPI_Scatter(send, (int)count, t->type, MPI_IN_PLACE, (int)count, t->type, root, comm));
    for (int i = 0; i < size; ++i)
      mltest_expect(send + block * i, t, count, root, i, round,
                    "MPI_Scatter (in place, root's sendbuf)");
  } else {
    MLTEST_CHECK_MPI(MPI_Scatter(send, (int)count, t->type, recv, (int)count, t->type, root, comm));
    mltest_expect(recv, t, count, root, rank, round, "MPI_Scatter");
  }
  free(send);
  free(recv);
}

static inline void mltest_gather(MPI_Comm comm, const MlType* t, long count, int root, int in_place,
                                 int round) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const size_t block = count * t->extent;
  unsigned char* send = mltest_alloc(block);
  mltest_fill(send, t, count, rank, rank, round);
  unsigned char* recv = NULL;
  if (rank == root) {
    recv = mltest_alloc(block * size);
    memset(recv, 0xEE, block * size);
    if (in_place) mltest_fill(recv + block * rank, t, count, rank, rank, round);
  }
  MLTEST_CHECK_MPI(MPI_Gather(in_place && rank == root ? MPI_IN_PLACE : send, (int)count, t->type,
                              recv, (int)count, t->type, root, comm));
  if (rank == root) {
    for (int i = 0; i < size; ++i)
      mltest_expect(recv + block * i, t, count, i, i, round, "MPI_Gather");
  }
  free(send);
  free(recv);
}

static inline void mltest_allgather(MPI_Comm comm, const MlType* t, long count, int in_place,
                                    int round) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const size_t block = count * t->extent;
  unsigned char* send = mltest_alloc(block);
  mltest_fill(send, t, count, rank, rank, round);
  unsigned char* recv = mltest_alloc(block * size);
  memset(recv, 0xEE, block * size);
  if (in_place) mltest_fill(recv + block * rank, t, count, rank, rank, round);
  MLTEST_CHECK_MPI(MPI_Allgather(in_place ? MPI_IN_PLACE : send, (int)count, t->type, recv,
                                 (int)count, t->type, comm));
  for (int i = 0; i < size; ++i)
    mltest_expect(recv + block * i, t, count, i, i, round, "MPI_Allgather");
  free(send);
  free(recv);
}

/* Block j of rank i's input is pattern(i, j * size + ... ): named by sender and destination. */
static inline void mltest_alltoall(MPI_Comm comm, const MlType* t, long count, int in_place,
                                   int round) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const size_t block = count * t->extent;
  unsigned char* send = mltest_alloc(block * size);
  unsigned char* recv = mltest_alloc(block * size);
  unsigned char* input = in_place ? recv : send;
  for (int j = 0; j < size; ++j) mltest_fill(input + block * j, t, count, rank, j, round);
  if (!in_place) memset(recv, 0xEE, block * size);
  MLTEST_CHECK_MPI(MPI_Alltoall(in_place ? MPI_IN_PLACE : send, (int)count, t->type, recv,
                                (int)count, t->type, comm));
  for (int i = 0; i < size; ++i)
    mltest_expect(recv + block * i, t, count, i, rank, round, "MPI_Alltoall");
  free(send);
  free(recv);
}

/* All five, with the roots first, last and middle, plain and in place. */
static inline void mltest_all_collectives(MPI_Comm comm, const MlType* t, long count, int round) {
  int size;
  MPI_Comm_size(comm, &size);
  const int roots[3] = {0, size - 1, size / 2};
  for (int r = 0; r < 3; ++r) {
    if (r > 0 && roots[r] == roots[r - 1]) continue;
    mltest_bcast(comm, t, count, roots[r], round);
    for (int in_place = 0; in_place < 2; ++in_place) {
      mltest_scatter(comm, t, count, roots[r], in_place, round);
      mltest_gather(comm, t, count, roots[r], in_place, round);
    }
  }
  for (int in_place = 0; in_place < 2; ++in_place) {
    mltest_allgather(comm, t, count, in_place, round);
    mltest_alltoall(comm, t, count, in_place, round);
  }
  MLTEST_CHECK_MPI(MPI_Barrier(comm));
}

#endif
