// mpi/call_profile.hpp — MULTILANE_PROFILE=1: how much of a program's time its collectives
// take, so a user can tell whether faster collectives can help it at all.
//
// Every intercepted call is timed as a whole, whichever route it takes (a nonblocking one
// until it returns: its wait is the program's MPI_Wait, not counted). At MPI_Finalize rank 0
// of MPI_COMM_WORLD prints, for each kind of call, the calls and seconds summed over the ranks
// and divided by their number, and the total against the time since MPI_Init:
//   multilane-mpi: profile over 8 ranks, per rank: MPI_Allreduce 1202 calls 0.412 s, ...;
//   collectives 0.61 s of 27.3 s since MPI_Init (2.2%)
// Without the variable no clock is read.
#pragma once

#include <mpi.h>

#include <chrono>

#include "mpi/wrapped_call.hpp"

namespace multilane::mpi {

// Starts the clock of the program (at MPI_Init).
void start_profile();
// Adds one call's time.
void add_to_profile(WrappedCall call, bool nonblocking, std::chrono::steady_clock::duration time);
// Sums over MPI_COMM_WORLD's ranks and prints on rank 0 (collective; before PMPI_Finalize).
void report_profile();

// Times one call from construction to destruction.
class ProfiledCall {
 public:
  ProfiledCall(WrappedCall call, bool nonblocking)
      : call_(call), nonblocking_(nonblocking), started_(std::chrono::steady_clock::now()) {}
  ~ProfiledCall() {
    add_to_profile(call_, nonblocking_, std::chrono::steady_clock::now() - started_);
  }
  ProfiledCall(const ProfiledCall&) = delete;
  ProfiledCall& operator=(const ProfiledCall&) = delete;

 private:
  WrappedCall call_;
  bool nonblocking_;
  std::chrono::steady_clock::time_point started_;
};

}  // namespace multilane::mpi
