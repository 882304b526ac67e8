// mpi/comm_state.hpp — what the library keeps per MPI communicator, cached as an attribute.
//
// A communicator's state is made at its first blocking wrapped collective (every rank is in
// that call; a nonblocking call never makes it, since making it talks to the other ranks):
// the layout, its placement key, the default route and the measured routes (inherited from a
// communicator of the same placement, decision_store.hpp) at once; the multilane job at the
// first blocking call that runs multilane (comm_bootstrap.hpp). It is an attribute of a keyval
// with MPI_COMM_NULL_COPY_FN (a dup'ed communicator starts with its placement's decisions and
// a job of its own) whose delete callback frees it, at MPI_Comm_free, or at stop_library()
// for the communicators still alive, before PMPI_Finalize. Caching by attribute, not by
// handle, is what keeps a freed handle that MPI reuses from finding a stale job.
//
// Threads (MPI_THREAD_MULTIPLE): each communicator has its own state and its own call space in a
// job, so calls on different communicators from different threads run at once; MPI makes
// concurrent collectives on one communicator erroneous, so a state is used by one thread at a
// time. A job costs two engine threads, a listener, sockets to its peers and shared memory, so
// communicators over the same ranks share one (shared_jobs.hpp), and at most MULTILANE_MAX_JOBS
// communicators of a process hold a job slot (a job of their own), agreed by every rank of the
// communicator when its state is made (one PMPI_Allreduce); a communicator that neither shares a
// job nor gets a slot stays with the MPI library. Its slot is free again at MPI_Comm_free.
#pragma once

#include <mpi.h>

#include <memory>
#include <vector>

#include "mpi/collective_call.hpp"
#include "mpi/comm_bootstrap.hpp"
#include "mpi/measured_route.hpp"
#include "mpi/pass_through_state.hpp"
#include "mpi/placement_key.hpp"
#include "mpi/repeated_calls.hpp"
#include "mpi/route_policy.hpp"
#include "multilane/communicator.hpp"

namespace multilane::mpi {

struct CommState {
  MPI_Comm comm = MPI_COMM_NULL;
  CommLayout layout;
  PlacementKey placement;
  std::unique_ptr<RoutePolicy> policy;  // the default route of each class
  MeasuredRoutes routes;                // what each class runs
  // Null until the first blocking call that runs multilane. Shared with the non-blocking calls
  // in flight: MPI lets a program free a communicator before waiting for them.
  std::shared_ptr<Communicator> multilane;
  // The blocking calls' call and options: reused, so that its buffers and the algorithm's name
  // keep their memory from call to call.
  CollectiveCall blocking;
  CollectiveOptions blocking_options;
  // The last blocking calls the route gave to the MPI library: the same again goes there at once.
  RepeatedCalls to_mpi_again;
  // Its ranks in MPI_COMM_WORLD: communicators of the same group share a job.
  std::vector<int> group;
  // Every rank holds a job slot for this communicator (its job will be its own).
  bool job_slot = false;
  // It shares the job of a communicator of the same group: `multilane` is set from the first.
  bool shares_job = false;
  // A job shared with other ranks, or with its ranks in another order: the job's ranks in
  // MPI_COMM_WORLD, in the job's order, by which the transport's errors name peers. Empty when
  // the job numbers the ranks as the communicator does.
  std::vector<int> job_group;
  // It may run multilane: it has a job slot or shares a job.
  bool may_run_multilane() const { return job_slot || shares_job; }
};

// Creates the keyval (at start_library()).
void create_comm_keyval();
// The state of `comm`, made now if it has none (a collective step: call it from a blocking
// collective).
CommState& state_of(MPI_Comm comm);
// The state of `comm` if it has one (not collective).
CommState* find_state(MPI_Comm comm);

// The thread's last look-up: an application's loop calls on one communicator, whose state is
// then found without the MPI library's attribute look-up. Any state deleted since, on any
// thread, makes it stale, so that a freed handle that MPI gives to a new communicator never
// finds the old state. Zero is no communicator of either MPI family. initial-exec: the library
// is loaded with the program (LD_PRELOAD or linked), and this model reads the variable without
// a call to __tls_get_addr.
struct LastLookup {
  MPI_Comm comm{};
  CommState* state = nullptr;
  std::uint64_t deleted = 0;
};
[[gnu::tls_model("initial-exec")]] extern constinit thread_local LastLookup last_lookup;

// The state of `comm` if this thread looked it up last and it is still alive, else null.
[[gnu::always_inline]] inline CommState* cached_state(MPI_Comm comm) {
  const LastLookup& last = last_lookup;
  if (last.comm != comm ||
      last.deleted != pass_through_state.states_deleted.load(std::memory_order_relaxed)) {
    return nullptr;
  }
  return last.state;
}
// The state's multilane job, joined now if it has none (collective, like state_of); only for a
// state that may run multilane.
std::shared_ptr<Communicator> multilane_of(CommState& state);
// Frees the state of every communicator still alive, then the keyval (at stop_library()).
void free_all_comm_states();

}  // namespace multilane::mpi
