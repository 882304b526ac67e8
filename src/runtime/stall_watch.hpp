// runtime/stall_watch.hpp — tells a stalled TCP stream from one that is merely busy.
//
// A stream is stalled when it has unacknowledged bytes and no acknowledgement arrived for
// longer than `floor` and four of its round trips: a stream that moves is acknowledged about
// once per round trip, while one waiting out a retransmission timeout (200 ms at least on
// Linux) or facing a closed window is not. Each stream is sampled with its StreamProgress now
// and then (stream_set.cpp samples every few milliseconds while a send is posted).
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

#include "runtime/io_wait.hpp"
#include "runtime/stream_progress.hpp"

namespace multilane::runtime {

class StallWatch {
 public:
  StallWatch(int streams, std::chrono::milliseconds floor);
  // Records a sample of `stream`; true when it is stalled (see the top of this file).
  bool stalled(int stream, const StreamProgress& progress, Clock::time_point now);

 private:
  struct Last {
    std::uint64_t acknowledged = 0;
    Clock::time_point since{};  // when it last moved, or got bytes in flight
    bool busy = false;          // it had unacknowledged bytes at the last sample
  };
  std::vector<Last> last_;
  std::chrono::milliseconds floor_;
};

}  // namespace multilane::runtime
