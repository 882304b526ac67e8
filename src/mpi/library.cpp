// mpi/library.cpp — start and stop of the PMPI library (library.hpp).
#include "mpi/library.hpp"

#include <cstdio>
#include <exception>

#include "mpi/comm_state.hpp"
#include "mpi/pending_requests.hpp"
#include "multilane/platform_file.hpp"

namespace multilane::mpi {

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
}

void stop_library() {
  Library& lib = library();
  if (!lib.active) return;
  finish_all_pending();
  free_all_comm_states();
  lib.active = false;
}

}  // namespace multilane::mpi
