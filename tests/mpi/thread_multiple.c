/* tests/mpi/thread_multiple.c — a program initialised with MPI_THREAD_MULTIPLE whose threads
 * call collectives at the same time, each on its own communicator.
 *
 * The main thread makes kThreads communicators (duplicates of MPI_COMM_WORLD, and the last one
 * split with the ranks in reverse order), then each thread, on its own, makes kRounds rounds of:
 *   - the rooted and unrooted collectives of mltest_all_collectives() (every root, in place);
 *   - MPI_Allreduce and MPI_Reduce of ints (sum);
 *   - MPI_Ibcast and MPI_Iallreduce with an MPI_Isend/MPI_Irecv pair on the same communicator,
 *     all four completed by one MPI_Waitall (the library's requests and the MPI library's mixed),
 *     and an MPI_Iallgather completed by MPI_Test in a loop;
 * every element checked; then frees its communicator (MPI_Comm_free on several threads at once).
 * Each thread's block size differs (so a mix-up between communicators shows in the bytes).
 *
 * Prints "provided MPI_THREAD_MULTIPLE" when MPI granted it (the program fails otherwise), and on
 * rank 0, with the library loaded, "served by multilane: B blocking, N nonblocking; jobs: M made,
 * S shared" from the library's counters (multilane_mpi_counters()), which tests/mpi.cmake checks
 * when every call is forced to multilane: the duplicates and the split one (its ranks in another
 * order) share MPI_COMM_WORLD's job. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>

#include "mltest_colls.h"

enum { kThreads = 4, kRounds = 3 };

typedef struct {
  MPI_Comm comm;
  int index;
} ThreadWork;

static MlType ints;

static void check_sums(const int* got, long count, int size, int round, const char* what) {
  for (long i = 0; i < count; ++i) {
    long expected = 0;
    for (int r = 0; r < size; ++r) expected += (long)(r * 7 + i % 13 + round);
    if (got[i] != (int)expected) {
      MLTEST_FAIL("%s: element %ld is %d, expected %ld (round %d)", what, i, got[i], expected,
                  round);
      return;
    }
  }
}

static void fill_ints(int* values, long count, int rank, int round) {
  for (long i = 0; i < count; ++i) values[i] = rank * 7 + (int)(i % 13) + round;
}

static void reductions(MPI_Comm comm, long count, int round) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int* send = malloc(count * sizeof(int));
  int* recv = malloc(count * sizeof(int));
  fill_ints(send, count, rank, round);
  MLTEST_CHECK_MPI(MPI_Allreduce(send, recv, (int)count, MPI_INT, MPI_SUM, comm));
  check_sums(recv, count, size, round, "MPI_Allreduce");
  memset(recv, 0, count * sizeof(int));
  MLTEST_CHECK_MPI(MPI_Reduce(send, recv, (int)count, MPI_INT, MPI_SUM, size - 1, comm));
  if (rank == size - 1) check_sums(recv, count, size, round, "MPI_Reduce");
  free(send);
  free(recv);
}

/* Both kinds of request in one MPI_Waitall; then an MPI_Test loop. */
static void nonblocking(MPI_Comm comm, long count, int round) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const size_t block = count * ints.extent;
  unsigned char* bcast = mltest_alloc(block);
  if (rank == 0) mltest_fill(bcast, &ints, count, 0, 0, round);
  int* send = malloc(count * sizeof(int));
  int* sums = malloc(count * sizeof(int));
  fill_ints(send, count, rank, round);
  int token_out = rank * 1000 + round, token_in = -1;
  const int next = (rank + 1) % size, previous = (rank + size - 1) % size;
  MPI_Request requests[4];
  MPI_Status statuses[4];
  MLTEST_CHECK_MPI(MPI_Ibcast(bcast, (int)count, ints.type, 0, comm, &requests[0]));
  MLTEST_CHECK_MPI(MPI_Iallreduce(send, sums, (int)count, MPI_INT, MPI_SUM, comm, &requests[1]));
  MLTEST_CHECK_MPI(MPI_Irecv(&token_in, 1, MPI_INT, previous, 7, comm, &requests[2]));
  MLTEST_CHECK_MPI(MPI_Isend(&token_out, 1, MPI_INT, next, 7, comm, &requests[3]));
  MLTEST_CHECK_MPI(MPI_Waitall(4, requests, statuses));
  mltest_expect(bcast, &ints, count, 0, 0, round, "MPI_Ibcast");
  check_sums(sums, count, size, round, "MPI_Iallreduce");
  if (token_in != previous * 1000 + round) {
    MLTEST_FAIL("MPI_Irecv beside collectives: got %d from rank %d", token_in, previous);
  }

  unsigned char* mine = mltest_alloc(block);
  unsigned char* all = mltest_alloc(block * size);
  mltest_fill(mine, &ints, count, rank, 0, round);
  MPI_Request gather;
  MLTEST_CHECK_MPI(
      MPI_Iallgather(mine, (int)count, ints.type, all, (int)count, ints.type, comm, &gather));
  int done = 0;
  while (!done) MLTEST_CHECK_MPI(MPI_Test(&gather, &done, MPI_STATUS_IGNORE));
  for (int r = 0; r < size; ++r) {
    mltest_expect(all + block * r, &ints, count, r, 0, round, "MPI_Iallgather");
  }
  free(bcast);
  free(send);
  free(sums);
  free(mine);
  free(all);
}

static void* run_thread(void* argument) {
  ThreadWork* work = argument;
  const long count = 1000 + 333 * work->index;
  for (int round = 0; round < kRounds; ++round) {
    mltest_all_collectives(work->comm, &ints, count, round + 10 * work->index);
    reductions(work->comm, count, round);
    nonblocking(work->comm, count, round);
  }
  MLTEST_CHECK_MPI(MPI_Comm_free(&work->comm));
  return NULL;
}

typedef int (*CountersFunction)(unsigned long long* values, int count);

int main(int argc, char** argv) {
  int provided = MPI_THREAD_SINGLE;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (provided != MPI_THREAD_MULTIPLE) {
    MLTEST_FAIL("MPI_Init_thread provided %d, not MPI_THREAD_MULTIPLE", provided);
    return mltest_finish();
  }
  if (rank == 0) printf("provided MPI_THREAD_MULTIPLE\n");
  ints = mltest_dense(MPI_INT, "MPI_INT", sizeof(int));

  ThreadWork work[kThreads];
  for (int t = 0; t < kThreads; ++t) {
    work[t].index = t;
    if (t == kThreads - 1) {
      MLTEST_CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &work[t].comm));
    } else {
      MLTEST_CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &work[t].comm));
    }
  }
  pthread_t threads[kThreads];
  for (int t = 0; t < kThreads; ++t) pthread_create(&threads[t], NULL, run_thread, &work[t]);
  for (int t = 0; t < kThreads; ++t) pthread_join(threads[t], NULL);

  CountersFunction counters = NULL;
  /* POSIX's way to take a function from dlsym without converting the pointer in ISO C. */
  *(void**)(&counters) = dlsym(RTLD_DEFAULT, "multilane_mpi_counters");
  if (counters != NULL && rank == 0) {
    unsigned long long values[7] = {0};
    counters(values, 7);
    printf("served by multilane: %llu blocking, %llu nonblocking; jobs: %llu made, %llu shared\n",
           values[0], values[2], values[5], values[6]);
  }
  return mltest_finish();
}
