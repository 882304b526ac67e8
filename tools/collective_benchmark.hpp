// tools/collective_benchmark.hpp — timing collectives and point-to-point transfers the way
// the SMP paper measures them, inside a running job.
//
// Method: one warm-up call (it also opens the connections); then, per repetition, a barrier,
// `iterations` calls timed back to back, the per-call time of every rank, and the maximum
// over ranks (the collective is done when its last rank is). The result is the median over
// repetitions. With `check`, one extra call before the timing runs on patterned buffers and
// every rank verifies every byte it received (data_check.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "multilane/communicator.hpp"
#include "multilane/count_patterns.hpp"
#include "runtime/check/bench_buffer.hpp"

namespace multilane::runtime {

struct BenchSettings {
  int iterations = 0;   // calls per repetition; 0: chosen from the size
  int repetitions = 5;  // timed repetitions; the median is reported
  bool check = false;
  int root = 0;
  CollectiveOptions options;
  BenchMemory memory = BenchMemory::Application;  // where the send and receive buffers live
  Reduction reduction;  // reductions: what is combined (sizes are whole elements of it)
  CountsSpec counts;    // the v-forms: the blocks' sizes, the size being the largest
};

struct BenchPoint {
  std::string algorithm;  // resolved (never "auto")
  std::uint64_t size = 0;
  int iterations = 0;
  std::vector<double> times_s;  // per repetition, max over ranks (rank 0 only)
  double median_s = 0;          // rank 0 only
  bool checked = false;
  bool check_ok = true;  // on every rank (each failing rank prints its own error)
};

// Collective call of every rank; rank 0 gets the times.
BenchPoint measure_collective(Communicator& comm, Collective collective, std::uint64_t size,
                              const BenchSettings& settings);

// Ranks 0 and 1 exchange `size` bytes there and back with blocking send and receive; the time
// is one round trip (algorithm "pingpong"). Ranks > 1 only take part in the barriers.
BenchPoint measure_pingpong(Communicator& comm, std::uint64_t size, const BenchSettings& settings);

struct P2pPoint {
  std::uint64_t size = 0;
  std::vector<double> times_s;  // one-way transfer time per repetition (rank 0)
  double median_s = 0;
  bool check_ok = true;
};

// Rank 0 sends `size` bytes to rank 1, which answers with one byte; ranks > 1 only take part
// in the barriers.
P2pPoint measure_p2p(Communicator& comm, std::uint64_t size, int repetitions, bool check);

double median(std::vector<double> values);

}  // namespace multilane::runtime
