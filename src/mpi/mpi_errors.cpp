// mpi/mpi_errors.cpp — failures to MPI error codes and handlers (mpi_errors.hpp).
#include "mpi/mpi_errors.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>

#include "mpi/comm_state.hpp"
#include "mpi/library.hpp"
#include "runtime/shm/segment_name.hpp"

namespace multilane::mpi {

namespace {
constexpr std::chrono::milliseconds kAbortGrace{500};

// Whether a code added to the predefined class `error_class` keeps its own text in
// MPI_Error_string (Open MPI does; MPICH answers with the class's text).
bool keeps_own_text(int error_class) {
  constexpr std::string_view kProbe = "multilane: probing error strings";
  int code = MPI_ERR_OTHER;
  if (PMPI_Add_error_code(error_class, &code) != MPI_SUCCESS) return false;
  if (PMPI_Add_error_string(code, kProbe.data()) != MPI_SUCCESS) return false;
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  PMPI_Error_string(code, text, &length);
  return std::string_view(text, static_cast<std::size_t>(length)) == kProbe;
}

int own_class(ErrorKind kind) {
  int error_class = MPI_ERR_OTHER;
  if (PMPI_Add_error_class(&error_class) != MPI_SUCCESS) return MPI_ERR_OTHER;
  const std::string text = fmt::format("multilane: {}", kind_name(kind));
  PMPI_Add_error_string(error_class, text.c_str());
  return error_class;
}

// The transport names a peer by its rank in the multilane job (shared memory by its local
// rank), which a communicator sharing the job of other ranks, or of its ranks in another order,
// numbers differently: the message then says whose ranks they are.
std::string job_ranks_note(MPI_Comm comm, ErrorKind kind) {
  const bool from_transport = kind == ErrorKind::timeout || kind == ErrorKind::peer_gone ||
                              kind == ErrorKind::authentication || kind == ErrorKind::mismatch ||
                              kind == ErrorKind::protocol;
  const CommState* state = from_transport ? find_state(comm) : nullptr;
  if (!state || state->job_group.empty()) return "";
  const std::vector<int>& job = state->job_group;
  bool world = true;
  for (std::size_t i = 0; i < job.size(); ++i) world = world && job[i] == static_cast<int>(i);
  if (world) {
    return " (the ranks it names, local ranks aside, are MPI_COMM_WORLD's: this communicator "
           "shares their multilane job)";
  }
  constexpr std::size_t kShown = 16;
  std::string ranks;
  for (std::size_t i = 0; i < std::min(job.size(), kShown); ++i) {
    ranks += fmt::format("{}{} is {}", i == 0 ? "" : ", ", i, job[i]);
  }
  if (job.size() > kShown) ranks += ", ...";
  return fmt::format(
      " (the ranks it names, local ranks aside, are those of the multilane job this communicator "
      "shares; in MPI_COMM_WORLD: {})",
      ranks);
}

}  // namespace

ErrorClasses make_error_classes() {
  ErrorClasses classes{};
  const bool predefined = keeps_own_text(MPI_ERR_ARG) && keeps_own_text(MPI_ERR_NO_MEM);
  for (std::size_t i = 0; i < classes.size(); ++i) {
    const auto kind = static_cast<ErrorKind>(i);
    if (predefined && (kind == ErrorKind::usage || kind == ErrorKind::platform)) {
      classes[i] = MPI_ERR_ARG;
    } else if (predefined && kind == ErrorKind::resource) {
      classes[i] = MPI_ERR_NO_MEM;
    } else if (kind == ErrorKind::platform) {
      classes[i] = classes[static_cast<std::size_t>(ErrorKind::usage)];  // made just before
    } else {
      classes[i] = own_class(kind);
    }
  }
  return classes;
}

int report_failure(MPI_Comm comm, std::string_view function, const std::exception& error) {
  return report_failure(comm, function, runtime::Failure::of(error));
}

int report_failure(MPI_Comm comm, std::string_view function, const runtime::Failure& failure) {
  int rank = -1, size = 0, world_rank = -1;
  PMPI_Comm_rank(comm, &rank);
  PMPI_Comm_size(comm, &size);
  PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  const std::string message = fmt::format(
      "multilane: rank {} (world rank {}) in {} on a communicator of {} ranks: {}{}", rank,
      world_rank, function, size, failure.describe(), job_ranks_note(comm, failure.kind));
  const int error_class = library().error_classes[static_cast<std::size_t>(failure.kind)];
  int code = MPI_ERR_OTHER;
  if (PMPI_Add_error_code(error_class, &code) == MPI_SUCCESS) {
    // MPI_MAX_ERROR_STRING bounds what the MPI library keeps.
    const std::string kept = message.substr(0, MPI_MAX_ERROR_STRING - 1);
    PMPI_Add_error_string(code, kept.c_str());
  } else {
    code = error_class;
  }
  MPI_Errhandler handler = MPI_ERRHANDLER_NULL;
  PMPI_Comm_get_errhandler(comm, &handler);
  const bool fatal = handler == MPI_ERRORS_ARE_FATAL;
  const bool returns = handler == MPI_ERRORS_RETURN;
  if (handler != MPI_ERRHANDLER_NULL) PMPI_Errhandler_free(&handler);
  if (fatal) {
    std::fprintf(stderr, "%s\n", message.c_str());
    std::fflush(stderr);
    // The segments this process made would outlive the abort's SIGKILL. Only their names go:
    // other threads may still be inside a call on them (MPI_THREAD_MULTIPLE).
    runtime::shm::remove_own_segments();
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
