// mpi/pmpi_check.cpp — PMPI return codes to exceptions (pmpi_check.hpp).
#include "mpi/pmpi_check.hpp"

#include <fmt/format.h>

#include <array>

#include "multilane/errors.hpp"

namespace multilane::mpi {

void pmpi_check(int code, const char* call) {
  if (code == MPI_SUCCESS) return;
  std::array<char, MPI_MAX_ERROR_STRING> text{};
  int length = 0;
  PMPI_Error_string(code, text.data(), &length);
  throw CommunicationError(ErrorKind::internal, fmt::format("{} failed: {}", call,
                                                            std::string_view(text.data(), length)));
}

}  // namespace multilane::mpi
