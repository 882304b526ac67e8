#include "emu/delay_line/delay_line.hpp"

#include <errno.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "emu/delay_line/frame_filter.hpp"
#include "emu/delay_line/frame_ring.hpp"
#include "emu/delay_line/wan_shaper.hpp"
#include "multilane/emu.hpp"

namespace multilane::emu {

namespace {

constexpr int kBatch = 64;                         // frames read per port per wake-up
constexpr std::int64_t kMaxWaitNs = 50'000'000;    // stop is checked at least this often
constexpr double kUnlimitedBpsForMemory = 1.25e9;  // sizing the ring of an unlimited line
constexpr std::size_t kMaxRingBytes = std::size_t{1} << 30;

std::size_t max_frame(int mtu) {
  return static_cast<std::size_t>(mtu) + 64;
}

// Room for every frame that can be on the line at once: the queue plus what travels during
// one latency, doubled for record headers of small frames, plus a margin of full frames.
std::size_t ring_bytes(const DelayLineSpec& spec) {
  const double rate = spec.bps > 0 ? spec.bps : kUnlimitedBpsForMemory;
  const double in_flight = rate * spec.latency_s + static_cast<double>(spec.queue_bytes);
  const double bytes = 2 * in_flight + 256.0 * static_cast<double>(max_frame(spec.mtu) + 16);
  return static_cast<std::size_t>(std::min(bytes, static_cast<double>(kMaxRingBytes)));
}

}  // namespace

struct DelayLine::Direction {
  Direction(const DelayLineSpec& spec, int index, int in, int out, DirectionCounters& c)
      : in_fd(in),
        out_fd(out),
        from_site(spec.sites[index]),
        to_site(spec.sites[1 - index]),
        shaper(spec.bps, std::llround(spec.latency_s * 1e9), spec.queue_bytes),
        ring(ring_bytes(spec)),
        spare(max_frame(spec.mtu)),
        random(spec.seed * 2 + static_cast<std::uint64_t>(index)),
        lost(spec.loss),
        counters(c) {
    counters.bps.store(static_cast<std::uint64_t>(spec.bps), std::memory_order_relaxed);
  }
  int in_fd, out_fd, from_site, to_site;
  WanShaper shaper;
  FrameRing ring;
  std::vector<std::uint8_t> spare;  // where a frame goes that there is no room for
  std::mt19937_64 random;
  std::bernoulli_distribution lost;
  DirectionCounters& counters;
};

DelayLine::DelayLine(const DelayLineSpec& spec, int port0, int port1, CounterBlock& counters,
                     Log log)
    : spec_(spec), log_(std::move(log)), clamp_(spec.tcp_window) {
  directions_[0] = std::make_unique<Direction>(spec, 0, port0, port1, counters.directions[0]);
  directions_[1] = std::make_unique<Direction>(spec, 1, port1, port0, counters.directions[1]);
}

DelayLine::~DelayLine() = default;

void DelayLine::receive(Direction& d) {
  DirectionCounters& c = d.counters;
  const std::size_t room = max_frame(spec_.mtu);
  for (int i = 0; i < kBatch; ++i) {
    std::uint8_t* slot = d.ring.reserve(room);
    std::uint8_t* into = slot ? slot : d.spare.data();
    const ssize_t n = read(d.in_fd, into, room);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) break;  // drained
    if (n <= 0) {
      throw EmuError(fmt::format("the port on site {}'s bridge failed: {}", d.from_site,
                                 n == 0 ? "closed" : std::strerror(errno)));
    }
    const auto len = static_cast<std::size_t>(n);
    const std::int64_t now = monotonic_ns();
    c.frames_in.fetch_add(1, std::memory_order_relaxed);
    c.bytes_in.fetch_add(len, std::memory_order_relaxed);
    if (!frame_for_site(into, len, d.to_site)) {
      note_filtered(d, into, len);
      c.filtered.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    if (!slot) {
      c.drops_memory.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    const std::uint64_t backlog = d.shaper.backlog_bytes(now);
    const auto due = d.shaper.admit(len, now);
    if (!due) {
      c.drops_queue.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    c.busy_until_ns.store(d.shaper.busy_until_ns(), std::memory_order_relaxed);
    if (backlog + len > c.max_queue_bytes.load(std::memory_order_relaxed)) {
      c.max_queue_bytes.store(backlog + len, std::memory_order_relaxed);
    }
    if (spec_.loss > 0 && d.lost(d.random)) {
      c.drops_loss.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    if (clamp_.apply(slot, len)) c.windows_clamped.fetch_add(1, std::memory_order_relaxed);
    d.ring.commit(len, *due);
    c.in_flight_frames.fetch_add(1, std::memory_order_relaxed);
  }
}

void DelayLine::note_filtered(const Direction& d, const std::uint8_t* frame, std::size_t len) {
  constexpr std::uint64_t kLogged = 5;
  if (!log_ || d.counters.filtered.load(std::memory_order_relaxed) >= kLogged) return;
  std::string head;
  for (std::size_t i = 0; i < std::min<std::size_t>(len, 42); ++i) {
    head += fmt::format("{:02x}{}", frame[i], i == 5 || i == 11 || i == 13 ? " " : "");
  }
  log_(fmt::format("not carried to site {} ({} bytes): {}", d.to_site, len, head));
}

void DelayLine::deliver_due(Direction& d, std::int64_t now_ns) {
  DirectionCounters& c = d.counters;
  while (!d.ring.empty() && d.ring.front_due_ns() <= now_ns) {
    const auto frame = d.ring.front();
    ssize_t n;
    do {
      n = write(d.out_fd, frame.data(), frame.size());
    } while (n < 0 && errno == EINTR);
    if (n == static_cast<ssize_t>(frame.size())) {
      c.frames_out.fetch_add(1, std::memory_order_relaxed);
      c.bytes_out.fetch_add(frame.size(), std::memory_order_relaxed);
    } else {
      c.write_errors.fetch_add(1, std::memory_order_relaxed);
    }
    d.ring.pop();
    // Release: whoever sees the frame leave the flight count also sees it counted out.
    c.in_flight_frames.fetch_sub(1, std::memory_order_release);
  }
}

void DelayLine::run(const std::atomic<bool>& stop) {
  prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);  // wake up within a microsecond of a frame's time
  sigset_t wait_mask;
  pthread_sigmask(SIG_SETMASK, nullptr, &wait_mask);
  sigdelset(&wait_mask, SIGTERM);
  sigdelset(&wait_mask, SIGINT);
  Direction& a = *directions_[0];
  Direction& b = *directions_[1];
  while (!stop.load()) {
    std::int64_t now = monotonic_ns();
    deliver_due(a, now);
    deliver_due(b, now);
    std::int64_t wait = kMaxWaitNs;
    for (Direction* d : {&a, &b}) {
      if (!d->ring.empty()) wait = std::min(wait, d->ring.front_due_ns() - now);
    }
    wait = std::max<std::int64_t>(wait, 0);
    const timespec timeout{static_cast<time_t>(wait / 1'000'000'000),
                           static_cast<long>(wait % 1'000'000'000)};
    pollfd ports[2] = {{a.in_fd, POLLIN, 0}, {b.in_fd, POLLIN, 0}};
    const int ready = ppoll(ports, 2, &timeout, &wait_mask);
    if (ready <= 0) continue;  // timeout (frames due) or a signal
    for (int i = 0; i < 2; ++i) {
      if (ports[i].revents & (POLLIN | POLLERR | POLLHUP | POLLNVAL)) receive(*directions_[i]);
    }
  }
}

}  // namespace multilane::emu
