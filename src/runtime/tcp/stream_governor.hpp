// runtime/tcp/stream_governor.hpp — how many of a path's K streams carry a split message.
//
// K streams through one bottleneck need room for K congestion windows. When K is large for the
// path (64 streams on a 0.2 ms round trip: two segments per stream already overflow the
// bandwidth-delay product and the queue), the queue drops so often that streams keep waiting
// out retransmission timeouts, 200 ms at least on Linux. iperf3 -P K does not mind: the other
// streams fill the pipe meanwhile. A message does: it waits for its stalled streams' bytes.
// Fewer streams fill such a path just as well (one stream does at 0.2 ms) and lose less.
//
// So a set hands pieces only to its first in_use() streams that are not stalled, and adapts
// that number the way TCP adapts its window, additive increase and multiplicative decrease,
// with a stall (stall_watch.hpp) as the loss signal:
//   - a stream that carries the posted send stalls: halve, at most once per hold time (a
//     decrease shows only after the streams let go finish their pieces and recover), but never
//     below what the path needs: a stream carries at most its send window per round trip, so
//     the rate delivered so far needs rate x round trip / window streams, kept twice over
//     (on a long path the windows, not the queue, cap each stream, and fewer streams would
//     simply be slower);
//   - a split message completes without a stall: one more, or at once as many as the path
//     needs if that is more, up to K;
//   - but never more than 16 in use unless the path needs more. Each stream in use is one more
//     chance that the message waits at its end: with many streams sharing a path, each holds a
//     few segments, and a lost one brings no fast retransmit, so that stream pauses for a
//     tail-loss probe, two round trips or more, while the others are done. On the emulated
//     1 Gbit/s path with 10 and 20 ms round trips, 64 streams of which 29-37 in use reached
//     0.90-0.96x of iperf3 -P 64, and 16 or 20 in use 0.96-0.99x (docs/wan.md, section 1).
//     A path whose windows need more streams (rate x round trip / window, kept twice over)
//     gets them. The set starts with min(K, 16) in use, so that its first message does not
//     pay for a crowd either.
// The state lasts for the set's life: a path's conditions carry over from message to message.
#pragma once

#include <chrono>
#include <cstdint>

#include "runtime/tcp/io_wait.hpp"
#include "runtime/tcp/stream_progress.hpp"

namespace multilane::runtime {

// What the set knew about its path when a stream stalled or a split message completed.
struct PathSample {
  // Bytes/s the posted send got through: acknowledged since it began when a stream stalls,
  // the message's bytes over its time when it completes.
  double delivered_rate = 0;
  // The path's own round trip, without the queues' delay: the longest of the streams' shortest
  // (TCP_INFO's tcpi_min_rtt). Waiting in a queue is no room that more streams could fill.
  std::chrono::microseconds round_trip{0};
  std::uint64_t send_window = 0;  // the largest window a stream's peer offered, bytes

  // Takes one stream's figures into the path's round trip and window.
  void include(const StreamProgress& progress);
};

// When a split message began, to tell the rate at which the path delivers it.
struct MessagePace {
  Clock::time_point started{};
  std::uint64_t acknowledged_at_start = 0;  // the streams' acknowledged bytes then, added up

  // Bytes/s acknowledged since the start, given the streams' acknowledged bytes at `now`.
  double acknowledged_rate(Clock::time_point now, std::uint64_t acknowledged) const;
  // Bytes/s of the whole message of `bytes` bytes, completed at `now`.
  double message_rate(Clock::time_point now, std::uint64_t bytes) const;
};

struct StreamGovernorOptions {
  int streams = 1;      // K (less than 1 counts as 1)
  bool adapts = false;  // off: in_use() is always K; on: it starts at min(K, kCrowdLimit)
};

class StreamGovernor {
 public:
  explicit StreamGovernor(const StreamGovernorOptions& options);

  int in_use() const { return in_use_; }
  bool adapts() const { return adapts_; }
  // Streams that carrying `sample`'s rate needs, kept twice over (at least 1).
  static int streams_needed(const PathSample& sample);

  // A stream that carries the posted send stalled at `now`; `hold`: the least time between
  // two decreases.
  void stalled(Clock::time_point now, Clock::duration hold, const PathSample& sample);
  // A split message completed; `stalled`: some stream carrying it stalled meanwhile;
  // `sample`: the path during the message.
  void message_done(bool stalled, const PathSample& sample);
  // The most streams in use on a path that needs no more (see the top of this file).
  static constexpr int kCrowdLimit = 16;

 private:
  int streams_;
  bool adapts_;
  int in_use_;
  Clock::time_point last_decrease_{};
};

}  // namespace multilane::runtime
