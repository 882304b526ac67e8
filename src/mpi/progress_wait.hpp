// mpi/progress_wait.hpp — waiting for a multilane call while MPI keeps progressing.
//
// A rank inside a wrapped collective is, to MPI, inside a collective: its own requests (an
// MPI_Isend a peer is receiving before it joins the collective) must keep moving, or the peer
// never arrives and both wait for each other. So the wait polls: it tests the multilane call
// and pokes the MPI library's progress engine (PMPI_Iprobe) in turn, spinning briefly and then
// sleeping in growing steps up to 200 us so that ranks sharing cores leave them to the
// engine's thread. Bounded: the multilane call itself fails after the communicator's timeout.
#pragma once

#include "multilane/communicator.hpp"

namespace multilane::mpi {

// Returns once `request` completed; throws its failure (CommunicationError).
void wait_with_progress(Request& request);

}  // namespace multilane::mpi
