// emu/delay_line/wan_shaper.hpp — when a frame crossing one WAN direction arrives, if ever.
//
// The line sends one frame after the other at `bps` (store and forward: a frame has left
// when its last byte has), then the frame travels for the one-way latency. Frames waiting
// for the line form a drop-tail queue of at most `queue_bytes` (counting the frame being
// sent): a frame that does not fit is dropped. With bps = 0 the line has no rate limit and
// never queues. Times are CLOCK_MONOTONIC nanoseconds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

namespace multilane::emu {

class WanShaper {
 public:
  WanShaper(double bps, std::int64_t latency_ns, std::uint64_t queue_bytes);

  // The delivery time of a frame of `bytes` arriving at `now_ns`, or nullopt when the queue
  // is full. Arrival times must not decrease.
  std::optional<std::int64_t> admit(std::size_t bytes, std::int64_t now_ns);

  // Bytes waiting for (or on) the line at `now_ns`.
  std::uint64_t backlog_bytes(std::int64_t now_ns) const;
  // The line is busy sending until then (<= now when idle).
  std::int64_t busy_until_ns() const { return static_cast<std::int64_t>(busy_until_ns_); }

 private:
  double ns_per_byte_ = 0;  // 0: unlimited
  std::int64_t latency_ns_ = 0;
  std::uint64_t queue_bytes_ = 0;
  double busy_until_ns_ = 0;  // fractional, so rounding never accumulates
};

}  // namespace multilane::emu
