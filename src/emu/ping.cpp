// emu_ping(): round-trip times between two emulated nodes over UDP (no ping binary needed).
//
// Both sockets are made in their node's namespace by this process (a socket stays in the
// namespace it was created in); an echo thread answers on the far one. Both threads run at a
// real-time priority while probing (when allowed), so that on a busy machine the figure is
// the network's round trip and not the scheduler's wake-up delay (a tick, 4 ms, under load).
#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "emu/netns.hpp"
#include "emu/state.hpp"
#include "multilane/emu.hpp"
#include "multilane/errors.hpp"

namespace multilane {

namespace {

using Clock = std::chrono::steady_clock;

// Raises the calling thread to SCHED_FIFO for its lifetime (silently stays put if refused).
class RealtimeScope {
 public:
  RealtimeScope() {
    policy_ = sched_getscheduler(0);
    sched_getparam(0, &saved_);
    sched_param fifo{};
    fifo.sched_priority = 40;
    raised_ = sched_setscheduler(0, SCHED_FIFO, &fifo) == 0;
  }
  ~RealtimeScope() {
    if (raised_) sched_setscheduler(0, policy_, &saved_);
  }
  RealtimeScope(const RealtimeScope&) = delete;
  RealtimeScope& operator=(const RealtimeScope&) = delete;

 private:
  int policy_ = SCHED_OTHER;
  sched_param saved_{};
  bool raised_ = false;
};

class Socket {
 public:
  explicit Socket(int fd) : fd_(fd) {}
  ~Socket() {
    if (fd_ >= 0) close(fd_);
  }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  int fd() const { return fd_; }

 private:
  int fd_;
};

sockaddr_in address_of(const std::string& ip, std::uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  inet_pton(AF_INET, ip.c_str(), &a.sin_addr);
  return a;
}

// A UDP socket bound to `ip` inside `netns` (port 0: any).
int bound_socket(const std::string& netns, const std::string& ip) {
  emu::NetnsScope inside(netns);
  const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw EmuError(fmt::format("socket in {}: {}", netns, std::strerror(errno)));
  const sockaddr_in a = address_of(ip, 0);
  if (bind(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0) {
    const int e = errno;
    close(fd);
    throw EmuError(fmt::format("bind {} in {}: {}", ip, netns, std::strerror(e)));
  }
  return fd;
}

std::uint16_t port_of(int fd) {
  sockaddr_in a{};
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  return ntohs(a.sin_port);
}

void echo(int fd, const std::atomic<bool>& stop) {
  RealtimeScope realtime;
  std::vector<char> buffer(65536);
  while (!stop.load()) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 20) <= 0) continue;
    sockaddr_in peer{};
    socklen_t len = sizeof peer;
    const ssize_t n =
        recvfrom(fd, buffer.data(), buffer.size(), 0, reinterpret_cast<sockaddr*>(&peer), &len);
    if (n > 0) {
      sendto(fd, buffer.data(), static_cast<std::size_t>(n), 0,
             reinterpret_cast<const sockaddr*>(&peer), len);
    }
  }
}

// Sends probe `seq` and waits for its echo; returns the round trip or a negative value.
double probe(int fd, std::vector<char>& message, std::uint32_t seq, int timeout_ms) {
  std::memcpy(message.data(), &seq, sizeof seq);
  const auto start = Clock::now();
  if (send(fd, message.data(), message.size(), 0) < 0) return -1;
  std::vector<char> reply(message.size() + 1);
  while (true) {
    const auto waited =
        std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
    if (waited >= timeout_ms) return -1;
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(timeout_ms - waited)) <= 0) continue;
    const ssize_t n = recv(fd, reply.data(), reply.size(), 0);
    std::uint32_t got = 0;
    if (n >= static_cast<ssize_t>(sizeof got)) std::memcpy(&got, reply.data(), sizeof got);
    if (n == static_cast<ssize_t>(message.size()) && got == seq) {
      return std::chrono::duration<double>(Clock::now() - start).count();
    }
  }
}

}  // namespace

std::vector<double> emu_ping(std::string_view name, int from, int to, int lane, int count,
                             std::size_t size, std::chrono::milliseconds timeout) {
  const int timeout_ms = static_cast<int>(timeout.count());
  if (size < 16 || size > 65000) {
    throw UsageError(fmt::format("probe size must be between 16 and 65000 bytes, got {}", size));
  }
  const auto nodes = emu_nodes(name);
  for (int node : {from, to}) {
    if (node < 0 || node >= static_cast<int>(nodes.size())) {
      throw UsageError(fmt::format("node {} is out of range: emulation \"{}\" has nodes 0 to {}",
                                   node, name, nodes.size() - 1));
    }
    if (lane < 0 || lane >= static_cast<int>(nodes[node].lane_addresses.size())) {
      throw UsageError(fmt::format("node {} has no lane {}", nodes[node].name, lane));
    }
  }
  const std::string& target = nodes[to].lane_addresses[lane];
  Socket server(bound_socket(nodes[to].netns, target));
  Socket client(bound_socket(nodes[from].netns, nodes[from].lane_addresses[lane]));
  const sockaddr_in destination = address_of(target, port_of(server.fd()));
  connect(client.fd(), reinterpret_cast<const sockaddr*>(&destination), sizeof destination);
  std::atomic<bool> stop{false};
  std::thread echoer(echo, server.fd(), std::cref(stop));
  std::vector<char> message(size, 'm');
  std::vector<double> rtts;
  RealtimeScope realtime;
  probe(client.fd(), message, 0, timeout_ms);  // resolves the neighbour; not recorded
  for (int i = 1; i <= count; ++i) {
    const double rtt = probe(client.fd(), message, static_cast<std::uint32_t>(i), timeout_ms);
    if (rtt >= 0) rtts.push_back(rtt);
  }
  stop.store(true);
  echoer.join();
  return rtts;
}

}  // namespace multilane
