/* bench/pass_through.c — what the PMPI library adds to a call it leaves to the MPI library.
 * Times, in nanoseconds per call (best of REPEATS loops of CALLS calls, mean over the ranks):
 *   - MPI_Reduce_scatter_block of 0 elements (no data: passed at once, before any look-up);
 *   - MPI_Allreduce of one float, a route decided for the MPI library (forced with
 *     MULTILANE_ALGORITHM_ALLREDUCE=mpi, or by measurement after the first calls), after
 *     WARMUP calls;
 *   - MPI_Iallreduce of one float and its MPI_Wait, the same route;
 *   - the same on MPI_COMM_SELF with caches cold: each call after 64 MiB were written, as when
 *     another process ran on the core between two calls (two ranks to a core). The median of
 *     kColdCalls calls, each timed alone; on one rank's communicator, so that no other rank's
 *     arrival is in the time.
 *
 *   mpirun -n 1 [-x LD_PRELOAD=libmultilane_mpi.so -x MULTILANE_ALGORITHM_ALLREDUCE=mpi] \
 *       pass_through [CALLS [REPEATS]]
 *
 * bench/pass-through.sh runs it with and without the library and prints both. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "count_arg.h"

enum { kWarmup = 1000, kColdCalls = 101 };
static const size_t kColdBytes = (size_t)64 << 20;

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int by_value(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

/* The best of `repeats` loops of `calls` calls of `kind`, in ns per call, mean over the ranks. */
static double best_ns(int kind, int calls, int repeats) {
  float send[4] = {1, 2, 3, 4}, recv[4];
  double best = 1e30;
  for (int r = 0; r < repeats; ++r) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = MPI_Wtime();
    for (int i = 0; i < calls; ++i) {
      if (kind == 0) {
        MPI_Reduce_scatter_block(send, recv, 0, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      } else if (kind == 1) {
        MPI_Allreduce(send, recv, 1, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      } else {
        MPI_Request request;
        MPI_Iallreduce(send, recv, 1, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &request);
        MPI_Wait(&request, MPI_STATUS_IGNORE);
      }
    }
    const double ns = (MPI_Wtime() - start) / calls * 1e9;
    if (ns < best) best = ns;
  }
  double sum = 0;
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Allreduce(&best, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return sum / size;
}

/* The median time of one allreduce of a float on MPI_COMM_SELF right after kColdBytes were
 * written, in ns, mean over the ranks. */
static double cold_ns(void) {
  unsigned char* junk = malloc(kColdBytes);
  double times[kColdCalls];
  float one = 1, sum = 0;
  if (!junk) {
    fprintf(stderr, "pass_through: cannot allocate %zu bytes\n", kColdBytes);
    exit(1);
  }
  memset(junk, 0, kColdBytes);
  for (int i = 0; i < kWarmup; ++i) MPI_Allreduce(&one, &sum, 1, MPI_FLOAT, MPI_SUM, MPI_COMM_SELF);
  for (int i = 0; i < kColdCalls; ++i) {
    for (size_t b = 0; b < kColdBytes; b += 64) junk[b]++;
    const double start = now_ns();
    MPI_Allreduce(&one, &sum, 1, MPI_FLOAT, MPI_SUM, MPI_COMM_SELF);
    times[i] = now_ns() - start;
  }
  free(junk);
  qsort(times, kColdCalls, sizeof times[0], by_value);
  double median = times[kColdCalls / 2], total = 0;
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Allreduce(&median, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return total / size;
}

int main(int argc, char** argv) {
  const int calls = argc > 1 ? count_arg("pass_through", argv[1], "CALLS", 100000000) : 2000000;
  const int repeats = argc > 2 ? count_arg("pass_through", argv[2], "REPEATS", 1000) : 5;
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  float one = 1, sum = 0;
  for (int i = 0; i < kWarmup; ++i)
    MPI_Allreduce(&one, &sum, 1, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  const double nothing = best_ns(0, calls, repeats);
  const double decided = best_ns(1, calls, repeats);
  const double nonblocking = best_ns(2, calls, repeats);
  const double cold = cold_ns();
  if (rank == 0) {
    printf("reduce_scatter_block of 0 elements: %.1f ns\n", nothing);
    printf("allreduce of 1 float, decided for the MPI library: %.1f ns\n", decided);
    printf("iallreduce of 1 float and its wait, decided: %.1f ns\n", nonblocking);
    printf("allreduce of 1 float on MPI_COMM_SELF, decided, caches cold: %.1f ns\n", cold);
  }
  MPI_Finalize();
  return 0;
}
