// mpi/pending_requests.cpp — generalized requests for multilane's calls (pending_requests.hpp).
#include "mpi/pending_requests.hpp"

#include <map>
#include <mutex>
#include <vector>

#include "mpi/mpi_errors.hpp"
#include "mpi/progress_wait.hpp"
#include "multilane/errors.hpp"

namespace multilane::mpi {

namespace {

// The library's incomplete requests, by handle.
std::mutex pending_mutex;
std::map<MPI_Request, PendingCall*> pending;

int query(void* extra_state, MPI_Status* status) {
  const auto* call = static_cast<PendingCall*>(extra_state);
  PMPI_Status_set_elements(status, MPI_BYTE, 0);
  PMPI_Status_set_cancelled(status, 0);
  status->MPI_SOURCE = MPI_UNDEFINED;
  status->MPI_TAG = MPI_UNDEFINED;
  status->MPI_ERROR = call->error;
  return call->error;
}

int free_call(void* extra_state) {
  delete static_cast<PendingCall*>(extra_state);
  return MPI_SUCCESS;
}

int cancel(void*, int) {
  return MPI_SUCCESS;  // a collective cannot be cancelled
}

// `call` is done (or failed): unpack, report, complete the MPI request.
void complete(PendingCall& call, const std::string& failure) {
  if (failure.empty()) {
    try {
      call.call->finish();
    } catch (const std::exception& e) {
      call.error = report_failure(call.call->comm, call.function, e.what());
    }
  } else {
    call.error = report_failure(call.call->comm, call.function, failure);
  }
  {
    std::lock_guard lock(pending_mutex);
    pending.erase(call.handle);
  }
  PMPI_Grequest_complete(call.handle);
}

// Tests (or waits for) one multilane call: "" when it succeeded, the error when it failed,
// nullopt while running.
std::optional<std::string> outcome(PendingCall& call, bool wait) {
  try {
    if (wait) {
      wait_with_progress(call.request);
    } else if (!call.request.test()) {
      return std::nullopt;
    }
    return std::string();
  } catch (const std::exception& e) {
    return std::string(e.what());
  }
}

PendingCall* find(MPI_Request handle) {
  std::lock_guard lock(pending_mutex);
  const auto it = pending.find(handle);
  return it == pending.end() ? nullptr : it->second;
}

}  // namespace

MPI_Request start_pending(std::unique_ptr<PendingCall> call) {
  MPI_Request handle = MPI_REQUEST_NULL;
  PendingCall* raw = call.get();
  if (PMPI_Grequest_start(query, free_call, cancel, raw, &handle) != MPI_SUCCESS) {
    throw CommunicationError("PMPI_Grequest_start failed");
  }
  call.release();  // owned by the request now: free_call() deletes it
  raw->handle = handle;
  std::lock_guard lock(pending_mutex);
  pending.emplace(handle, raw);
  return handle;
}

void progress_pending() {
  std::vector<PendingCall*> calls;
  {
    std::lock_guard lock(pending_mutex);
    if (pending.empty()) return;
    for (auto& [handle, call] : pending) calls.push_back(call);
  }
  for (PendingCall* call : calls) {
    if (auto result = outcome(*call, false)) complete(*call, *result);
  }
}

void finish_pending(int count, const MPI_Request* requests) {
  for (int i = 0; i < count; ++i) {
    if (PendingCall* call = find(requests[i])) complete(*call, *outcome(*call, true));
  }
}

int count_pending(int count, const MPI_Request* requests) {
  std::lock_guard lock(pending_mutex);
  if (pending.empty()) return 0;
  int found = 0;
  for (int i = 0; i < count; ++i) found += pending.contains(requests[i]) ? 1 : 0;
  return found;
}

void finish_all_pending() {
  std::vector<PendingCall*> calls;
  {
    std::lock_guard lock(pending_mutex);
    for (auto& [handle, call] : pending) calls.push_back(call);
  }
  for (PendingCall* call : calls) complete(*call, *outcome(*call, true));
}

}  // namespace multilane::mpi
