/* tests/mpi/coll_nonblocking.c — the non-blocking collectives, overlapping each other and the
 * MPI library's own point-to-point requests, completed by every wait and test form:
 * MPI_Waitall over a mix, MPI_Request_get_status loops then MPI_Test, MPI_Waitany,
 * MPI_Waitsome, MPI_Wait. Each round starts all six collectives (on MPI_COMM_WORLD and a dup)
 * before completing any. Last, with the argument `free-before-wait`, an MPI_Ibcast whose
 * communicator is freed before the wait. */
#include "mltest.h"

enum { kCalls = 8 };

typedef struct {
  unsigned char *bcast, *scatter_send, *scatter_recv, *gather_send, *gather_recv;
  unsigned char *allgather_send, *allgather_recv, *alltoall, *ring_send, *ring_recv;
} Buffers;

static void run_round(MPI_Comm comm, MPI_Comm other, const MlType* t, long count, int round,
                      int how) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const size_t block = count * t->extent;
  const int last = size - 1, middle = size / 2;
  Buffers b;
  b.bcast = mltest_alloc(block);
  b.scatter_send = mltest_alloc(block * size);
  b.scatter_recv = mltest_alloc(block);
  b.gather_send = mltest_alloc(block);
  b.gather_recv = mltest_alloc(block * size);
  b.allgather_send = mltest_alloc(block);
  b.allgather_recv = mltest_alloc(block * size);
  b.alltoall = mltest_alloc(block * size);
  b.ring_send = mltest_alloc(block);
  b.ring_recv = mltest_alloc(block);
  memset(b.bcast, 0xEE, block);
  if (rank == 0) mltest_fill(b.bcast, t, count, 0, 0, round);
  if (rank == last) {
    for (int i = 0; i < size; ++i)
      mltest_fill(b.scatter_send + block * i, t, count, last, i, round);
  }
  mltest_fill(b.gather_send, t, count, rank, rank, round);
  mltest_fill(b.allgather_send, t, count, rank, rank, round);
  for (int j = 0; j < size; ++j) mltest_fill(b.alltoall + block * j, t, count, rank, j, round);
  mltest_fill(b.ring_send, t, count, rank, 99, round);

  MPI_Request r[kCalls];
  MLTEST_CHECK_MPI(
      MPI_Irecv(b.ring_recv, (int)count, t->type, (rank + size - 1) % size, 7, comm, &r[0]));
  MLTEST_CHECK_MPI(MPI_Ibcast(b.bcast, (int)count, t->type, 0, comm, &r[1]));
  MLTEST_CHECK_MPI(MPI_Iscatter(b.scatter_send, (int)count, t->type, b.scatter_recv, (int)count,
                                t->type, last, other, &r[2]));
  MLTEST_CHECK_MPI(MPI_Igather(b.gather_send, (int)count, t->type, b.gather_recv, (int)count,
                               t->type, middle, comm, &r[3]));
  MLTEST_CHECK_MPI(MPI_Iallgather(b.allgather_send, (int)count, t->type, b.allgather_recv,
                                  (int)count, t->type, other, &r[4]));
  MLTEST_CHECK_MPI(MPI_Ialltoall(MPI_IN_PLACE, (int)count, t->type, b.alltoall, (int)count, t->type,
                                 comm, &r[5]));
  MLTEST_CHECK_MPI(MPI_Ibarrier(other, &r[6]));
  MLTEST_CHECK_MPI(MPI_Isend(b.ring_send, (int)count, t->type, (rank + 1) % size, 7, comm, &r[7]));

  MPI_Status statuses[kCalls]; /* not MPI_STATUSES_IGNORE: GCC warns on MPICH's (pointer 1) */
  if (how == 0) {
    MLTEST_CHECK_MPI(MPI_Waitall(kCalls, r, statuses));
  } else if (how == 1) {
    for (int i = kCalls - 1; i >= 0; --i) {
      int flag = 0;
      while (!flag) MLTEST_CHECK_MPI(MPI_Request_get_status(r[i], &flag, MPI_STATUS_IGNORE));
      MLTEST_CHECK_MPI(MPI_Test(&r[i], &flag, MPI_STATUS_IGNORE));
      if (!flag) MLTEST_FAIL("MPI_Test of request %d failed after MPI_Request_get_status", i);
    }
  } else if (how == 2) {
    for (int done = 0; done < kCalls; ++done) {
      int index = -1;
      MLTEST_CHECK_MPI(MPI_Waitany(kCalls, r, &index, MPI_STATUS_IGNORE));
      if (index < 0 || index >= kCalls) MLTEST_FAIL("MPI_Waitany gave index %d", index);
    }
  } else {
    int done = 0;
    while (done < kCalls) {
      int outcount = 0, indices[kCalls];
      MLTEST_CHECK_MPI(MPI_Waitsome(kCalls, r, &outcount, indices, statuses));
      if (outcount == MPI_UNDEFINED) break;
      done += outcount;
    }
    if (done != kCalls) MLTEST_FAIL("MPI_Waitsome completed %d of %d", done, kCalls);
  }
  for (int i = 0; i < kCalls; ++i) {
    if (r[i] != MPI_REQUEST_NULL) MLTEST_FAIL("request %d not freed after completion", i);
  }

  mltest_expect(b.bcast, t, count, 0, 0, round, "MPI_Ibcast");
  mltest_expect(b.scatter_recv, t, count, last, rank, round, "MPI_Iscatter");
  if (rank == middle) {
    for (int i = 0; i < size; ++i)
      mltest_expect(b.gather_recv + block * i, t, count, i, i, round, "MPI_Igather");
  }
  for (int i = 0; i < size; ++i) {
    mltest_expect(b.allgather_recv + block * i, t, count, i, i, round, "MPI_Iallgather");
    mltest_expect(b.alltoall + block * i, t, count, i, rank, round, "MPI_Ialltoall (in place)");
  }
  mltest_expect(b.ring_recv, t, count, (rank + size - 1) % size, 99, round, "MPI_Irecv");
  free(b.bcast);
  free(b.scatter_send);
  free(b.scatter_recv);
  free(b.gather_send);
  free(b.gather_recv);
  free(b.allgather_send);
  free(b.allgather_recv);
  free(b.alltoall);
  free(b.ring_send);
  free(b.ring_recv);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  MlType ints = mltest_dense(MPI_INT, "MPI_INT", sizeof(int));
  MlType bytes = mltest_dense(MPI_BYTE, "MPI_BYTE", 1);
  const long counts[] = {0, 1, 1000};
  int round = 0;
  for (int how = 0; how < 4; ++how) {
    for (int c = 0; c < 3; ++c) run_round(MPI_COMM_WORLD, dup, &ints, counts[c], ++round, how);
    run_round(MPI_COMM_WORLD, dup, &bytes, (1L << 20) + 3, ++round, how);
  }
  /* A single MPI_Wait on each, in start order. */
  MPI_Request one;
  int value = 0, rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) value = 4242;
  MLTEST_CHECK_MPI(MPI_Ibcast(&value, 1, MPI_INT, 0, dup, &one));
  MLTEST_CHECK_MPI(MPI_Wait(&one, MPI_STATUS_IGNORE));
  if (value != 4242) MLTEST_FAIL("MPI_Ibcast + MPI_Wait gave %d", value);
  MPI_Comm_free(&dup);

  /* MPI lets a program free a communicator before its pending calls complete. Only with
   * `free-before-wait`: Open MPI 4.1.4's own MPI_Ibcast crashes on that (7 ranks, 1 MiB). */
  if (argc < 2 || strcmp(argv[1], "free-before-wait") != 0) return mltest_finish();
  MPI_Comm doomed;
  MPI_Comm_dup(MPI_COMM_WORLD, &doomed);
  const long big = (1L << 20) + 3;
  unsigned char* data = mltest_alloc(big);
  ++round;
  if (rank == 0) {
    mltest_fill(data, &bytes, big, 0, 0, round);
  } else {
    memset(data, 0xEE, big);
  }
  MLTEST_CHECK_MPI(MPI_Ibcast(data, (int)big, MPI_BYTE, 0, doomed, &one));
  MLTEST_CHECK_MPI(MPI_Comm_free(&doomed));
  MLTEST_CHECK_MPI(MPI_Wait(&one, MPI_STATUS_IGNORE));
  mltest_expect(data, &bytes, big, 0, 0, round, "MPI_Ibcast on a freed communicator");
  free(data);
  return mltest_finish();
}
