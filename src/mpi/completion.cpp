// mpi/completion.cpp — the wrapped MPI_Wait / MPI_Test family and MPI_Request_get_status: the
// library's own requests are completed first (pending_requests.hpp has the design), then PMPI_*
// does the rest.
#include <mpi.h>

#include "mpi/pending_requests.hpp"
#include "mpi/progress_wait.hpp"

using multilane::mpi::count_pending;
using multilane::mpi::finish_pending;
using multilane::mpi::progress_pending;
using multilane::mpi::see_completions;

namespace {

// Polls until `test` says the PMPI test succeeded (or failed), completing the library's
// requests as they finish; the pauses leave shared cores to multilane's engine threads.
template <typename Test>
int poll(Test test) {
  int code = MPI_SUCCESS;
  multilane::mpi::poll_until([&] {
    progress_pending();
    int done = 0;
    code = test(&done);
    return code != MPI_SUCCESS || done != 0;
  });
  return code;
}

// A wrapped call's PMPI_* code, after see_completions(): a request of the library that another
// thread completed is now complete here too.
int seen(int code) {
  see_completions();
  return code;
}

}  // namespace

extern "C" {

int MPI_Wait(MPI_Request* request, MPI_Status* status) {
  if (count_pending(1, request) > 0) finish_pending(1, request);
  return seen(PMPI_Wait(request, status));
}

int MPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  progress_pending();
  return seen(PMPI_Test(request, flag, status));
}

int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  const int ours = count_pending(count, requests);
  if (ours == 0) return seen(PMPI_Waitall(count, requests, statuses));
  if (ours == count) {
    finish_pending(count, requests);
    return seen(PMPI_Waitall(count, requests, statuses));
  }
  return seen(poll([&](int* done) { return PMPI_Testall(count, requests, done, statuses); }));
}

int MPI_Testall(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]) {
  progress_pending();
  return seen(PMPI_Testall(count, requests, flag, statuses));
}

int MPI_Waitany(int count, MPI_Request requests[], int* index, MPI_Status* status) {
  if (count_pending(count, requests) == 0)
    return seen(PMPI_Waitany(count, requests, index, status));
  return seen(poll([&](int* done) { return PMPI_Testany(count, requests, index, done, status); }));
}

int MPI_Testany(int count, MPI_Request requests[], int* index, int* flag, MPI_Status* status) {
  progress_pending();
  return seen(PMPI_Testany(count, requests, index, flag, status));
}

int MPI_Waitsome(int incount, MPI_Request requests[], int* outcount, int indices[],
                 MPI_Status statuses[]) {
  if (count_pending(incount, requests) == 0) {
    return seen(PMPI_Waitsome(incount, requests, outcount, indices, statuses));
  }
  return seen(poll([&](int* done) {
    const int code = PMPI_Testsome(incount, requests, outcount, indices, statuses);
    *done = *outcount != 0;  // MPI_UNDEFINED (no active request) ends the wait too
    return code;
  }));
}

int MPI_Request_get_status(MPI_Request request, int* flag, MPI_Status* status) {
  progress_pending();
  return seen(PMPI_Request_get_status(request, flag, status));
}

int MPI_Testsome(int incount, MPI_Request requests[], int* outcount, int indices[],
                 MPI_Status statuses[]) {
  progress_pending();
  return seen(PMPI_Testsome(incount, requests, outcount, indices, statuses));
}

}  // extern "C"
