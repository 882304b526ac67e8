// mpi/comm_state.cpp — the keyval and the live states (comm_state.hpp).
#include "mpi/comm_state.hpp"

#include <fmt/format.h>

#include <cstdio>

#include <atomic>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "mpi/decision_store.hpp"
#include "mpi/discovered_platform.hpp"
#include "mpi/dispatch_counters.hpp"
#include "mpi/library.hpp"
#include "mpi/pmpi_check.hpp"
#include "mpi/shared_jobs.hpp"

namespace multilane::mpi {

namespace {

// Every live state, so that stop_library() can free those of communicators never freed, and
// the job slots they hold.
std::mutex live_mutex;
std::set<CommState*> live;
int job_slots_taken = 0;
int delete_state(MPI_Comm, int, void* attribute, void*) {
  auto* state = static_cast<CommState*>(attribute);
  pass_through_state.states_deleted.fetch_add(1, std::memory_order_relaxed);
  {
    std::lock_guard lock(live_mutex);
    live.erase(state);
    if (state->job_slot) --job_slots_taken;
  }
  count_route_calls(state->placement, state->routes);
  delete state;
  return MPI_SUCCESS;
}

// Takes a job slot on this rank if one is free, and keeps it if every rank of `comm` took one
// (collective).
bool take_job_slot(MPI_Comm comm) {
  int full = 0;
  {
    std::lock_guard lock(live_mutex);
    full = job_slots_taken >= library().settings.max_jobs ? 1 : 0;
    if (!full) ++job_slots_taken;
  }
  int any_full = full;
  pmpi_check(PMPI_Allreduce(&full, &any_full, 1, MPI_INT, MPI_MAX, comm), "PMPI_Allreduce");
  if (any_full && !full) {
    std::lock_guard lock(live_mutex);
    --job_slots_taken;
  }
  return any_full == 0;
}

}  // namespace

[[gnu::tls_model("initial-exec")]] constinit thread_local LastLookup last_lookup;

void create_comm_keyval() {
  pmpi_check(
      PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_state, &library().keyval, nullptr),
      "PMPI_Comm_create_keyval");
}

CommState* find_state(MPI_Comm comm) {
  if (CommState* state = cached_state(comm)) return state;
  const std::uint64_t deleted = pass_through_state.states_deleted.load(std::memory_order_relaxed);
  void* attribute = nullptr;
  int found = 0;
  pmpi_check(PMPI_Comm_get_attr(comm, library().keyval, &attribute, &found), "PMPI_Comm_get_attr");
  if (!found) return nullptr;
  last_lookup = {.comm = comm, .state = static_cast<CommState*>(attribute), .deleted = deleted};
  return last_lookup.state;
}

namespace {

// Whose job a communicator over `group` (its ranks in MPI_COMM_WORLD) shares, for
// MULTILANE_EXPLAIN.
std::string whose_job(const SharedSeat& seat, const std::vector<int>& group) {
  if (seat.job_group == group) return "a communicator of the same ranks";
  if (seat.job_group.size() == group.size()) return "the same ranks in another order";
  return fmt::format("{} ranks, these among them", seat.job_group.size());
}

}  // namespace

CommState& state_of(MPI_Comm comm) {
  if (CommState* state = find_state(comm)) return *state;
  auto state = std::make_unique<CommState>();
  state->comm = comm;
  const double started = PMPI_Wtime();
  state->layout = gather_layout(comm, library().platform, library().settings.platform_file);
  state->placement = placement_key(state->layout.platform);
  state->policy = std::make_unique<RoutePolicy>(library().settings, state->layout.platform);
  inherit_decisions(state->placement, state->routes);
  state->group = world_ranks(comm);
  std::string sharing;
  if (const std::optional<SharedSeat> seat =
          share_job(comm, state->group, state->layout.platform)) {
    state->multilane = seat->communicator;
    state->shares_job = true;
    if (seat->job_group != state->group) state->job_group = seat->job_group;
    count(Counted::JobsShared);
    sharing = fmt::format("; shares the multilane job of {} (call space {})",
                          whose_job(*seat, state->group), seat->space);
  } else {
    state->job_slot = take_job_slot(comm);
  }
  if (library().settings.explain && state->layout.rank == 0) {
    std::fprintf(stderr, "multilane-mpi: communicator of %s; found in %.1f ms%s\n",
                 summarize_platform(state->layout.platform).c_str(), (PMPI_Wtime() - started) * 1e3,
                 sharing.c_str());
  }
  pmpi_check(PMPI_Comm_set_attr(comm, library().keyval, state.get()), "PMPI_Comm_set_attr");
  std::lock_guard lock(live_mutex);
  live.insert(state.get());
  return *state.release();
}

std::shared_ptr<Communicator> multilane_of(CommState& state) {
  if (!state.multilane) {
    const double started = PMPI_Wtime();
    state.multilane = std::make_shared<Communicator>(join(state.comm, state.layout));
    remember_job(state.group, state.group, state.multilane);
    count(Counted::JobsMade);
    if (library().settings.explain && state.layout.rank == 0) {
      std::fprintf(stderr, "multilane-mpi: multilane job of %d ranks set up in %.1f ms\n",
                   state.layout.size, (PMPI_Wtime() - started) * 1e3);
    }
  }
  return state.multilane;
}

void free_all_comm_states() {
  std::vector<CommState*> states;
  {
    std::lock_guard lock(live_mutex);
    states.assign(live.begin(), live.end());
  }
  // Deleting the attribute runs delete_state(), which takes the state off `live`.
  for (CommState* state : states) PMPI_Comm_delete_attr(state->comm, library().keyval);
  if (library().keyval != MPI_KEYVAL_INVALID) PMPI_Comm_free_keyval(&library().keyval);
}

}  // namespace multilane::mpi
