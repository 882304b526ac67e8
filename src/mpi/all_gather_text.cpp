// mpi/all_gather_text.cpp — PMPI_Allgather of lengths, PMPI_Allgatherv of bytes
// (all_gather_text.hpp).
#include "mpi/all_gather_text.hpp"

#include <fmt/format.h>

#include <climits>

#include "mpi/pmpi_check.hpp"
#include "multilane/errors.hpp"

namespace multilane::mpi {

std::vector<std::string> all_gather_text(MPI_Comm comm, int size, const std::string& mine,
                                         const char* what) {
  if (mine.size() > INT_MAX / 2)
    throw CommunicationError(ErrorKind::resource, fmt::format("{}: text too long", what));
  const int length = static_cast<int>(mine.size());
  std::vector<int> lengths(static_cast<std::size_t>(size));
  pmpi_check(PMPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, comm),
             "PMPI_Allgather (text lengths)");
  std::vector<int> offsets(lengths.size());
  long long total = 0;
  for (std::size_t r = 0; r < lengths.size(); ++r) {
    if (total + lengths[r] > INT_MAX) {
      throw CommunicationError(ErrorKind::resource,
                               fmt::format("{}: texts too long to gather", what));
    }
    offsets[r] = static_cast<int>(total);
    total += lengths[r];
  }
  std::string all(static_cast<std::size_t>(total), '\0');
  pmpi_check(PMPI_Allgatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(),
                             offsets.data(), MPI_CHAR, comm),
             "PMPI_Allgatherv (texts)");
  std::vector<std::string> out;
  for (std::size_t r = 0; r < lengths.size(); ++r) {
    out.push_back(
        all.substr(static_cast<std::size_t>(offsets[r]), static_cast<std::size_t>(lengths[r])));
  }
  return out;
}

}  // namespace multilane::mpi
