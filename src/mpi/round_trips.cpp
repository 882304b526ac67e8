// mpi/round_trips.cpp — timed concurrent TCP connects between leaders (round_trips.hpp).
#include "mpi/round_trips.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <limits>
#include <utility>

#include "multilane/errors.hpp"
#include "runtime/launch/job_env.hpp"

namespace multilane::mpi {

namespace {

constexpr int kRepetitions = 5;
using Clock = std::chrono::steady_clock;

// A connecting socket, closed when it goes out of scope.
class Socket {
 public:
  explicit Socket(int fd) : fd_(fd) {}
  Socket(Socket&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Socket& operator=(Socket&&) = delete;
  ~Socket() {
    if (fd_ >= 0) ::close(fd_);
  }
  int fd() const { return fd_; }

 private:
  int fd_;
};

// "address:port" (runtime::parse_host_port) as an IPv4 socket address.
sockaddr_in parse_endpoint(const std::string& text) {
  runtime::HostPort where;
  try {
    where = runtime::parse_host_port(text);
  } catch (const UsageError& e) {
    throw CommunicationError(ErrorKind::usage, fmt::format("measuring round trips: {}", e.what()));
  }
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(where.port);
  if (inet_pton(AF_INET, where.host.c_str(), &address.sin_addr) != 1) {
    throw CommunicationError(
        ErrorKind::usage,
        fmt::format("measuring round trips: \"{}\" is not an IPv4 address", where.host));
  }
  return address;
}

// Takes and drops the connections waiting on the listener, so that its queue never fills.
void drain(int listener) {
  while (true) {
    const int fd = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) return;
    ::close(fd);
  }
}

[[noreturn]] void cannot_connect(int node, const std::string& endpoint, int error) {
  throw CommunicationError(ErrorKind::peer_gone,
                           fmt::format("measuring round trips: cannot connect to node {} at {}: {}",
                                       node, endpoint, std::strerror(error)));
}

// One connect to every other leader at once; each one's time goes into `row` when faster.
void connect_all(int listener, const std::vector<std::string>& endpoints, int me,
                 std::vector<double>& row) {
  std::vector<Socket> sockets;
  std::vector<int> node_of;
  std::vector<Clock::time_point> started;
  for (int node = 0; node < static_cast<int>(endpoints.size()); ++node) {
    if (node == me) continue;
    const std::string& endpoint = endpoints[static_cast<std::size_t>(node)];
    const sockaddr_in address = parse_endpoint(endpoint);
    Socket socket(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (socket.fd() < 0) cannot_connect(node, endpoint, errno);
    started.push_back(Clock::now());
    if (::connect(socket.fd(), reinterpret_cast<const sockaddr*>(&address), sizeof(address)) != 0 &&
        errno != EINPROGRESS) {
      cannot_connect(node, endpoint, errno);
    }
    sockets.push_back(std::move(socket));
    node_of.push_back(node);
  }
  std::vector<bool> done(sockets.size(), false);
  std::size_t remaining = sockets.size();
  const auto deadline = Clock::now() + std::chrono::duration<double>(kRoundTripTimeout);
  while (remaining > 0) {
    std::vector<pollfd> waiting{{.fd = listener, .events = POLLIN, .revents = 0}};
    std::vector<std::size_t> index_of;
    for (std::size_t i = 0; i < sockets.size(); ++i) {
      if (done[i]) continue;
      waiting.push_back({.fd = sockets[i].fd(), .events = POLLOUT, .revents = 0});
      index_of.push_back(i);
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) {
      std::string silent;
      for (const std::size_t i : index_of) {
        silent += fmt::format("{}{}", silent.empty() ? "" : ", ", node_of[i]);
      }
      throw CommunicationError(
          ErrorKind::timeout,
          fmt::format("measuring round trips: no answer within {} s from node(s) {}",
                      kRoundTripTimeout, silent));
    }
    if (::poll(waiting.data(), waiting.size(), static_cast<int>(left)) < 0 && errno != EINTR) {
      throw CommunicationError(ErrorKind::internal, fmt::format("measuring round trips: poll: {}",
                                                                std::strerror(errno)));
    }
    const auto now = Clock::now();
    if (waiting[0].revents != 0) drain(listener);
    for (std::size_t w = 1; w < waiting.size(); ++w) {
      if (waiting[w].revents == 0) continue;
      const std::size_t i = index_of[w - 1];
      int error = 0;
      socklen_t length = sizeof(error);
      ::getsockopt(sockets[i].fd(), SOL_SOCKET, SO_ERROR, &error, &length);
      if (error != 0)
        cannot_connect(node_of[i], endpoints[static_cast<std::size_t>(node_of[i])], error);
      double& best = row[static_cast<std::size_t>(node_of[i])];
      best = std::min(best, std::chrono::duration<double>(now - started[i]).count());
      done[i] = true;
      --remaining;
    }
  }
}

}  // namespace

RoundTripListener::RoundTripListener(const std::string& address) {
  sockaddr_in bound = parse_endpoint(runtime::host_port_text(address, 0));
  socklen_t length = sizeof(bound);
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&bound), sizeof(bound)) != 0 ||
      ::listen(fd_, SOMAXCONN) != 0 ||
      ::getsockname(fd_, reinterpret_cast<sockaddr*>(&bound), &length) != 0) {
    const int error = errno;
    if (fd_ >= 0) ::close(fd_);
    throw CommunicationError(ErrorKind::resource,
                             fmt::format("measuring round trips: cannot listen on {}: {}", address,
                                         std::strerror(error)));
  }
  endpoint_ = runtime::host_port_text(address, ntohs(bound.sin_port));
}

RoundTripListener::~RoundTripListener() {
  ::close(fd_);
}

std::vector<double> time_connects(const RoundTripListener& listener,
                                  const std::vector<std::string>& endpoints, int me) {
  std::vector<double> row(endpoints.size(), std::numeric_limits<double>::infinity());
  for (int repetition = 0; repetition < kRepetitions; ++repetition) {
    connect_all(listener.fd(), endpoints, me, row);
  }
  row[static_cast<std::size_t>(me)] = 0;
  return row;
}

}  // namespace multilane::mpi
