// runtime/shm/tune.hpp — measures the shared-memory collectives over a grid of the paper's two
// parameters (buffer size B, pipeline depth D) and picks the fastest per collective and size
// (tunable-smp-collectives.txt, sec. 6 and 7).
//
// tune_shm() forks `ranks - 1` processes; with the calling process they form one ShmGroup on
// this node. For every collective, size and geometry, and for the group's default geometry,
// it measures as the paper does: (optionally) purge the cache by writing a buffer larger than
// the last-level cache, barrier, time `iterations` calls, take the maximum over the ranks; of
// `repetitions` such measurements the smallest counts (least disturbed by other load on the
// machine). Calls that copy once (cross-memory attach; shm_group.hpp's single-copy limits) do
// not go through the pipeline buffers, so their sizes are measured once with the default and
// not swept. Every wait is bounded by `timeout`; a failed rank fails the whole run (ShmError or
// UsageError), and no process or segment is left behind.
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

#include "multilane/schedule.hpp"
#include "runtime/shm/shm_group.hpp"

namespace multilane::runtime::shm {

struct TuneRequest {
  int ranks = 2;
  std::vector<Collective> collectives;
  std::vector<std::uint64_t> sizes;         // bytes per block (whole message for bcast)
  std::vector<std::uint64_t> buffer_sizes;  // B candidates
  std::vector<int> depths;                  // D candidates
  int iterations = 5;
  int repetitions = 3;
  bool purge_cache = false;
  std::chrono::milliseconds timeout{60'000};
};

struct TuneResult {
  Collective collective = Collective::Bcast;
  std::uint64_t size = 0;
  ShmTuning best;
  double best_s = 0;         // per call, maximum over ranks
  double default_s = 0;      // with ShmTuning{} (the group's default)
  bool single_copy = false;  // the call copies once: not swept, `best` is the default
  double gain() const { return best_s > 0 ? default_s / best_s : 1; }
};

// Throws UsageError for a bad request (ranks outside 1..kMaxLocalSize, empty lists, B < 64,
// D outside 1..64).
std::vector<TuneResult> tune_shm(const TuneRequest& request);

}  // namespace multilane::runtime::shm
