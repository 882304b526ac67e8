// runtime/tcp/stall_watch.hpp — tells a stalled TCP stream from one that is merely busy.
//
// A stream is stalled when it has unacknowledged bytes and no acknowledgement arrived for
// longer than the caller's patience: a floor and a number of the stream's round trips (or of
// the time it takes to send two segments, when that is longer: a paced stream). A
// stream that moves is acknowledged about once per round trip, while one waiting out a
// retransmission timeout (200 ms at least on Linux) or facing a closed window is not. Each
// stream is sampled with its StreamProgress now and then (striped_sender.hpp's look_at(), every
// millisecond for a StreamSet, every 10 ms for the engine's WAN links); the patience may differ
// from sample to sample (a sender is more patient while a stall costs nothing).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>

#include "runtime/tcp/io_wait.hpp"
#include "runtime/tcp/stream_progress.hpp"

namespace multilane::runtime {

// How long a stream may go without an acknowledgement before it counts as stalled: the
// longer of `floor` and `round_trips` of its smoothed round-trip time or of its segment pair
// time, whichever is longer (stream_progress.hpp).
struct StallPatience {
  std::chrono::milliseconds floor{60};
  int round_trips = 4;
  // The wait for a stream whose beat (round trip or segment pair time) is `beat`.
  Clock::duration wait(std::chrono::microseconds beat) const {
    return std::max<Clock::duration>(floor, round_trips * beat);
  }
};

class StallWatch {
 public:
  explicit StallWatch(int streams);
  // Records a sample of `stream`; true when it is stalled (see the top of this file).
  bool stalled(int stream, const StreamProgress& progress, Clock::time_point now,
               const StallPatience& patience);

 private:
  struct Last {
    std::uint64_t acknowledged = 0;
    Clock::time_point since{};  // when it last moved, or got bytes in flight
    bool busy = false;          // it had unacknowledged bytes at the last sample
  };
  std::vector<Last> last_;
};

}  // namespace multilane::runtime
