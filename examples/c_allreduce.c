/* examples/c_allreduce.c — the allreduce example in C: the sum of every rank's doubles, blocking
 * and non-blocking, and the maximum of their ranks.
 *   multilane launch -n 4 -- build/examples/c_allreduce [BYTES] [ALGORITHM] */
#include <multilane/multilane.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  const size_t count = (argc > 1 ? strtoull(argv[1], NULL, 10) : 1 << 20) / sizeof(double);
  const char* algorithm = argc > 2 ? argv[2] : NULL;
  ml_comm* comm = NULL;
  if (ml_init(&comm) != ML_OK) {
    fprintf(stderr, "c_allreduce: %s\n", ml_last_error());
    return 2;
  }
  const int rank = ml_rank(comm);
  const int size = ml_size(comm);
  double* mine = malloc(count * sizeof(double) + 1);
  double* sums = malloc(count * sizeof(double) + 1);
  for (size_t i = 0; i < count; ++i) mine[i] = (double)((i + (size_t)rank) % 5);
  int rank_in = rank;
  int top = -1;
  ml_request* request = NULL;
  if (ml_iallreduce(comm, mine, sums, count, ML_DOUBLE, ML_SUM, algorithm, &request) != ML_OK ||
      ml_wait(request) != ML_OK ||
      ml_allreduce(comm, &rank_in, &top, 1, ML_INT32, ML_MAX, NULL) != ML_OK) {
    fprintf(stderr, "c_allreduce: rank %d: %s\n", rank, ml_last_error());
    return 1;
  }
  int ok = top == size - 1;
  for (size_t i = 0; i < count && ok; ++i) {
    double expected = 0;
    for (int r = 0; r < size; ++r) expected += (double)((i + (size_t)r) % 5);
    ok = sums[i] == expected;
  }
  printf("c_allreduce: rank %d %s\n", rank, ok ? "ok" : "WRONG DATA");
  free(mine);
  free(sums);
  ml_finalize(comm);
  return ok ? 0 : 1;
}
