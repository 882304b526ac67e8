// bench/tcp_floor.cpp — the floors under multilane's loopback figures on this host: two
// processes move frames (a 64-byte frame header and a payload, as the engine sends them) over
// loopback TCP in the simplest programs that can, once for each way of waiting the engine could
// use, and print the time of each (docs/performance.md, "Small messages and ping-pong").
//
//   tcp_floor [--size BYTES] [--pattern round-trip|one-way] [--messages N] [--runs R]
//
// Patterns:
//   round-trip  one process sends a frame, the other sends it back (the ping-pong)
//   one-way     one process sends N frames back to back, the other reads them all (a 2-rank
//               bcast, scatter or gather loop); the time is per frame
// Ways of waiting:
//   raw-poll      recv(MSG_DONTWAIT) in a loop, yielding after each empty one; one connection.
//                 The socket is in asio's epoll set, as the engine's sockets are, so each
//                 arrival also runs the epoll set's wake-up callback (in the sender's call)
//   raw-quiet     raw-poll with the receiving socket's low-water mark raised to 64 KiB: the
//                 kernel skips that callback for small arrivals (the engine's sockets that a
//                 spinning caller reads, frame_reader.hpp)
//   raw-block     poll() until readable, then recv(): the process sleeps while it waits
//   raw-quick-ack raw-poll, and TCP_QUICKACK set before each frame is read: the kernel
//                 acknowledges at once although the connection carries a ping-pong (the engine
//                 does so for payloads of 512 KiB and more, frame_reader.hpp)
//   asio-shared   asio: async_read_some, the waiting side runs poll_one() and yields (the
//                 engine's blocking wait); one connection carries both directions
//   asio-one-way  the same over two connections, each carrying one direction: every message's
//                 acknowledgement then travels as a packet of its own
//
// Each line: the median over the runs, and the fastest and slowest run. The runs of the ways
// are interleaved, so a change in the machine's load hits all of them.
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <asio.hpp>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

using asio::ip::tcp;
using Clock = std::chrono::steady_clock;
constexpr std::size_t kFrameHeader = 64;
constexpr std::size_t kLargestRead = 1024 * 1024;
constexpr auto kPatience = std::chrono::seconds(10);  // for each frame
constexpr int kQuietLowWater = 64 * 1024;             // FrameReader::kQuietLowWater

enum class Way { RawPoll, RawQuiet, RawBlock, RawQuickAck, AsioShared, AsioOneWay };
enum class Pattern { RoundTrip, OneWay };

struct Shape {
  std::size_t frame;  // header and payload
  Pattern pattern;
  int messages;  // round trips, or frames sent one way
};

void give_up_after(Clock::time_point deadline) {
  if (Clock::now() >= deadline) {
    throw std::runtime_error("no progress with the other process within 10 s");
  }
}

// One process's end: writes whole frames on `out`, counts whole frames arriving on `in`.
class Mover {
 public:
  Mover(Way way, std::size_t frame, tcp::socket& out, tcp::socket& in, asio::io_context& io)
      : way_(way),
        out_(out),
        in_(in),
        io_(io),
        frame_(frame),
        stage_(std::clamp(frame, std::size_t{4096}, kLargestRead)) {}

  void start() {
    if (is_asio()) arm();
    if (way_ == Way::RawQuiet) {
      ::setsockopt(in_.native_handle(), SOL_SOCKET, SO_RCVLOWAT, &kQuietLowWater,
                   sizeof kQuietLowWater);
    }
  }

  void send() {
    const auto deadline = Clock::now() + kPatience;
    if (is_asio()) return send_asio(deadline);
    std::size_t sent = 0;
    while (sent < frame_.size()) {
      const ssize_t put =
          ::send(out_.native_handle(), frame_.data() + sent, frame_.size() - sent, MSG_NOSIGNAL);
      if (put > 0) {
        sent += static_cast<std::size_t>(put);
        continue;
      }
      if (put < 0 && errno != EAGAIN) throw std::runtime_error("sending failed");
      wait_until(POLLOUT, out_, deadline);
    }
  }

  // Returns once `frames` more whole frames arrived.
  void receive(int frames) {
    const auto deadline = Clock::now() + kPatience;
    if (way_ == Way::RawQuickAck) {
      const int on = 1;
      ::setsockopt(in_.native_handle(), IPPROTO_TCP, TCP_QUICKACK, &on, sizeof on);
    }
    while (arrived_ < frames) {
      if (!failure_.empty()) throw std::runtime_error(failure_);
      if (is_asio()) {
        if (io_.poll_one() > 0) continue;
        give_up_after(deadline);
        std::this_thread::yield();
        continue;
      }
      const ssize_t got = ::recv(in_.native_handle(), stage_.data(), stage_.size(), MSG_DONTWAIT);
      if (got > 0) {
        take(static_cast<std::size_t>(got));
      } else if (got == 0) {
        throw std::runtime_error("the other process closed the connection");
      } else {
        wait_until(POLLIN, in_, deadline);
      }
    }
    arrived_ -= frames;
  }

 private:
  bool is_asio() const { return way_ == Way::AsioShared || way_ == Way::AsioOneWay; }

  // An empty or full socket: raw-poll yields and tries again, raw-block sleeps in poll().
  void wait_until(short event, tcp::socket& socket, Clock::time_point deadline) const {
    give_up_after(deadline);
    if (way_ != Way::RawBlock) return std::this_thread::yield();
    pollfd ready{.fd = socket.native_handle(), .events = event, .revents = 0};
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    ::poll(&ready, 1, static_cast<int>(std::max<long>(left.count(), 1)));
  }

  void send_asio(Clock::time_point deadline) {
    bool done = false;
    asio::async_write(out_, asio::buffer(frame_),
                      [this, &done](const asio::error_code& error, std::size_t) {
                        if (error) failure_ = "sending failed: " + error.message();
                        done = true;
                      });
    while (!done) {
      if (io_.poll_one() > 0) continue;
      give_up_after(deadline);
      std::this_thread::yield();
    }
    if (!failure_.empty()) throw std::runtime_error(failure_);
  }

  void arm() {
    in_.async_read_some(asio::buffer(stage_),
                        [this](const asio::error_code& error, std::size_t got) {
                          if (error) {
                            failure_ = "reading from the other process failed: " + error.message();
                            return;
                          }
                          take(got);
                          arm();
                        });
  }

  // Counts bytes into whole frames.
  void take(std::size_t got) {
    pending_ += got;
    arrived_ += static_cast<int>(pending_ / frame_.size());
    pending_ %= frame_.size();
  }

  Way way_;
  tcp::socket& out_;
  tcp::socket& in_;
  asio::io_context& io_;
  std::vector<char> frame_;
  std::vector<char> stage_;
  std::size_t pending_ = 0;
  int arrived_ = 0;
  std::string failure_;
};

void tune(tcp::socket& socket) {
  socket.set_option(tcp::no_delay(true));
  socket.non_blocking(true);
}

// The parent's side of a pattern: sends and waits for what completes it.
void lead(Mover& mover, const Shape& shape) {
  if (shape.pattern == Pattern::OneWay) {
    for (int i = 0; i < shape.messages; ++i) mover.send();
    return mover.receive(1);  // the other side has read them all
  }
  for (int i = 0; i < shape.messages; ++i) {
    mover.send();
    mover.receive(1);
  }
}

void follow(Mover& mover, const Shape& shape) {
  if (shape.pattern == Pattern::OneWay) {
    mover.receive(shape.messages);
    return mover.send();
  }
  for (int i = 0; i < shape.messages; ++i) {
    mover.receive(1);
    mover.send();
  }
}

// Microseconds per round trip or per frame, measured by the parent; the child follows.
double run(Way way, const Shape& shape) {
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
  // One way: the parent writes `a` and reads `b`, the child the other way round; otherwise both
  // directions on `a`.
  const bool shared = way != Way::AsioOneWay;
  tcp::socket& out = shared || parent ? a : b;
  tcp::socket& in = shared ? a : (parent ? b : a);
  Mover mover(way, shape.frame, out, in, io);
  mover.start();
  const auto started = Clock::now();
  try {
    parent ? lead(mover, shape) : follow(mover, shape);
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
  return elapsed / shape.messages;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"The time of a frame over loopback TCP in the simplest programs, by way of waiting"};
  std::size_t size = 8;
  std::string pattern = "round-trip";
  int messages = 50'000;
  int runs = 5;
  app.add_option("--size", size, "payload bytes of each frame (after its 64-byte header)")
      ->transform(CLI::AsSizeValue(false))
      ->check(CLI::Range(std::size_t{0}, std::size_t{64} << 20));
  app.add_option("--pattern", pattern, "round-trip (a ping-pong) or one-way (a stream of frames)")
      ->check(CLI::IsMember({"round-trip", "one-way"}));
  app.add_option("--messages,--round-trips", messages, "round trips or frames per run")
      ->check(CLI::Range(1, 10'000'000));
  app.add_option("--runs", runs, "runs per way; the median is printed")->check(CLI::Range(1, 100));
  CLI11_PARSE(app, argc, argv);
  const Shape shape{.frame = kFrameHeader + size,
                    .pattern = pattern == "one-way" ? Pattern::OneWay : Pattern::RoundTrip,
                    .messages = messages};
  const std::vector<std::pair<Way, std::string>> ways{
      {Way::RawPoll, "raw-poll"},       {Way::RawQuiet, "raw-quiet"},
      {Way::RawBlock, "raw-block"},     {Way::RawQuickAck, "raw-quick-ack"},
      {Way::AsioShared, "asio-shared"}, {Way::AsioOneWay, "asio-one-way"}};
  std::vector<std::vector<double>> times(ways.size());
  try {
    for (int r = 0; r < runs; ++r) {
      for (std::size_t w = 0; w < ways.size(); ++w) times[w].push_back(run(ways[w].first, shape));
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tcp_floor: %s\n", e.what());
    return 1;
  }
  const char* what = shape.pattern == Pattern::OneWay ? "per frame" : "round trip";
  std::printf("%zu-byte payloads, %s\n\n", size, pattern.c_str());
  std::printf("| way | %s (median) | fastest | slowest |\n|---|---:|---:|---:|\n", what);
  for (std::size_t w = 0; w < ways.size(); ++w) {
    auto& t = times[w];
    std::sort(t.begin(), t.end());
    std::printf("| %s | %.2f us | %.2f us | %.2f us |\n", ways[w].second.c_str(), t[t.size() / 2],
                t.front(), t.back());
  }
  return 0;
}
