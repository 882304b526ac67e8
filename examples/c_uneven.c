/* examples/c_uneven.c — the v-forms in C: every rank contributes a block of its own size
 * (rank r: r * BYTES / p bytes, so rank 0 gives none), gathered everywhere (allgatherv), to the
 * last rank (gatherv, non-blocking), scattered back from it (scatterv), and exchanged pairwise
 * with a size per pair (alltoallv). Every byte is checked.
 *   multilane launch -n 4 -- build/examples/c_uneven [BYTES] [ALGORITHM] */
#include <multilane/multilane.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned char pattern(int rank, size_t i) {
  return (unsigned char)(rank * 31 + i * 7 + 1);
}

/* Checks `length` bytes of `got` against rank `from`'s pattern from byte `first`. */
static int same(const unsigned char* got, size_t length, int from, size_t first) {
  for (size_t i = 0; i < length; ++i) {
    if (got[i] != pattern(from, first + i)) return 0;
  }
  return 1;
}

int main(int argc, char** argv) {
  const size_t bytes = argc > 1 ? strtoull(argv[1], NULL, 10) : 1 << 20;
  const char* algorithm = argc > 2 ? argv[2] : NULL;
  ml_comm* comm = NULL;
  if (ml_init(&comm) != ML_OK) {
    fprintf(stderr, "c_uneven: %s\n", ml_last_error());
    return 2;
  }
  const int rank = ml_rank(comm);
  const int p = ml_size(comm);
  const int root = p - 1;
  size_t* counts = malloc(sizeof(size_t) * (size_t)p);
  size_t* pairs = malloc(sizeof(size_t) * (size_t)p * (size_t)p);
  size_t total = 0, row = 0, column = 0;
  for (int r = 0; r < p; ++r) {
    counts[r] = (size_t)r * bytes / (size_t)p;
    total += counts[r];
    for (int j = 0; j < p; ++j) pairs[r * p + j] = (size_t)((r + 2 * j) % p) * bytes / (size_t)p;
  }
  for (int j = 0; j < p; ++j) row += pairs[rank * p + j];
  for (int i = 0; i < p; ++i) column += pairs[i * p + rank];
  unsigned char* mine = malloc(counts[rank] + 1);
  unsigned char* all = malloc(total + 1);
  unsigned char* gathered = malloc(total + 1);
  unsigned char* back = malloc(counts[rank] + 1);
  unsigned char* out = malloc(row + 1);
  unsigned char* in = malloc(column + 1);
  for (size_t i = 0; i < counts[rank]; ++i) mine[i] = pattern(rank, i);
  /* Block j of this rank's alltoallv row continues its pattern where block j-1 ended. */
  for (size_t i = 0; i < row; ++i) out[i] = pattern(rank, i);
  ml_request* request = NULL;
  if (ml_allgatherv(comm, mine, all, counts, algorithm) != ML_OK ||
      ml_igatherv(comm, mine, gathered, counts, root, algorithm, &request) != ML_OK ||
      ml_wait(request) != ML_OK ||
      ml_scatterv(comm, gathered, back, counts, root, algorithm) != ML_OK ||
      ml_alltoallv(comm, out, in, pairs, algorithm) != ML_OK) {
    fprintf(stderr, "c_uneven: rank %d: %s\n", rank, ml_last_error());
    return 1;
  }
  int ok = same(back, counts[rank], rank, 0);
  size_t offset = 0;
  for (int r = 0; r < p; ++r) {
    ok = ok && same(all + offset, counts[r], r, 0);
    if (rank == root) ok = ok && same(gathered + offset, counts[r], r, 0);
    offset += counts[r];
  }
  offset = 0;
  for (int i = 0; i < p; ++i) {
    size_t first = 0; /* where rank i's block for this rank starts in i's row */
    for (int j = 0; j < rank; ++j) first += pairs[i * p + j];
    ok = ok && same(in + offset, pairs[i * p + rank], i, first);
    offset += pairs[i * p + rank];
  }
  printf("c_uneven: rank %d %s\n", rank, ok ? "ok" : "WRONG DATA");
  free(counts);
  free(pairs);
  free(mine);
  free(all);
  free(gathered);
  free(back);
  free(out);
  free(in);
  ml_finalize(comm);
  return ok ? 0 : 1;
}
