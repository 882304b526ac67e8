// mpi/library.cpp — start and stop of the PMPI library (library.hpp).
#include "mpi/library.hpp"

#include <cstdio>
#include <exception>

#include "mpi/comm_state.hpp"
#include "mpi/decision_store.hpp"
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

// With a route forced to multilane, MPI_COMM_WORLD's state and job are made in MPI_Init, so
// that its nonblocking calls (which never set up) run with multilane from the first.
void set_up_world() {
  int rank = 0, size = 1;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &size);
  try {
    if (size > 1) multilane_of(state_of(MPI_COMM_WORLD));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "multilane: rank %d in MPI_Init, setting up MPI_COMM_WORLD: %s\n", rank,
                 e.what());
    PMPI_Abort(MPI_COMM_WORLD, 2);
  }
}

}  // namespace

Library& library() {
  static Library instance;
  return instance;
}

void start_library(int thread_level) {
  Library& lib = library();
  try {
    lib.settings = Settings::from_environment();
    if (!lib.settings.platform_file.empty()) {
      lib.platform = load_platform_file(lib.settings.platform_file);
    }
    if (lib.settings.enabled && thread_level != MPI_THREAD_MULTIPLE) {
      load_decisions(lib.settings.tuning_file);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "multilane: %s\n", e.what());
    PMPI_Abort(MPI_COMM_WORLD, 2);
  }
  if (!lib.settings.enabled || thread_level == MPI_THREAD_MULTIPLE) return;
  if (PMPI_Add_error_class(&lib.error_class) != MPI_SUCCESS) lib.error_class = MPI_ERR_OTHER;
  try {
    create_comm_keyval();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "multilane: %s; collectives stay with the MPI library\n", e.what());
    return;
  }
  lib.active = true;
  if (forces_multilane(lib.settings)) set_up_world();
}

void stop_library() {
  Library& lib = library();
  if (!lib.active) return;
  finish_all_pending();
  save_decisions(lib.settings.tuning_file);
  free_all_comm_states();
  lib.active = false;
}

}  // namespace multilane::mpi
