// mpi/all_gather_text.hpp — every rank's text, in rank order, with two PMPI calls (the lengths,
// then the bytes): how the library's set-up exchanges names and addresses.
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

namespace multilane::mpi {

// Collective over `comm` (of `size` ranks). `what` names the exchange in errors. Throws
// CommunicationError.
std::vector<std::string> all_gather_text(MPI_Comm comm, int size, const std::string& mine,
                                         const char* what);

}  // namespace multilane::mpi
