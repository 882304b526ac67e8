// emu/delay_line/counters.hpp — a delay line's counters, shared through a small file.
//
// The daemon maps /run/multilane/NAME/wan<i>.counters and updates the counters as frames
// pass (relaxed atomics, lock-free on every 64-bit Linux target); `emu status` maps the same
// file and reads them while the daemon runs. The queue is given as the time the line stays
// busy (CLOCK_MONOTONIC) and its rate, so a reader computes the backlog at its own "now".
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

namespace multilane::emu {

struct DirectionCounters {
  std::atomic<std::uint64_t> frames_in{0};  // read from the source site's TAP
  std::atomic<std::uint64_t> bytes_in{0};
  std::atomic<std::uint64_t> filtered{0};         // not meant for the far site (not forwarded)
  std::atomic<std::uint64_t> drops_queue{0};      // drop-tail: the queue was full
  std::atomic<std::uint64_t> drops_loss{0};       // random loss
  std::atomic<std::uint64_t> drops_memory{0};     // no room to hold the frame (should stay 0)
  std::atomic<std::uint64_t> write_errors{0};     // the far TAP refused the frame
  std::atomic<std::uint64_t> windows_clamped{0};  // TCP segments whose window was lowered
  std::atomic<std::uint64_t> frames_out{0};       // delivered to the far site's TAP
  std::atomic<std::uint64_t> bytes_out{0};
  std::atomic<std::uint64_t> in_flight_frames{0};  // accepted, not yet delivered
  std::atomic<std::uint64_t> max_queue_bytes{0};   // largest backlog seen at an arrival
  std::atomic<std::int64_t> busy_until_ns{0};      // the line sends queued bytes until then
  std::atomic<std::uint64_t> bps{0};               // line rate, bytes per second (0: unlimited)
};

struct CounterBlock {
  static constexpr std::uint64_t kMagic = 0x6d6c2d77616e3032;  // "ml-wan02"
  std::uint64_t magic = kMagic;
  std::atomic<std::int64_t> pid{0};
  DirectionCounters directions[2];  // [0]: site_a -> site_b, [1]: site_b -> site_a
};

// A mapping of a counters file. `create` makes (or truncates) it, `open` maps an existing
// one and checks its magic. Both throw EmuError naming the file.
class CounterFile {
 public:
  static CounterFile create(const std::string& path);
  static CounterFile open(const std::string& path);
  CounterFile(CounterFile&& other) noexcept;
  CounterFile& operator=(CounterFile&&) = delete;
  ~CounterFile();

  CounterBlock& block() { return *block_; }
  const CounterBlock& block() const { return *block_; }

 private:
  explicit CounterFile(CounterBlock* block) : block_(block) {}
  CounterBlock* block_ = nullptr;
};

// Backlog in bytes of one direction at CLOCK_MONOTONIC time `now_ns`.
std::uint64_t queue_bytes_at(const DirectionCounters& counters, std::int64_t now_ns);
std::int64_t monotonic_ns();

}  // namespace multilane::emu
