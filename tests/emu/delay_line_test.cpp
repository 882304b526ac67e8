// tests/emu/delay_line_test.cpp — the delay line's forwarding loop, run on pairs of
// SOCK_SEQPACKET sockets standing in for the TAP ports (no root needed): latency, rate,
// drop-tail queue, filtering, random loss, both directions, and a port going away.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <exception>
#include <optional>
#include <thread>

#include "emu/delay_line/delay_line.hpp"
#include "frames.hpp"
#include "multilane/emu.hpp"

namespace multilane::emu {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using testing::arp_request;
using testing::frame_to;
using testing::tag_of;

// A delay line between site 0 (side 0) and site 1 (side 1) running in a thread; the test
// plays both bridges through the outer ends of two socket pairs.
class Line {
 public:
  explicit Line(DelayLineSpec spec) {
    for (int side = 0; side < 2; ++side) {
      int fds[2];
      EXPECT_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds), 0);
      outer_[side] = fds[0];
      port_[side] = fds[1];
      fcntl(port_[side], F_SETFL, O_NONBLOCK);
      // Room for a whole test's frames, so that a test thread slowed down by a loaded machine
      // does not make the line's writes fail (as root beyond wmem_max).
      const int bytes = 4 << 20;
      for (int fd : {fds[0], fds[1]}) {
        if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &bytes, sizeof bytes) != 0) {
          setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bytes, sizeof bytes);
        }
      }
    }
    line_ = std::make_unique<DelayLine>(spec, port_[0], port_[1], counters_);
    thread_ = std::thread([this] {
      try {
        line_->run(stop_);
      } catch (...) {
        error_ = std::current_exception();
      }
    });
  }
  ~Line() {
    stop_and_join();
    for (int fd : {outer_[0], outer_[1], port_[0], port_[1]}) {
      if (fd >= 0) close(fd);
    }
  }

  void send(int side, const std::vector<std::uint8_t>& frame) {
    ASSERT_EQ(write(outer_[side], frame.data(), frame.size()), static_cast<ssize_t>(frame.size()));
  }
  // The next frame arriving at `side`, or nullopt after `timeout`.
  std::optional<std::vector<std::uint8_t>> receive(int side,
                                                   std::chrono::milliseconds timeout = 2s) {
    pollfd p{outer_[side], POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(timeout.count())) <= 0) return std::nullopt;
    std::vector<std::uint8_t> frame(70000);
    const ssize_t n = read(outer_[side], frame.data(), frame.size());
    if (n <= 0) return std::nullopt;
    frame.resize(static_cast<std::size_t>(n));
    return frame;
  }
  // Waits (bounded) until every admitted frame has been delivered and counted: a reader can
  // see a frame before the line has counted it, so counters are read only after this.
  void drain(int direction) {
    const auto deadline = Clock::now() + 5s;
    while (counters_.directions[direction].in_flight_frames.load() > 0 && Clock::now() < deadline) {
      std::this_thread::sleep_for(1ms);
    }
  }
  void close_outer(int side) {
    close(outer_[side]);
    outer_[side] = -1;
  }
  void stop_and_join() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  const DirectionCounters& counters(int direction) const { return counters_.directions[direction]; }
  std::exception_ptr error() const { return error_; }

 private:
  int outer_[2] = {-1, -1};
  int port_[2] = {-1, -1};
  CounterBlock counters_;
  std::unique_ptr<DelayLine> line_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::exception_ptr error_;
};

DelayLineSpec spec(double bps, double latency_s, std::uint64_t queue, double loss = 0) {
  DelayLineSpec s;
  s.sites[0] = 0;
  s.sites[1] = 1;
  s.bps = bps;
  s.latency_s = latency_s;
  s.queue_bytes = queue;
  s.loss = loss;
  s.mtu = 9000;
  return s;
}

double seconds(Clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

TEST(DelayLine, HoldsEveryFrameForTheLatencyInOrder) {
  constexpr double kLatency = 0.03;
  Line line(spec(0, kLatency, 1 << 20));
  std::vector<Clock::time_point> sent;
  for (std::uint32_t i = 0; i < 10; ++i) {
    sent.push_back(Clock::now());
    line.send(0, frame_to(1, 200, i));
    std::this_thread::sleep_for(2ms);
  }
  for (std::uint32_t i = 0; i < 10; ++i) {
    const auto frame = line.receive(1);
    const auto arrived = Clock::now();
    ASSERT_TRUE(frame) << "frame " << i << " never arrived";
    EXPECT_EQ(tag_of(*frame), i);
    EXPECT_EQ(frame->size(), 200u);
    EXPECT_GE(seconds(arrived - sent[i]), kLatency) << "frame " << i << " left early";
  }
  line.drain(0);
  EXPECT_EQ(line.counters(0).frames_out.load(), 10u);
  EXPECT_EQ(line.counters(0).bytes_out.load(), 2000u);
}

// Sends 200 frames of 5000 B through a 5 MB/s line: the time from the first frame's arrival to
// the last one's, over what the rate allows.
double time_over_line_rate() {
  constexpr double kRate = 5e6;  // bytes per second
  constexpr int kFrames = 200;
  constexpr std::size_t kSize = 5000;
  Line line(spec(kRate, 0, 2 << 20));
  std::thread sender([&] {
    for (int i = 0; i < kFrames; ++i)
      line.send(0, frame_to(1, kSize, static_cast<std::uint32_t>(i)));
  });
  std::optional<Clock::time_point> first;
  int received = 0;
  while (received < kFrames) {
    const auto frame = line.receive(1);
    if (!frame) break;
    if (!first) first = Clock::now();
    EXPECT_EQ(tag_of(*frame), static_cast<std::uint32_t>(received));
    ++received;
  }
  const double elapsed = seconds(Clock::now() - *first);
  sender.join();
  EXPECT_EQ(received, kFrames);
  EXPECT_EQ(line.counters(0).drops_queue.load(), 0u);
  return elapsed / ((kFrames - 1) * kSize / kRate);  // after the first frame is out
}

// The shaper holds frames back: never faster than the rate, however idle the machine.
TEST(DelayLine, DeliversNoFasterThanTheLineRate) {
  EXPECT_GE(time_over_line_rate(), 0.95) << "faster than the line rate";
}

// ... and, on a machine with the CPU to spare, not much slower (`perf` label).
TEST(DelayLineSpeed, DeliversAtTheLineRate) {
  EXPECT_LE(time_over_line_rate(), 2.0) << "far slower than the line rate";
}

TEST(DelayLine, DropsAtTheTailWhenTheQueueIsFull) {
  // 1 MB/s and a 10-frame queue; 50 frames arrive at once: about 40 are dropped.
  Line line(spec(1e6, 0, 10 * 1000));
  for (std::uint32_t i = 0; i < 50; ++i) line.send(0, frame_to(1, 1000, i));
  int received = 0;
  std::uint32_t last_tag = 0;
  while (const auto frame = line.receive(1, 500ms)) {
    last_tag = tag_of(*frame);
    ++received;
  }
  line.drain(0);
  const auto& c = line.counters(0);
  EXPECT_EQ(c.frames_in.load(), 50u);
  EXPECT_EQ(c.frames_out.load() + c.drops_queue.load(), 50u);
  EXPECT_EQ(c.frames_out.load(), static_cast<std::uint64_t>(received));
  EXPECT_GE(c.drops_queue.load(), 25u);
  EXPECT_GE(received, 10);
  EXPECT_LT(last_tag, 49u) << "drop-tail keeps the first frames, not the last";
  EXPECT_LE(c.max_queue_bytes.load(), 10'000u);
}

TEST(DelayLine, CarriesOnlyFramesForTheFarSite) {
  Line line(spec(0, 0, 1 << 20));
  line.send(0, frame_to(2, 100, 1));  // for a third site
  auto multicast = frame_to(1, 100, 2);
  multicast[0] = 0x01;
  line.send(0, multicast);
  line.send(0, arp_request(lane_ipv4(1, 3, 0)));  // who has site 1's node 3?
  line.send(0, frame_to(1, 100, 7));
  const auto arp = line.receive(1);
  ASSERT_TRUE(arp);
  EXPECT_EQ(arp->size(), 42u);
  const auto unicast = line.receive(1);
  ASSERT_TRUE(unicast);
  EXPECT_EQ(tag_of(*unicast), 7u);
  EXPECT_FALSE(line.receive(1, 100ms));
  line.drain(0);
  EXPECT_EQ(line.counters(0).filtered.load(), 2u);
  EXPECT_EQ(line.counters(0).frames_out.load(), 2u);
}

TEST(DelayLine, LosesTheConfiguredFractionAtRandom) {
  Line line(spec(0, 0, 1 << 20, 0.2));
  constexpr int kFrames = 1000;
  std::thread sender([&] {
    for (std::uint32_t i = 0; i < kFrames; ++i) {
      line.send(0, frame_to(1, 100, i));
      if (i % 20 == 19) std::this_thread::sleep_for(1ms);  // leave the reader time to keep up
    }
  });
  int received = 0;
  while (line.receive(1, 300ms)) ++received;
  sender.join();
  line.drain(0);
  const auto lost = line.counters(0).drops_loss.load();
  const auto refused = line.counters(0).write_errors.load();  // a full socket buffer
  EXPECT_EQ(static_cast<std::uint64_t>(received) + lost + refused,
            static_cast<std::uint64_t>(kFrames));
  EXPECT_LE(refused, 50u);
  EXPECT_GE(lost, 130u);  // 200 expected; +-5 standard deviations
  EXPECT_LE(lost, 270u);
}

TEST(DelayLine, BothDirectionsAtOnce) {
  Line line(spec(10e6, 0.005, 1 << 20));
  for (std::uint32_t i = 0; i < 20; ++i) {
    line.send(0, frame_to(1, 1500, i, 0));
    line.send(1, frame_to(0, 700, 100 + i, 1));
  }
  for (std::uint32_t i = 0; i < 20; ++i) {
    const auto east = line.receive(1);
    const auto west = line.receive(0);
    ASSERT_TRUE(east && west);
    EXPECT_EQ(tag_of(*east), i);
    EXPECT_EQ(tag_of(*west), 100 + i);
    EXPECT_EQ(west->size(), 700u);
  }
  line.drain(1);
  EXPECT_EQ(line.counters(1).frames_out.load(), 20u);
}

TEST(DelayLine, APortGoingAwayEndsTheLineWithAnError) {
  Line line(spec(0, 0, 1 << 20));
  line.close_outer(0);
  const auto deadline = Clock::now() + 5s;
  while (!line.error() && Clock::now() < deadline) std::this_thread::sleep_for(5ms);
  line.stop_and_join();
  ASSERT_TRUE(line.error());
  try {
    std::rethrow_exception(line.error());
  } catch (const EmuError& e) {
    EXPECT_STREQ(e.what(), "the port on site 0's bridge failed: closed");
  }
}

}  // namespace
}  // namespace multilane::emu
