/* tests/mpi/errors.c — failures of wrapped calls follow the communicator's error handler.
 *
 * With MPI_ERRORS_RETURN, ranks that disagree on a bcast's size (an erroneous program that
 * multilane detects) get an error code back, not MPI_SUCCESS, whose MPI_Error_string names
 * multilane, the rank, the call and the kind ("mismatch: ..."), and whose class is multilane's
 * class for mismatches (MPI_Error_string of the class: "multilane: mismatch"). The root may
 * finish its part before anybody notices, so it may return MPI_SUCCESS. Run with the library and
 * MULTILANE_ALGORITHM_BCAST=auto (the MPI library's own bcast would not notice).
 *
 * `errors fatal`: the same on MPI_COMM_WORLD, whose handler is MPI_ERRORS_ARE_FATAL: the job
 * aborts with multilane's message naming the rank, the call and the cause.
 *
 * `errors kill`: rank 1 dies (SIGKILL) while the others are in a 16 MiB bcast; they abort
 * naming it (run under a launcher that lets them, e.g. mpiexec.mpich -disable-auto-cleanup).
 * `errors kill return`: the same on a communicator with MPI_ERRORS_RETURN: each rank whose bcast
 * failed prints "error class: " and the class's string ("multilane: peer gone"), then aborts.
 * `errors kill split`: the same on MPI_COMM_WORLD's ranks in reverse order, which share its
 * multilane job: the message names the dead rank by its MPI_COMM_WORLD rank, and says so. */
#include <signal.h>

#include "mltest.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  unsigned char* buf = mltest_alloc(1 << 20);
  memset(buf, rank, 1 << 20);
  if (argc > 1 && strcmp(argv[1], "kill") == 0) {
    unsigned char* big = mltest_alloc(16 << 20);
    MPI_Comm comm = MPI_COMM_WORLD;
    if (argc > 2 && strcmp(argv[2], "return") == 0) {
      MPI_Comm_dup(MPI_COMM_WORLD, &comm);
      MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    } else if (argc > 2 && strcmp(argv[2], "split") == 0) {
      MPI_Bcast(big, 1000, MPI_BYTE, 0, MPI_COMM_WORLD); /* MPI_COMM_WORLD's job */
      MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &comm);
    }
    MPI_Bcast(big, 1000, MPI_BYTE, 0, comm); /* the job is set up */
    if (rank == 1) raise(SIGKILL);
    const int code = MPI_Bcast(big, 16 << 20, MPI_BYTE, 0, comm);
    if (code != MPI_SUCCESS) {
      char text[MPI_MAX_ERROR_STRING];
      int length = 0, error_class = MPI_SUCCESS;
      MPI_Error_class(code, &error_class);
      MPI_Error_string(error_class, text, &length);
      printf("error class: %s\n", text);
      fflush(stdout);
      MPI_Abort(MPI_COMM_WORLD, 3);
    }
    if (rank != 0) MLTEST_FAIL("MPI_Bcast returned although rank 1 died");
    free(big);
    return mltest_finish();
  }
  if (argc > 1 && strcmp(argv[1], "fatal") == 0) {
    MPI_Bcast(buf, rank == 0 ? 1000 : 2000, MPI_BYTE, 0, MPI_COMM_WORLD);
    if (rank != 0) MLTEST_FAIL("a bcast whose ranks disagree on the size returned");
    return mltest_finish();
  }
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  const int code = MPI_Bcast(buf, rank == 0 ? 1000 : 2000, MPI_BYTE, 0, comm);
  if (code == MPI_SUCCESS && rank != 0) {
    MLTEST_FAIL("a bcast whose ranks disagree on the size returned MPI_SUCCESS");
  } else if (code != MPI_SUCCESS) {
    char text[MPI_MAX_ERROR_STRING];
    int length = 0, error_class = MPI_SUCCESS;
    MPI_Error_string(code, text, &length);
    MPI_Error_class(code, &error_class);
    if (error_class == MPI_SUCCESS) MLTEST_FAIL("error class of %d is MPI_SUCCESS", code);
    char class_text[MPI_MAX_ERROR_STRING];
    int class_length = 0;
    MPI_Error_string(error_class, class_text, &class_length);
    if (strstr(text, "multilane: rank") == NULL || strstr(text, "MPI_Bcast") == NULL ||
        strstr(text, ": mismatch: ") == NULL) {
      MLTEST_FAIL("MPI_Error_string gave \"%s\"", text);
    } else if (strcmp(class_text, "multilane: mismatch") != 0) {
      MLTEST_FAIL("the string of error class %d is \"%s\"", error_class, class_text);
    } else if (rank == 1) {
      printf("error string: %s\nerror class: %s\n", text, class_text);
    }
  }
  MPI_Comm_free(&comm);
  free(buf);
  return mltest_finish();
}
