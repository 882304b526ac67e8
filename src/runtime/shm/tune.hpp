// runtime/shm/tune.hpp — measures the shared-memory collectives over a grid of the paper's two
// parameters (buffer size B, pipeline depth D) and picks the fastest per collective and size
// (tunable-smp-collectives.txt, sec. 6 and 7).
//
// tune_shm() forks `ranks - 1` processes; with the calling process they form one ShmGroup on
// this node. For every collective, size and geometry, and for the group's default geometry,
// it measures as the paper does: (optionally) purge the cache by writing a buffer larger than
// the last-level cache, barrier, time `iterations` calls (default one, as the paper and
// bench/shm_bench.cpp time one call: more would let a pipelined writer run ahead into the
// next call), take the maximum over the ranks; of `repetitions` such measurements the median
// counts. Besides the grid of the paper's two-copy pipeline (CopyMode::Twice), every size is
// also measured copying once (CopyMode::Once, cross-memory attach, where the kernel allows
// it), whichever the default does at that size: which of the two is faster, and from which
// size, depends on the machine (shm_group.hpp, CopyMode). Every wait is bounded by `timeout`;
// a failed rank fails the whole run (ShmError or UsageError), and no process or segment is
// left behind.
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

#include "multilane/schedule.hpp"
#include "runtime/shm/call_timer.hpp"
#include "runtime/shm/shm_group.hpp"

namespace multilane::runtime::shm {

struct TuneRequest {
  int ranks = 2;
  std::vector<Collective> collectives;
  std::vector<std::uint64_t> sizes;         // bytes per block (whole message for bcast)
  std::vector<std::uint64_t> buffer_sizes;  // B candidates
  std::vector<int> depths;                  // D candidates
  CallTiming timing;                        // how each point is measured (call_timer.hpp)
  std::chrono::milliseconds timeout{60'000};
};

struct TuneResult {
  Collective collective = Collective::Bcast;
  std::uint64_t size = 0;
  ShmTuning best;
  double best_s = 0;         // per call, maximum over ranks
  double default_s = 0;      // with ShmTuning{} (the group's default)
  bool single_copy = false;  // `best` copies once (its buffer size and depth hardly matter)
  double gain() const { return best_s > 0 ? default_s / best_s : 1; }
};

// Throws UsageError for a bad request (ranks outside 1..kMaxLocalSize, empty lists, B < 64,
// D outside 1..64).
std::vector<TuneResult> tune_shm(const TuneRequest& request);

}  // namespace multilane::runtime::shm
