// emu/delay_line/delay_line.hpp — the WAN link of an emulated grid: a frame forwarder.
//
// A DelayLine joins two frame ports (the TAP devices on two sites' bridges; in tests any
// pair of message-preserving descriptors). Each direction carries only the frames meant for
// the far site (frame_filter.hpp), shapes them with a WanShaper (rate, drop-tail queue,
// one-way latency), drops a random fraction `loss` of the admitted ones, caps the window
// TCP segments advertise at `tcp_window` (window_clamp.hpp), and writes each frame to the far
// port when its delivery time comes. One thread serves both directions: it sleeps in
// ppoll until a port is readable or the next frame is due (nanosecond timeout, 1 ns timer
// slack) and updates the shared counters as frames pass.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "emu/delay_line/counters.hpp"
#include "emu/delay_line/window_clamp.hpp"

namespace multilane::emu {

struct DelayLineSpec {
  int sites[2] = {0, 1};  // port 0 is on sites[0]'s bridge, port 1 on sites[1]'s
  double bps = 0;         // each direction, bytes per second (0: unlimited)
  double latency_s = 0;   // one way
  std::uint64_t queue_bytes = 0;
  double loss = 0;
  std::uint64_t seed = 1;
  int mtu = 9000;
  std::uint32_t tcp_window = 0;  // cap on every TCP connection's window (0: none)
};

class DelayLine {
 public:
  using Log = std::function<void(const std::string&)>;
  // Takes the two non-blocking port descriptors (it does not close them). `log`, when given,
  // hears about the first few frames it does not carry (for diagnosis).
  DelayLine(const DelayLineSpec& spec, int port0, int port1, CounterBlock& counters,
            Log log = nullptr);
  ~DelayLine();
  DelayLine(const DelayLine&) = delete;
  DelayLine& operator=(const DelayLine&) = delete;

  // Forwards until `stop` becomes true; it is checked at least every 50 ms and whenever a
  // signal interrupts the wait. Signals blocked in the caller's mask are unblocked while it
  // waits, so a handler that sets `stop` wakes it at once.
  void run(const std::atomic<bool>& stop);

 private:
  struct Direction;
  void receive(Direction& d);
  void deliver_due(Direction& d, std::int64_t now_ns);

  void note_filtered(const Direction& d, const std::uint8_t* frame, std::size_t len);

  DelayLineSpec spec_;
  Log log_;
  WindowClamp clamp_;  // shared by both directions: it follows each handshake across them
  std::unique_ptr<Direction> directions_[2];
};

// The `multilane emu delay-line` daemon: loads the plan of emulation `name`, attaches the TAP
// ports of its WAN link `wan`, maps its counters, writes its pid file, reports "ready PID" on
// `ready_fd` (or "error: ..." when it cannot start) and forwards until SIGTERM or SIGINT.
// Returns the process exit status.
int run_delay_line_daemon(const std::string& name, int wan, int ready_fd);

}  // namespace multilane::emu
