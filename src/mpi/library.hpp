// mpi/library.hpp — the PMPI library's process-wide state, from MPI_Init to MPI_Finalize.
//
// start() runs right after PMPI_Init / PMPI_Init_thread: it reads the settings (and the
// platform and tuning files, so that a bad one stops the job at MPI_Init with its FILE:LINE),
// creates the communicator keyval (comm_state.hpp) and the error class (mpi_errors.hpp); with a
// collective forced to multilane, it sets up MPI_COMM_WORLD's job. stop() runs before
// PMPI_Finalize: it completes what is in flight, writes the tuning file (decision_store.hpp)
// and frees every communicator's multilane job while MPI still works. Between the two, active()
// says whether calls may take multilane's route: not with MULTILANE_MPI=off, not before MPI_Init
// or after MPI_Finalize. Whatever the thread level: with MPI_THREAD_MULTIPLE, calls on different
// communicators are served at once (comm_state.hpp, pending_requests.hpp).
#pragma once

#include <mpi.h>

#include <optional>

#include "mpi/mpi_errors.hpp"
#include "mpi/settings.hpp"
#include "multilane/platform.hpp"

namespace multilane::mpi {

struct Library {
  Settings settings;
  bool active = false;
  int keyval = MPI_KEYVAL_INVALID;
  // The MPI error class of each ErrorKind (mpi_errors.hpp), made at start.
  ErrorClasses error_classes = [] {
    ErrorClasses unset;
    unset.fill(MPI_ERR_OTHER);
    return unset;
  }();
  std::optional<Platform> platform;  // MULTILANE_PLATFORM's, read at start
};

Library& library();
void start_library();
void stop_library();

}  // namespace multilane::mpi
