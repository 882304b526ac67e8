// mpi/progress_wait.hpp — waiting for a multilane call while MPI keeps progressing.
//
// A rank inside a wrapped collective is, to MPI, inside a collective: its own requests (an
// MPI_Isend a peer is receiving before it joins the collective) must keep moving, or the peer
// never arrives and both wait for each other. So the wait polls: it tests the multilane call
// and pokes the MPI library's progress engine (PMPI_Iprobe) in turn, yielding the core at
// first and then sleeping in growing steps up to 200 us so that ranks sharing cores leave them
// to the engine's thread. Bounded: the multilane call itself fails after the communicator's
// timeout. The wrapped MPI_Wait family (completion.cpp) polls at the same pace.
#pragma once

#include <chrono>

#include "mpi/caller_cpu.hpp"
#include "multilane/communicator.hpp"

namespace multilane::mpi {

// Returns once `request` completed; throws its failure (CommunicationError).
void wait_with_progress(Request& request);

// The pause between two looks of a polling wait: a yield for the first 64, then a sleep that
// grows by 10 us a look, up to 200 us.
class PollPace {
 public:
  void pause();

 private:
  int looks_ = 0;
  std::chrono::microseconds sleep_{0};
};

// Calls `look` until it returns true, at PollPace's pace; the caller keeps its core (the wait
// may sleep).
template <typename Look>
void poll_until(Look look) {
  const CallerCpu keep_core;
  PollPace pace;
  while (!look()) pace.pause();
}

}  // namespace multilane::mpi
