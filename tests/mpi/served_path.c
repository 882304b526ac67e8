/* tests/mpi/served_path.c — a call the library serves costs no allocation and no thread
 * hand-off, and a nonblocking call keeps what it needs.
 *
 * Run with the library preloaded and every collective forced to multilane, on one node or as
 * several (tests/mpi/as_nodes.sh: TCP between the nodes, shared memory within them):
 *   1. after a warm-up, 200 blocking calls of each of MPI_Bcast (1 B), MPI_Allreduce (4
 *      floats) and MPI_Barrier are served by multilane (the library's counters,
 *      multilane_mpi_counters()), each on the caller's thread (no operation handed to another
 *      thread), with no heap allocation on this thread (malloc is counted here), and every
 *      element is right;
 *   2. MPI_Igather and MPI_Ibcast whose derived datatypes (both sides) are freed before the
 *      wait deliver every element (MPI allows the free; the library keeps its own copy);
 *   3. on a fresh communicator, rank 0 calls MPI_Ibcast then MPI_Send and rank 1 MPI_Recv then
 *      MPI_Ibcast (legal MPI): the nonblocking call must not wait for rank 1 to set anything up.
 * With the argument `routes [ROUNDS]` (the library's own route, not forced), it makes ROUNDS
 * (50) rounds of the blocking calls only, checking every element: enough for the library to
 * decide their classes (tests/mpi.cmake checks what MULTILANE_EXPLAIN says and the tuning
 * file it writes), or with 80, to measure a multilane decision again at its 64th call.
 * With the argument `long`, it makes 20 rounds of MPI_Gather of 1 MiB blocks (the root going
 * round), checking every byte at the root: a long class, whose times are its slowest rank's.
 * With the argument `retyped` (the library's own route), a call the library remembers as going
 * to the MPI library (a bcast of one element of an empty datatype: no data) is made again after
 * its datatype is freed and a new one of 8 bytes is made, which MPI may give the same handle:
 * the new call must be classed anew (explored, so some of its first ten calls run multilane:
 * the MPI library's block of a short class is eight), not taken for the remembered one.
 * With the argument `passes` (the allreduce's route forced to the MPI library): after two
 * rounds, 100 MPI_Allreduce and 100 MPI_Iallreduce + MPI_Wait of 4 floats pass through,
 * each the same call again: no look-up, so the library's counters of calls given to the MPI
 * library after a look-up do not move, and every element is right.
 */
#define _GNU_SOURCE
#include <dlfcn.h>

#include "mltest.h"

extern void* __libc_malloc(size_t size);
extern void* __libc_calloc(size_t count, size_t size);
extern void* __libc_realloc(void* pointer, size_t size);
extern void __libc_free(void* pointer);

static __thread int counting = 0;
static __thread long allocations = 0;

void* malloc(size_t size) {
  if (counting) ++allocations;
  return __libc_malloc(size);
}
void* calloc(size_t count, size_t size) {
  if (counting) ++allocations;
  return __libc_calloc(count, size);
}
void* realloc(void* pointer, size_t size) {
  if (counting) ++allocations;
  return __libc_realloc(pointer, size);
}
void free(void* pointer) {
  __libc_free(pointer);
}

typedef int (*CountersFunction)(unsigned long long* values, int count);
enum { kBlockingMultilane, kBlockingMpi, kNonblockingMultilane, kNonblockingMpi, kHandedOff };

static void read_counters(CountersFunction counters, unsigned long long values[5]) {
  memset(values, 0, 5 * sizeof values[0]);
  counters(values, 5);
}

static void blocking_calls(int rank, int size, int calls, int check) {
  for (int i = 0; i < calls; ++i) {
    unsigned char byte = rank == i % size ? (unsigned char)(i + 1) : 0;
    MLTEST_CHECK_MPI(MPI_Bcast(&byte, 1, MPI_UNSIGNED_CHAR, i % size, MPI_COMM_WORLD));
    if (check && byte != (unsigned char)(i + 1)) MLTEST_FAIL("bcast %d: got %d", i, byte);
    float mine[4], sums[4];
    for (int k = 0; k < 4; ++k) mine[k] = (float)(rank + k + i);
    MLTEST_CHECK_MPI(MPI_Allreduce(mine, sums, 4, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD));
    for (int k = 0; check && k < 4; ++k) {
      const float expected = (float)(size * (size - 1) / 2 + size * (k + i));
      if (sums[k] != expected) MLTEST_FAIL("allreduce %d[%d]: %g, not %g", i, k, sums[k], expected);
    }
    MLTEST_CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
  }
}

static void long_gathers(int rank, int size) {
  const long block = 1 << 20;
  const MlType bytes = mltest_dense(MPI_BYTE, "MPI_BYTE", 1);
  unsigned char* mine = mltest_alloc((size_t)block);
  unsigned char* all = mltest_alloc((size_t)block * (size_t)size);
  for (int round = 0; round < 20; ++round) {
    const int root = round % size;
    mltest_fill(mine, &bytes, block, rank, 0, round);
    MLTEST_CHECK_MPI(
        MPI_Gather(mine, (int)block, MPI_BYTE, all, (int)block, MPI_BYTE, root, MPI_COMM_WORLD));
    for (int r = 0; rank == root && r < size; ++r) {
      mltest_expect(all + (size_t)r * (size_t)block, &bytes, block, r, 0, round, "MPI_Gather");
    }
  }
  free(mine);
  free(all);
}

static void served_without_allocation(CountersFunction counters, int rank, int size) {
  const int calls = 200;
  blocking_calls(rank, size, 20, 1);
  unsigned long long before[5], after[5];
  read_counters(counters, before);
  counting = 1;
  blocking_calls(rank, size, calls, 1);
  counting = 0;
  read_counters(counters, after);
  if (after[kBlockingMultilane] - before[kBlockingMultilane] != 3ull * calls) {
    MLTEST_FAIL("%llu blocking calls served by multilane, not %d",
                after[kBlockingMultilane] - before[kBlockingMultilane], 3 * calls);
  }
  if (after[kHandedOff] != before[kHandedOff]) {
    MLTEST_FAIL("%llu blocking calls handed work to another thread",
                after[kHandedOff] - before[kHandedOff]);
  }
  if (allocations != 0)
    MLTEST_FAIL("%ld heap allocations in %d served calls", allocations, 3 * calls);
}

static void types_freed_before_the_wait(int rank, int size) {
  /* Every other int of 2 * n: a vector type (resized to span its 2 * n ints), dup'ed as
   * nonblocking2 does, on both sides. */
  const int n = 100;
  MPI_Datatype strided, vector, send_type, recv_type;
  MLTEST_CHECK_MPI(MPI_Type_vector(n, 1, 2, MPI_INT, &strided));
  MLTEST_CHECK_MPI(MPI_Type_create_resized(strided, 0, 2 * n * (MPI_Aint)sizeof(int), &vector));
  MLTEST_CHECK_MPI(MPI_Type_free(&strided));
  MLTEST_CHECK_MPI(MPI_Type_commit(&vector));
  MLTEST_CHECK_MPI(MPI_Type_dup(vector, &send_type));
  MLTEST_CHECK_MPI(MPI_Type_dup(vector, &recv_type));
  int* mine = calloc(2 * (size_t)n, sizeof(int));
  int* all = calloc(2 * (size_t)n * (size_t)size, sizeof(int));
  for (int i = 0; i < n; ++i) mine[2 * i] = rank * 1000 + i;
  MPI_Request requests[2];
  MLTEST_CHECK_MPI(
      MPI_Igather(mine, 1, send_type, all, 1, recv_type, 0, MPI_COMM_WORLD, &requests[0]));
  int* bcast = calloc(2 * (size_t)n, sizeof(int));
  for (int i = 0; rank == 0 && i < n; ++i) bcast[2 * i] = 7 * i + 1;
  MLTEST_CHECK_MPI(MPI_Ibcast(bcast, 1, recv_type, 0, MPI_COMM_WORLD, &requests[1]));
  MLTEST_CHECK_MPI(MPI_Type_free(&send_type));
  MLTEST_CHECK_MPI(MPI_Type_free(&recv_type));
  MLTEST_CHECK_MPI(MPI_Type_free(&vector));
  MPI_Status statuses[2];
  MLTEST_CHECK_MPI(MPI_Waitall(2, requests, statuses));
  for (int r = 0; rank == 0 && r < size; ++r) {
    for (int i = 0; i < n; ++i) {
      const int got = all[2 * (size_t)n * (size_t)r + 2 * (size_t)i];
      if (got != r * 1000 + i) MLTEST_FAIL("igather: rank %d element %d is %d", r, i, got);
    }
  }
  for (int i = 0; i < n; ++i) {
    if (bcast[2 * i] != 7 * i + 1) MLTEST_FAIL("ibcast: element %d is %d", i, bcast[2 * i]);
    if (bcast[2 * i + 1] != 0) MLTEST_FAIL("ibcast: the hole after element %d was written", i);
  }
  free(mine);
  free(all);
  free(bcast);
}

static void nonblocking_call_sets_nothing_up(int rank) {
  MPI_Comm fresh;
  MLTEST_CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &fresh));
  int value = rank == 0 ? 42 : 0, message = 0;
  MPI_Request request;
  if (rank == 0) {
    MLTEST_CHECK_MPI(MPI_Ibcast(&value, 1, MPI_INT, 0, fresh, &request));
    message = 5;
    MLTEST_CHECK_MPI(MPI_Send(&message, 1, MPI_INT, 1, 0, MPI_COMM_WORLD));
  } else if (rank == 1) {
    MLTEST_CHECK_MPI(MPI_Recv(&message, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MLTEST_CHECK_MPI(MPI_Ibcast(&value, 1, MPI_INT, 0, fresh, &request));
  } else {
    MLTEST_CHECK_MPI(MPI_Ibcast(&value, 1, MPI_INT, 0, fresh, &request));
  }
  MLTEST_CHECK_MPI(MPI_Wait(&request, MPI_STATUS_IGNORE));
  if (value != 42) MLTEST_FAIL("ibcast on a fresh communicator: %d", value);
  if (rank == 1 && message != 5) MLTEST_FAIL("the message is %d", message);
  MLTEST_CHECK_MPI(MPI_Comm_free(&fresh));
}

static void a_freed_handle_names_a_new_type(CountersFunction counters, int rank) {
  MPI_Datatype empty, eight;
  MLTEST_CHECK_MPI(MPI_Type_contiguous(0, MPI_CHAR, &empty));
  MLTEST_CHECK_MPI(MPI_Type_commit(&empty));
  char bytes[8] = {0};
  for (int i = 0; i < 3; ++i) MLTEST_CHECK_MPI(MPI_Bcast(bytes, 1, empty, 0, MPI_COMM_WORLD));
  const MPI_Datatype freed = empty;
  MLTEST_CHECK_MPI(MPI_Type_free(&empty));
  MLTEST_CHECK_MPI(MPI_Type_contiguous(8, MPI_CHAR, &eight));
  MLTEST_CHECK_MPI(MPI_Type_commit(&eight));
  if (rank == 0) {
    printf("the new datatype %s the freed one's handle\n",
           eight == freed ? "has" : "does not have");
  }
  unsigned long long before[5], after[5];
  read_counters(counters, before);
  for (int i = 0; i < 10; ++i) {
    for (int k = 0; k < 8; ++k) bytes[k] = rank == 0 ? (char)(i + k) : 0;
    MLTEST_CHECK_MPI(MPI_Bcast(bytes, 1, eight, 0, MPI_COMM_WORLD));
    for (int k = 0; k < 8; ++k) {
      if (bytes[k] != (char)(i + k)) MLTEST_FAIL("bcast %d[%d]: %d", i, k, bytes[k]);
    }
  }
  read_counters(counters, after);
  if (after[kBlockingMultilane] == before[kBlockingMultilane]) {
    MLTEST_FAIL("no call of the new datatype's class ran multilane: it was not explored");
  }
  MLTEST_CHECK_MPI(MPI_Type_free(&eight));
}

static void same_calls_pass_through(CountersFunction counters, int rank, int size) {
  enum { kCalls = 101 };
  unsigned long long before[5], after[5];
  for (int i = 0; i <= kCalls; ++i) {
    /* Round 0's blocking call makes the communicator's state (a nonblocking call never does),
     * so round 1's nonblocking call is the first looked up. */
    if (i == 2) read_counters(counters, before);
    float mine[4], sums[4];
    for (int k = 0; k < 4; ++k) mine[k] = (float)(rank + k + i);
    MPI_Request request;
    MLTEST_CHECK_MPI(MPI_Iallreduce(mine, sums, 4, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &request));
    MLTEST_CHECK_MPI(MPI_Wait(&request, MPI_STATUS_IGNORE));
    for (int k = 0; k < 4; ++k) {
      const float expected = (float)(size * (size - 1) / 2 + size * (k + i));
      if (sums[k] != expected)
        MLTEST_FAIL("iallreduce %d[%d]: %g, not %g", i, k, sums[k], expected);
    }
    MLTEST_CHECK_MPI(MPI_Allreduce(mine, sums, 4, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD));
    for (int k = 0; k < 4; ++k) {
      const float expected = (float)(size * (size - 1) / 2 + size * (k + i));
      if (sums[k] != expected) MLTEST_FAIL("allreduce %d[%d]: %g, not %g", i, k, sums[k], expected);
    }
  }
  read_counters(counters, after);
  if (after[kBlockingMpi] != before[kBlockingMpi] ||
      after[kNonblockingMpi] != before[kNonblockingMpi]) {
    MLTEST_FAIL("%llu blocking and %llu nonblocking calls looked up again, not 0 and 0",
                after[kBlockingMpi] - before[kBlockingMpi],
                after[kNonblockingMpi] - before[kNonblockingMpi]);
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc > 1 && strcmp(argv[1], "routes") == 0) {
    blocking_calls(rank, size, argc > 2 ? atoi(argv[2]) : 50, 1);
    return mltest_finish();
  }
  if (argc > 1 && strcmp(argv[1], "long") == 0) {
    long_gathers(rank, size);
    return mltest_finish();
  }
  CountersFunction counters = NULL;
  /* POSIX's way to take a function from dlsym without converting the pointer in ISO C. */
  *(void**)(&counters) = dlsym(RTLD_DEFAULT, "multilane_mpi_counters");
  if (counters == NULL) {
    MLTEST_FAIL("multilane_mpi_counters not found: run with the library preloaded");
  } else if (argc > 1 && strcmp(argv[1], "retyped") == 0) {
    a_freed_handle_names_a_new_type(counters, rank);
    return mltest_finish();
  } else if (argc > 1 && strcmp(argv[1], "passes") == 0) {
    same_calls_pass_through(counters, rank, size);
    return mltest_finish();
  } else if (size > 1) {
    served_without_allocation(counters, rank, size);
  }
  types_freed_before_the_wait(rank, size);
  if (size > 1) nonblocking_call_sets_nothing_up(rank);
  return mltest_finish();
}
