/* examples/c_bcast.c — the broadcast example in C, through multilane/multilane.h.
 *   multilane launch -n 4 -- build/examples/c_bcast [BYTES] [ALGORITHM] */
#include <multilane/multilane.h>
#include <stdio.h>
#include <stdlib.h>

static unsigned char value(size_t i) {
  return (unsigned char)((i * 7 + 3) & 0xff);
}

int main(int argc, char** argv) {
  size_t size = argc > 1 ? strtoull(argv[1], NULL, 10) : 1 << 20;
  const char* algorithm = argc > 2 ? argv[2] : NULL;
  ml_comm* comm = NULL;
  if (ml_init(&comm) != ML_OK) {
    fprintf(stderr, "c_bcast: %s\n", ml_last_error());
    return 2;
  }
  /* From ml_alloc_shared, so that ranks on one node copy it with memcpy (any memory works). */
  unsigned char* buffer = NULL;
  if (ml_alloc_shared(size, (void**)&buffer) != ML_OK) {
    fprintf(stderr, "c_bcast: %s\n", ml_last_error());
    return 2;
  }
  if (ml_rank(comm) == 0) {
    for (size_t i = 0; i < size; ++i) buffer[i] = value(i);
  }
  /* The first half blocking, the second half started and then waited for. */
  const size_t half = size / 2;
  ml_request* request = NULL;
  int code = ml_bcast(comm, buffer, half, 0, algorithm);
  if (code == ML_OK) code = ml_ibcast(comm, buffer + half, size - half, 0, algorithm, &request);
  if (code == ML_OK) code = ml_wait(request);
  if (code != ML_OK) {
    /* The code says what kind of failure it was: ML_ERR_TIMEOUT, ML_ERR_PEER_GONE, ... */
    fprintf(stderr, "c_bcast: rank %d: %s: %s\n", ml_rank(comm), ml_error_name(code),
            ml_last_error());
    return 1;
  }
  int ok = 1;
  for (size_t i = 0; i < size; ++i) ok = ok && buffer[i] == value(i);
  printf("c_bcast: rank %d %s\n", ml_rank(comm), ok ? "ok" : "WRONG DATA");
  ml_free_shared(buffer);
  ml_finalize(comm);
  return ok ? 0 : 1;
}
