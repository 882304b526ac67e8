// mpi/dispatch_counters.hpp — how many calls took each route, for tests; exported to C programs
// as
//   int multilane_mpi_counters(unsigned long long* values, int count)
// which fills up to `count` values in the order of `Counted` and returns how many it has (8).
//
// Each thread counts in its own counters and a read sums them: the threads of an
// MPI_THREAD_MULTIPLE program count without sharing a cache line, and a count costs what an
// increment of a plain integer costs.
#pragma once

#include <array>
#include <cstddef>

namespace multilane::mpi {

enum class Counted : std::size_t {
  BlockingMultilane,
  // Blocking calls given to the MPI library after a look-up of their route. A call that passes
  // through (dispatch.hpp) is not counted: the count would cost it a cache line or two.
  BlockingMpi,
  NonblockingMultilane,
  NonblockingMpi,  // likewise after a look-up
  // Blocking calls served by multilane that handed work to another thread (the engine's
  // progress thread): 0 when every one ran on the caller's thread.
  BlockingHandedOff,
  // Communicators that got a multilane job of their own, and those that share the job of a
  // communicator over the same ranks (shared_jobs.hpp).
  JobsMade,
  JobsShared,
  // Served calls whose caller the scheduler moved to another core meanwhile, moved back
  // (caller_cpu.hpp).
  CallersMovedBack,
};
inline constexpr std::size_t kCounted = 8;

void count(Counted what);
// Every thread's counts so far, summed (those of threads that ended included).
std::array<unsigned long long, kCounted> counted_so_far();

}  // namespace multilane::mpi

extern "C" int multilane_mpi_counters(unsigned long long* values, int count);
