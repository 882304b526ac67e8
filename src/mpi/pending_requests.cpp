// mpi/pending_requests.cpp — generalized requests for multilane's calls (pending_requests.hpp).
#include "mpi/pending_requests.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "mpi/mpi_errors.hpp"
#include "mpi/progress_wait.hpp"
#include "multilane/errors.hpp"

namespace multilane::mpi {

namespace {

// The library's incomplete requests, by handle.
std::mutex pending_mutex;
std::map<MPI_Request, PendingCall*> pending;
// How many there are, kept with `pending` under its mutex: the wrapped MPI_Wait and MPI_Test
// of a program's own requests (its point-to-point ones, every time step) cost one load when
// the library has none, not a lock.
std::atomic<std::size_t> pending_calls{0};
std::uint64_t next_sequence = 0;
// A call that one thread completes and another waits for reaches its waiter through the MPI
// library's generalized request, whose synchronisation is the MPI library's own. complete()
// adds to this count (release) before PMPI_Grequest_complete, and the waiter's side reads it
// (acquire: see_completions(), query(), free_call()), so that what the call wrote (the user's
// buffers, the call's error) happens before the waiter reads it or frees the call in
// multilane's own terms. ThreadSanitizer, which does not see into the uninstrumented MPI
// library, relies on it: without it, about one MPICH run in ten reports the waiter's read of a
// buffer the group runner wrote, or its free of the request's state, as racing.
std::atomic<std::uint64_t> completions{0};

int query(void* extra_state, MPI_Status* status) {
  see_completions();
  const auto* call = static_cast<PendingCall*>(extra_state);
  PMPI_Status_set_elements(status, MPI_BYTE, 0);
  PMPI_Status_set_cancelled(status, 0);
  status->MPI_SOURCE = MPI_UNDEFINED;
  status->MPI_TAG = MPI_UNDEFINED;
  status->MPI_ERROR = call->error;
  return call->error;
}

int free_call(void* extra_state) {
  see_completions();
  delete static_cast<PendingCall*>(extra_state);
  return MPI_SUCCESS;
}

int cancel(void*, int) {
  return MPI_SUCCESS;  // a collective cannot be cancelled
}

// Threads (MPI_THREAD_MULTIPLE): a thread works on a pending call only while it holds the
// call's claim (PendingCall::claimed, under pending_mutex): it tests it, completes
// it. progress_pending() claims only what is free and never waits for a claim; a thread that
// must wait for a claim holds none of an earlier call of the same communicator, and the calls
// of a communicator are claimed in start order, so no two threads wait for each other. Once
// completed, a call is off the table and its owner's MPI_Wait may free it at once: the completer
// touches it no more.

enum class Claim { Taken, Busy, Gone };

Claim try_claim(MPI_Request handle, PendingCall*& call) {
  std::lock_guard lock(pending_mutex);
  const auto it = pending.find(handle);
  if (it == pending.end()) return Claim::Gone;
  if (it->second->claimed) return Claim::Busy;
  it->second->claimed = true;
  call = it->second;
  return Claim::Taken;
}

// Waits (yielding) until this thread holds `handle`'s claim; nullptr once the call is gone
// (another thread completed it).
PendingCall* claim(MPI_Request handle) {
  for (;;) {
    PendingCall* call = nullptr;
    switch (try_claim(handle, call)) {
      case Claim::Taken:
        return call;
      case Claim::Gone:
        return nullptr;
      case Claim::Busy:
        std::this_thread::yield();
    }
  }
}

void release(PendingCall& call) {
  std::lock_guard lock(pending_mutex);
  call.claimed = false;
}

// `call` (claimed) is done, or failed: unpack, report, complete the MPI request.
void complete(PendingCall& call, const runtime::Outcome& outcome) {
  if (!outcome) {
    try {
      call.call->finish();
    } catch (const std::exception& e) {
      call.error = report_failure(call.call->comm, call.function, e);
    }
  } else {
    call.error = report_failure(call.call->comm, call.function, *outcome);
  }
  const MPI_Request handle = call.handle;
  {
    std::lock_guard lock(pending_mutex);
    pending.erase(handle);
    pending_calls.store(pending.size(), std::memory_order_release);
  }
  completions.fetch_add(1, std::memory_order_release);
  PMPI_Grequest_complete(handle);
}

// The handles of the pending calls, in the order they were made.
std::vector<MPI_Request> handles_in_start_order() {
  std::vector<std::pair<std::uint64_t, MPI_Request>> ordered;
  {
    std::lock_guard lock(pending_mutex);
    for (const auto& [handle, call] : pending) ordered.emplace_back(call->sequence, handle);
  }
  std::sort(ordered.begin(), ordered.end());
  std::vector<MPI_Request> handles;
  for (const auto& [sequence, handle] : ordered) handles.push_back(handle);
  return handles;
}

// Claims every free pending call, in the order they were made (progress_pending()).
std::vector<PendingCall*> claim_free_calls() {
  std::vector<PendingCall*> calls;
  std::lock_guard lock(pending_mutex);
  for (auto& [handle, call] : pending) {
    if (call->claimed) continue;
    call->claimed = true;
    calls.push_back(call);
  }
  std::sort(calls.begin(), calls.end(),
            [](const PendingCall* a, const PendingCall* b) { return a->sequence < b->sequence; });
  return calls;
}

// Tests (or waits for) one claimed multilane call: true once it ended, with its outcome in
// `outcome`; false while it runs.
bool ended(PendingCall& call, bool wait, runtime::Outcome& outcome) {
  try {
    if (wait) {
      wait_with_progress(call.request);
    } else if (!call.request.test()) {
      return false;
    }
  } catch (const std::exception& e) {
    outcome = runtime::Failure::of(e);
  }
  return true;
}

// Waits for a claimed call to end and completes it.
void waited_and_completed(PendingCall& call) {
  runtime::Outcome outcome;
  ended(call, true, outcome);
  complete(call, outcome);
}

}  // namespace

void see_completions() {
  completions.load(std::memory_order_acquire);
}

MPI_Request start_pending(std::unique_ptr<PendingCall> call) {
  MPI_Request handle = MPI_REQUEST_NULL;
  PendingCall* raw = call.get();
  if (PMPI_Grequest_start(query, free_call, cancel, raw, &handle) != MPI_SUCCESS) {
    throw CommunicationError(ErrorKind::internal, "PMPI_Grequest_start failed");
  }
  call.release();  // owned by the request now: free_call() deletes it
  raw->handle = handle;
  std::lock_guard lock(pending_mutex);
  raw->sequence = next_sequence++;
  pending.emplace(handle, raw);
  pending_calls.store(pending.size(), std::memory_order_release);
  return handle;
}

void progress_pending() {
  if (pending_calls.load(std::memory_order_acquire) == 0) return;
  const std::vector<PendingCall*> calls = claim_free_calls();
  for (PendingCall* call : calls) {
    if (runtime::Outcome outcome; ended(*call, false, outcome)) {
      complete(*call, outcome);
    } else {
      release(*call);
    }
  }
}

void finish_pending(int count, const MPI_Request* requests) {
  for (int i = 0; i < count; ++i) {
    if (PendingCall* call = claim(requests[i])) waited_and_completed(*call);
  }
}

int count_pending(int count, const MPI_Request* requests) {
  if (pending_calls.load(std::memory_order_acquire) == 0) return 0;
  std::lock_guard lock(pending_mutex);
  int found = 0;
  for (int i = 0; i < count; ++i) found += pending.contains(requests[i]) ? 1 : 0;
  return found;
}

void finish_all_pending() {
  for (MPI_Request handle : handles_in_start_order()) {
    if (PendingCall* call = claim(handle)) waited_and_completed(*call);
  }
}

}  // namespace multilane::mpi
