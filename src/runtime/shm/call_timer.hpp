// runtime/shm/call_timer.hpp — times one kind of call of a ShmGroup as the SMP paper measures
// (tunable-smp-collectives.txt, sec. 7): optionally purge the cache, barrier, time the call,
// take the maximum over the ranks; the median of several such measurements counts.
//
// Every call a measurement makes (the warm-up, the barriers and the allgather that takes the
// maximum) uses the geometry of the tuning under test. The first call with a new geometry
// waits until every buffer of the old one is drained; had the bookkeeping used the group's
// default geometry, every timed call of any other geometry would have paid that wait, and a
// tuner would have favoured the default for it, not for its speed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "multilane/schedule.hpp"
#include "runtime/shm/shm_group.hpp"

namespace multilane::runtime::shm {

struct CallTiming {
  int iterations = 1;        // calls per measurement (their mean counts)
  int repetitions = 11;      // measurements per call kind (their median counts)
  bool purge_cache = false;  // write a buffer larger than the last-level cache before each
};

class CallTimer {
 public:
  // Every rank of `group` must make the same CallTimer calls in the same order.
  CallTimer(ShmGroup& group, const CallTiming& timing);

  // Seconds per call of `collective` with `size` bytes per block (the whole message for bcast)
  // and `tuning`, root 0: the median over the repetitions of the slowest rank's mean. Every
  // rank returns the same value.
  double seconds_per_call(Collective collective, std::uint64_t size, const ShmTuning& tuning);

 private:
  double slowest(double mine, const std::optional<ShmTuning>& bookkeeping);

  ShmGroup& group_;
  CallTiming timing_;
  std::vector<std::byte> purge_;
};

}  // namespace multilane::runtime::shm
