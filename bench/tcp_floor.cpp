// bench/tcp_floor.cpp — the floors under a small message's round trip on this host: two
// processes bounce a 72-byte frame (a frame header and 8 bytes, as the engine sends) over
// loopback TCP, each way of waiting the engine could use, and print the round trip of each
// (docs/performance.md, "Small messages and ping-pong").
//
//   tcp_floor [--round-trips N] [--runs R]
//
//   raw-poll      recv(MSG_DONTWAIT) in a loop, yielding after each empty one; one connection
//   asio-shared   asio: async_read_some, the waiting side runs poll_one() and yields (the
//                 engine's blocking wait); one connection carries both directions
//   asio-one-way  the same over two connections, each carrying one direction: every message's
//                 acknowledgement then travels as a packet of its own
//
// Each line: the median round trip over the runs, and the fastest and slowest run.
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <asio.hpp>
#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

using asio::ip::tcp;
using Clock = std::chrono::steady_clock;
constexpr std::size_t kFrame = 72;
constexpr auto kPatience = std::chrono::seconds(10);  // for each frame

enum class Way { RawPoll, AsioShared, AsioOneWay };

// One side's two connections: it writes on `out` and reads `in` (the same one when shared).
struct Ends {
  tcp::socket out;
  tcp::socket in;
};

class Bouncer {
 public:
  Bouncer(Way way, tcp::socket& out, tcp::socket& in, asio::io_context& io)
      : way_(way), out_(out), in_(in), io_(io) {}

  void start() {
    if (way_ != Way::RawPoll) arm();
  }

  void send() {
    if (way_ == Way::RawPoll) {
      ::send(out_.native_handle(), frame_.data(), frame_.size(), MSG_NOSIGNAL);
      return;
    }
    bool done = false;
    out_.async_write_some(asio::buffer(frame_), [&done](auto, std::size_t) { done = true; });
    while (!done) io_.poll_one();
  }

  void receive() {
    const auto deadline = Clock::now() + kPatience;
    if (way_ == Way::RawPoll) return receive_polling(deadline);
    while (!arrived_) {
      if (!failure_.empty()) throw std::runtime_error(failure_);
      if (io_.poll_one() > 0) continue;
      give_up_after(deadline);
      std::this_thread::yield();
    }
    arrived_ = false;
  }

 private:
  void receive_polling(Clock::time_point deadline) {
    for (;;) {
      const ssize_t got = ::recv(in_.native_handle(), stage_.data(), stage_.size(), MSG_DONTWAIT);
      if (got > 0 && take(static_cast<std::size_t>(got))) return;
      if (got == 0) throw std::runtime_error("the other process closed the connection");
      if (got < 0) {
        give_up_after(deadline);
        std::this_thread::yield();
      }
    }
  }

  static void give_up_after(Clock::time_point deadline) {
    if (Clock::now() >= deadline) {
      throw std::runtime_error("no frame from the other process within 10 s");
    }
  }

  void arm() {
    in_.async_read_some(asio::buffer(stage_),
                        [this](const asio::error_code& error, std::size_t got) {
                          if (error) {
                            failure_ = "reading from the other process failed: " + error.message();
                            return;
                          }
                          if (take(got)) arrived_ = true;
                          arm();
                        });
  }

  // Counts bytes into whole frames; true when one completed.
  bool take(std::size_t got) {
    pending_ += got;
    if (pending_ < kFrame) return false;
    pending_ -= kFrame;
    return true;
  }

  Way way_;
  tcp::socket& out_;
  tcp::socket& in_;
  asio::io_context& io_;
  std::array<char, kFrame> frame_{};
  std::array<char, 4096> stage_{};
  std::size_t pending_ = 0;
  bool arrived_ = false;
  std::string failure_;
};

void tune(tcp::socket& socket) {
  socket.set_option(tcp::no_delay(true));
  socket.non_blocking(true);
}

// The round trip in microseconds, measured by the parent; the child bounces.
double run(Way way, int round_trips) {
  asio::io_context io;
  const auto loopback = asio::ip::make_address("127.0.0.1");
  tcp::acceptor first(io, tcp::endpoint(loopback, 0));
  tcp::acceptor second(io, tcp::endpoint(loopback, 0));
  const pid_t child = ::fork();
  if (child < 0) throw std::runtime_error("fork failed");
  const bool parent = child != 0;
  io.notify_fork(parent ? asio::io_context::fork_parent : asio::io_context::fork_child);
  tcp::socket a(io), b(io);
  if (parent) {
    first.accept(a);
    b.connect(second.local_endpoint());
  } else {
    a.connect(first.local_endpoint());
    second.accept(b);
  }
  tune(a);
  tune(b);
  // Shared: both directions on `a`. One way: the parent writes `a` and reads `b`, the child
  // the other way round.
  const bool shared = way != Way::AsioOneWay;
  tcp::socket& out = shared || parent ? a : b;
  tcp::socket& in = shared ? a : (parent ? b : a);
  Bouncer bouncer(way, out, in, io);
  bouncer.start();
  const auto started = Clock::now();
  try {
    for (int i = 0; i < round_trips; ++i) {
      if (parent) {
        bouncer.send();
        bouncer.receive();
      } else {
        bouncer.receive();
        bouncer.send();
      }
    }
  } catch (const std::exception&) {
    if (!parent) std::_Exit(1);  // the parent reports it: the connection closes
    a.close();
    b.close();
    ::waitpid(child, nullptr, 0);
    throw;
  }
  const double elapsed = std::chrono::duration<double, std::micro>(Clock::now() - started).count();
  if (!parent) std::_Exit(0);
  ::waitpid(child, nullptr, 0);
  return elapsed / round_trips;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Round trip of a 72-byte frame over loopback TCP, by way of waiting"};
  int round_trips = 50'000;
  int runs = 5;
  app.add_option("--round-trips", round_trips, "round trips per run")
      ->check(CLI::Range(1, 10'000'000));
  app.add_option("--runs", runs, "runs per way; the median is printed")->check(CLI::Range(1, 100));
  CLI11_PARSE(app, argc, argv);
  const std::vector<std::pair<Way, std::string>> ways{{Way::RawPoll, "raw-poll"},
                                                      {Way::AsioShared, "asio-shared"},
                                                      {Way::AsioOneWay, "asio-one-way"}};
  std::vector<std::vector<double>> times(ways.size());
  try {
    for (int r = 0; r < runs; ++r) {  // interleaved, so a change in the machine's load hits all
      for (std::size_t w = 0; w < ways.size(); ++w)
        times[w].push_back(run(ways[w].first, round_trips));
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tcp_floor: %s\n", e.what());
    return 1;
  }
  std::printf("| way | round trip (median) | fastest | slowest |\n|---|---:|---:|---:|\n");
  for (std::size_t w = 0; w < ways.size(); ++w) {
    auto& t = times[w];
    std::sort(t.begin(), t.end());
    std::printf("| %s | %.2f us | %.2f us | %.2f us |\n", ways[w].second.c_str(), t[t.size() / 2],
                t.front(), t.back());
  }
  return 0;
}
