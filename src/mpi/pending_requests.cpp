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

// Threads (MPI_THREAD_MULTIPLE): a thread works on a pending call only while it holds the
// call's claim (PendingCall::claimed, under pending_mutex): it starts it, tests it, completes
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
  PMPI_Grequest_complete(handle);
}

// Starts a claimed deferred call whose counts' exchange has completed (or waits for it with
// `wait`). Returns false while the exchange runs. A failure is kept for ended() to report.
bool begin(PendingCall& call, bool wait) {
  if (!call.start) return true;
  int done = 1;
  const int code = wait ? PMPI_Wait(&call.counts_exchange, MPI_STATUS_IGNORE)
                        : PMPI_Test(&call.counts_exchange, &done, MPI_STATUS_IGNORE);
  if (code != MPI_SUCCESS) {
    call.start_failure = runtime::Failure{
        ErrorKind::internal, "the exchange of the counts (PMPI_Ibcast or PMPI_Iallgather) failed"};
  } else if (!done) {
    return false;
  } else {
    try {
      call.request = call.start();
    } catch (const std::exception& e) {
      call.start_failure = runtime::Failure::of(e);
    }
  }
  call.start = nullptr;
  // Release: a thread that reads no deferred call left also sees this one's start done.
  deferred_calls.fetch_sub(1, std::memory_order_release);
  return true;
}

// The handles of the pending calls of `owner` (every one's with null) made up to `last`, in
// the order they were made.
std::vector<MPI_Request> handles_in_start_order(const Communicator* owner, std::uint64_t last) {
  std::vector<std::pair<std::uint64_t, MPI_Request>> ordered;
  {
    std::lock_guard lock(pending_mutex);
    for (const auto& [handle, call] : pending) {
      if ((owner == nullptr || call->owner.get() == owner) && call->sequence <= last) {
        ordered.emplace_back(call->sequence, handle);
      }
    }
  }
  std::sort(ordered.begin(), ordered.end());
  std::vector<MPI_Request> handles;
  for (const auto& [sequence, handle] : ordered) handles.push_back(handle);
  return handles;
}

// Starts the deferred calls of `owner` made up to `last` (sequence), in order, waiting for
// their exchanges and for other threads' claims.
void start_deferred_through(const Communicator* owner, std::uint64_t last) {
  for (MPI_Request handle : handles_in_start_order(owner, last)) {
    if (PendingCall* call = claim(handle)) {
      begin(*call, true);
      release(*call);
    }
  }
}

// Claims every free pending call, in the order they were made (progress_pending()).
std::vector<PendingCall*> claim_free_calls(std::vector<const Communicator*>& busy_owners) {
  std::vector<PendingCall*> calls;
  std::lock_guard lock(pending_mutex);
  for (auto& [handle, call] : pending) {
    if (call->claimed) {
      busy_owners.push_back(call->owner.get());
    } else {
      call->claimed = true;
      calls.push_back(call);
    }
  }
  std::sort(calls.begin(), calls.end(),
            [](const PendingCall* a, const PendingCall* b) { return a->sequence < b->sequence; });
  return calls;
}

// Starts, without waiting, the claimed deferred calls whose exchange is done and which no
// earlier deferred call of their communicator still holds back (one not started yet, or one
// another thread holds: `held_back` starts with those owners).
void advance_deferred(const std::vector<PendingCall*>& calls,
                      std::vector<const Communicator*> held_back) {
  for (PendingCall* call : calls) {
    if (!call->start) continue;
    const Communicator* owner = call->owner.get();
    if (std::find(held_back.begin(), held_back.end(), owner) != held_back.end()) continue;
    if (!begin(*call, false)) held_back.push_back(owner);
  }
}

// Tests (or waits for) one claimed multilane call: true once it ended, with its outcome in
// `outcome`; false while it runs. A deferred call waited for starts after its communicator's
// earlier ones.
bool ended(PendingCall& call, bool wait, runtime::Outcome& outcome) {
  if (call.start) {
    if (!wait) return false;
    if (call.sequence > 0) start_deferred_through(call.owner.get(), call.sequence - 1);
    begin(call, true);
  }
  outcome = call.start_failure;
  if (outcome) return true;
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

MPI_Request start_pending(std::unique_ptr<PendingCall> call) {
  MPI_Request handle = MPI_REQUEST_NULL;
  PendingCall* raw = call.get();
  if (PMPI_Grequest_start(query, free_call, cancel, raw, &handle) != MPI_SUCCESS) {
    throw CommunicationError(ErrorKind::internal, "PMPI_Grequest_start failed");
  }
  call.release();  // owned by the request now: free_call() deletes it
  raw->handle = handle;
  if (raw->start) deferred_calls.fetch_add(1, std::memory_order_relaxed);
  std::lock_guard lock(pending_mutex);
  raw->sequence = next_sequence++;
  pending.emplace(handle, raw);
  pending_calls.store(pending.size(), std::memory_order_release);
  return handle;
}

void start_deferred(const Communicator* owner) {
  if (deferred_calls.load(std::memory_order_acquire) == 0) return;
  start_deferred_through(owner, UINT64_MAX);
}

void progress_pending() {
  if (pending_calls.load(std::memory_order_acquire) == 0) return;
  std::vector<const Communicator*> busy_owners;
  const std::vector<PendingCall*> calls = claim_free_calls(busy_owners);
  advance_deferred(calls, std::move(busy_owners));
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
  for (MPI_Request handle : handles_in_start_order(nullptr, UINT64_MAX)) {
    if (PendingCall* call = claim(handle)) waited_and_completed(*call);
  }
}

}  // namespace multilane::mpi
