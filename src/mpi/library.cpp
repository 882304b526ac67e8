// mpi/library.cpp — start and stop of the PMPI library (library.hpp).
#include "mpi/library.hpp"

#include "mpi/call_profile.hpp"

#include <chrono>
#include <cstdio>
#include <exception>
#include <thread>

#include "mpi/caller_cpu.hpp"
#include "mpi/comm_state.hpp"
#include "mpi/decision_store.hpp"
#include "mpi/pass_through_state.hpp"
#include "mpi/pending_requests.hpp"
#include "multilane/platform_file.hpp"

namespace multilane::mpi {

namespace {

bool forces_multilane(const Settings& settings) {
  for (const std::string& forced : settings.forced) {
    if (!forced.empty() && forced != "mpi") return true;
  }
  return false;
}

// A rank that cannot set up publishes why in the address exchange, and the others fail with
// "rank R could not set up: ...". The first abort kills every rank, so each waits (at most
// kReportWait) until all have come here and printed their reason. A rank that set up and does
// not come makes it wait the bound.
void wait_for_the_others_to_fail() {
  constexpr auto kReportWait = std::chrono::seconds(5);
  MPI_Request all_failed = MPI_REQUEST_NULL;
  if (PMPI_Ibarrier(MPI_COMM_WORLD, &all_failed) != MPI_SUCCESS) return;
  const auto deadline = std::chrono::steady_clock::now() + kReportWait;
  int done = 0;
  while (PMPI_Test(&all_failed, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && !done &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

// With a route forced to multilane, MPI_COMM_WORLD's state and job are made in MPI_Init, so
// that its nonblocking calls (which never set up) run with multilane from the first.
void set_up_world() {
  int rank = 0, size = 1;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &size);
  try {
    if (size == 1) return;
    const CallerCpu keep_core;  // the set-up sleeps and wakes (caller_cpu.hpp)
    CommState& world = state_of(MPI_COMM_WORLD);
    if (world.may_run_multilane()) multilane_of(world);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "multilane: rank %d in MPI_Init, setting up MPI_COMM_WORLD: %s\n", rank,
                 e.what());
    std::fflush(stderr);
    wait_for_the_others_to_fail();
    PMPI_Abort(MPI_COMM_WORLD, 2);
  }
}

// The pass-through's copy of what lets a call pass (pass_through_state.hpp).
void open_pass_through(const Library& lib) {
  std::uint32_t forced = 0;
  for (std::size_t call = 0; call < kWrappedCalls; ++call) {
    if (!lib.settings.forced[call].empty()) forced |= 1u << call;
  }
  pass_through_state.forced.store(forced, std::memory_order_relaxed);
  pass_through_state.open.store(!lib.settings.profile && !lib.settings.explain,
                                std::memory_order_release);
}

}  // namespace

PassThroughState pass_through_state;

Library& library() {
  static Library instance;
  return instance;
}

void start_library() {
  Library& lib = library();
  try {
    lib.settings = Settings::from_environment();
    if (!lib.settings.platform_file.empty()) {
      lib.platform = load_platform_file(lib.settings.platform_file);
    }
    if (lib.settings.enabled) load_decisions(lib.settings.tuning_file);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "multilane: %s\n", e.what());
    PMPI_Abort(MPI_COMM_WORLD, 2);
  }
  if (lib.settings.profile) start_profile();
  if (!lib.settings.enabled) return;
  lib.error_classes = make_error_classes();
  try {
    create_comm_keyval();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "multilane: %s; collectives stay with the MPI library\n", e.what());
    return;
  }
  lib.active = true;
  open_pass_through(lib);
  if (forces_multilane(lib.settings)) set_up_world();
}

void stop_library() {
  Library& lib = library();
  if (lib.settings.profile) report_profile();
  if (!lib.active) return;
  pass_through_state.open.store(false, std::memory_order_relaxed);
  finish_all_pending();
  free_all_comm_states();  // counts each communicator's calls for the file
  save_decisions(lib.settings.tuning_file);
  lib.active = false;
}

}  // namespace multilane::mpi
