// mpi/mpi_errors.cpp — failures to MPI error codes and handlers (mpi_errors.hpp).
#include "mpi/mpi_errors.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "mpi/comm_state.hpp"
#include "mpi/library.hpp"

namespace multilane::mpi {

namespace {
constexpr std::chrono::milliseconds kAbortGrace{500};
}  // namespace

int report_failure(MPI_Comm comm, std::string_view function, const std::string& cause) {
  int rank = -1, size = 0, world_rank = -1;
  PMPI_Comm_rank(comm, &rank);
  PMPI_Comm_size(comm, &size);
  PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  const std::string message =
      fmt::format("multilane: rank {} (world rank {}) in {} on a communicator of {} ranks: {}",
                  rank, world_rank, function, size, cause);
  int code = MPI_ERR_OTHER;
  if (PMPI_Add_error_code(library().error_class, &code) == MPI_SUCCESS) {
    // MPI_MAX_ERROR_STRING bounds what the MPI library keeps.
    const std::string kept = message.substr(0, MPI_MAX_ERROR_STRING - 1);
    PMPI_Add_error_string(code, kept.c_str());
  } else {
    code = MPI_ERR_OTHER;
  }
  MPI_Errhandler handler = MPI_ERRHANDLER_NULL;
  PMPI_Comm_get_errhandler(comm, &handler);
  const bool fatal = handler == MPI_ERRORS_ARE_FATAL;
  const bool returns = handler == MPI_ERRORS_RETURN;
  if (handler != MPI_ERRHANDLER_NULL) PMPI_Errhandler_free(&handler);
  if (fatal) {
    std::fprintf(stderr, "%s\n", message.c_str());
    std::fflush(stderr);
    end_all_multilane_jobs();
    // The other ranks often fail in the same call for the same cause (a set-up failure that
    // came through the all-gather, a mismatch): a moment lets them print theirs before the
    // launcher kills them for this abort.
    std::this_thread::sleep_for(kAbortGrace);
    PMPI_Abort(comm, 1);
  } else if (!returns) {
    PMPI_Comm_call_errhandler(comm, code);
  }
  return code;
}

}  // namespace multilane::mpi
