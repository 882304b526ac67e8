// mpi/pass_through_state.hpp — the process-wide facts that a call going straight to the MPI
// library reads, kept in one cache line.
//
// Most wrapped calls of a program whose routes are decided go to the MPI library unchanged
// (dispatch.hpp's pass-through). Such a call costs a direct PMPI_* call plus the loads that let
// it pass, and those loads are the cost when caches are cold: with two ranks to a core, every
// call comes after the other rank ran, and each further cache line or page the path reads costs
// tens of nanoseconds. So the facts it reads sit together here, beside the thread's last
// communicator (comm_state.hpp) and the communicator's remembered calls (repeated_calls.hpp).
#pragma once

#include <atomic>
#include <cstdint>

namespace multilane::mpi {

struct alignas(64) PassThroughState {
  // Calls may pass without a look-up: the library is active and neither MULTILANE_PROFILE nor
  // MULTILANE_EXPLAIN needs to see every call. Set by start_library() and stop_library().
  std::atomic<bool> open{false};
  // A bit per WrappedCall forced by MULTILANE_ALGORITHM_<COLL>: such a call is routed even when
  // it moves no data.
  std::atomic<std::uint32_t> forced{0};
  // Communicator states deleted so far: a thread's cached look-up is valid only while none was
  // deleted since (comm_state.cpp).
  std::atomic<std::uint64_t> states_deleted{0};
  // MPI_Type_free and MPI_Op_free calls so far: a remembered call is valid only while its
  // handles name what they named (repeated_calls.hpp).
  std::atomic<std::uint64_t> handle_generation{0};
};

extern PassThroughState pass_through_state;

}  // namespace multilane::mpi
