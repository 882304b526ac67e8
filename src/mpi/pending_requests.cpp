// mpi/pending_requests.cpp — generalized requests for multilane's calls (pending_requests.hpp).
#include "mpi/pending_requests.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
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
std::uint64_t next_sequence = 0;
// Deferred calls not started yet: a served call's start_deferred() costs one load when none is.
std::atomic<std::size_t> deferred_calls{0};

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

// Starts a deferred call whose counts' exchange has completed (or waits for it with `wait`).
// Returns false while the exchange runs. A failure is kept for outcome() to report.
bool begin(PendingCall& call, bool wait) {
  if (!call.start) return true;
  int done = 1;
  const int code = wait ? PMPI_Wait(&call.counts_exchange, MPI_STATUS_IGNORE)
                        : PMPI_Test(&call.counts_exchange, &done, MPI_STATUS_IGNORE);
  if (code != MPI_SUCCESS) {
    call.start_failure = "the exchange of the counts (PMPI_Ibcast or PMPI_Iallgather) failed";
  } else if (!done) {
    return false;
  } else {
    try {
      call.request = call.start();
    } catch (const std::exception& e) {
      call.start_failure = e.what();
    }
  }
  call.start = nullptr;
  deferred_calls.fetch_sub(1, std::memory_order_relaxed);
  return true;
}

// Every pending call, in the order they were made.
std::vector<PendingCall*> in_start_order() {
  std::vector<PendingCall*> calls;
  {
    std::lock_guard lock(pending_mutex);
    for (auto& [handle, call] : pending) calls.push_back(call);
  }
  std::sort(calls.begin(), calls.end(),
            [](const PendingCall* a, const PendingCall* b) { return a->sequence < b->sequence; });
  return calls;
}

// Starts the deferred calls of `owner` made up to `last` (sequence), in order, waiting.
void start_deferred_through(const Communicator* owner, std::uint64_t last) {
  for (PendingCall* call : in_start_order()) {
    if (call->sequence > last) break;
    if (call->owner.get() == owner) begin(*call, true);
  }
}

// Starts, without waiting, the deferred calls whose exchange is done and which no earlier
// deferred call of their communicator still holds back.
void advance_deferred() {
  std::vector<const Communicator*> held_back;
  for (PendingCall* call : in_start_order()) {
    if (!call->start) continue;
    const Communicator* owner = call->owner.get();
    if (std::find(held_back.begin(), held_back.end(), owner) != held_back.end()) continue;
    if (!begin(*call, false)) held_back.push_back(owner);
  }
}

// Tests (or waits for) one multilane call: "" when it succeeded, the error when it failed,
// nullopt while running.
std::optional<std::string> outcome(PendingCall& call, bool wait) {
  if (call.start) {
    if (!wait) return std::nullopt;
    start_deferred_through(call.owner.get(), call.sequence);
  }
  if (!call.start_failure.empty()) return call.start_failure;
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
  if (raw->start) deferred_calls.fetch_add(1, std::memory_order_relaxed);
  std::lock_guard lock(pending_mutex);
  raw->sequence = next_sequence++;
  pending.emplace(handle, raw);
  return handle;
}

void start_deferred(const Communicator* owner) {
  if (deferred_calls.load(std::memory_order_relaxed) == 0) return;
  start_deferred_through(owner, UINT64_MAX);
}

void progress_pending() {
  {
    std::lock_guard lock(pending_mutex);
    if (pending.empty()) return;
  }
  advance_deferred();
  for (PendingCall* call : in_start_order()) {
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
  for (PendingCall* call : in_start_order()) complete(*call, *outcome(*call, true));
}

}  // namespace multilane::mpi
