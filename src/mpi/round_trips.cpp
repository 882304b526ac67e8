// mpi/round_trips.cpp — timed concurrent TCP connects between leaders (round_trips.hpp).
#include "mpi/round_trips.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
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
#include <vector>

#include "mpi/all_gather_text.hpp"
#include "mpi/pmpi_check.hpp"
#include "multilane/errors.hpp"

namespace multilane::mpi {

namespace {

constexpr int kRepetitions = 5;
using Clock = std::chrono::steady_clock;

// A socket closed when it goes out of scope.
class Socket {
 public:
  explicit Socket(int fd = -1) : fd_(fd) {}
  Socket(Socket&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Socket& operator=(Socket&& other) noexcept {
    std::swap(fd_, other.fd_);
    return *this;
  }
  ~Socket() {
    if (fd_ >= 0) ::close(fd_);
  }
  int fd() const { return fd_; }

 private:
  int fd_;
};

sockaddr_in parse_endpoint(const std::string& text) {
  const std::size_t colon = text.rfind(':');
  sockaddr_in address{};
  address.sin_family = AF_INET;
  if (colon == std::string::npos ||
      inet_pton(AF_INET, text.substr(0, colon).c_str(), &address.sin_addr) != 1) {
    throw CommunicationError(fmt::format("round trips: malformed endpoint \"{}\" from a peer", text));
  }
  address.sin_port = htons(static_cast<std::uint16_t>(std::stoi(text.substr(colon + 1))));
  return address;
}

Socket listen_on(const std::string& host, std::string& endpoint) {
  Socket listener(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  sockaddr_in address = parse_endpoint(host + ":0");
  socklen_t length = sizeof(address);
  if (listener.fd() < 0 ||
      ::bind(listener.fd(), reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      ::listen(listener.fd(), SOMAXCONN) != 0 ||
      ::getsockname(listener.fd(), reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    throw CommunicationError(
        fmt::format("round trips: cannot listen on {}: {}", host, std::strerror(errno)));
  }
  endpoint = fmt::format("{}:{}", host, ntohs(address.sin_port));
  return listener;
}

// Takes and drops the connections waiting on `listener`, so that its queue never fills.
void drain(const Socket& listener) {
  while (true) {
    const int fd = ::accept4(listener.fd(), nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) return;
    ::close(fd);
  }
}

// One connect to every other leader at once; the time each took goes into `row` when faster.
void connect_all(const Socket& listener, const std::vector<std::string>& endpoints, int me,
                 std::vector<double>& row) {
  std::vector<Socket> sockets;
  std::vector<int> peer_of;
  std::vector<Clock::time_point> started;
  for (int peer = 0; peer < static_cast<int>(endpoints.size()); ++peer) {
    if (peer == me) continue;
    const sockaddr_in address = parse_endpoint(endpoints[static_cast<std::size_t>(peer)]);
    Socket socket(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    started.push_back(Clock::now());
    if (socket.fd() < 0 ||
        (::connect(socket.fd(), reinterpret_cast<const sockaddr*>(&address), sizeof(address)) != 0 &&
         errno != EINPROGRESS)) {
      throw CommunicationError(fmt::format("round trips: cannot connect to node {} at {}: {}", peer,
                                           endpoints[static_cast<std::size_t>(peer)],
                                           std::strerror(errno)));
    }
    sockets.push_back(std::move(socket));
    peer_of.push_back(peer);
  }
  std::vector<bool> done(sockets.size(), false);
  std::size_t remaining = sockets.size();
  const auto deadline = Clock::now() + std::chrono::duration<double>(kRoundTripTimeout);
  while (remaining > 0) {
    std::vector<pollfd> waiting{{.fd = listener.fd(), .events = POLLIN, .revents = 0}};
    std::vector<std::size_t> index_of;
    for (std::size_t i = 0; i < sockets.size(); ++i) {
      if (done[i]) continue;
      waiting.push_back({.fd = sockets[i].fd(), .events = POLLOUT, .revents = 0});
      index_of.push_back(i);
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      std::string silent;
      for (const std::size_t i : index_of) silent += fmt::format("{}{}", silent.empty() ? "" : ", ", peer_of[i]);
      throw CommunicationError(fmt::format(
          "measuring round trips between nodes: no answer within {} s from node(s) {}",
          kRoundTripTimeout, silent));
    }
    if (::poll(waiting.data(), waiting.size(), static_cast<int>(left.count())) < 0 && errno != EINTR) {
      throw CommunicationError(fmt::format("round trips: poll failed: {}", std::strerror(errno)));
    }
    const auto now = Clock::now();
    if (waiting[0].revents != 0) drain(listener);
    for (std::size_t w = 1; w < waiting.size(); ++w) {
      if (waiting[w].revents == 0) continue;
      const std::size_t i = index_of[w - 1];
      int error = 0;
      socklen_t length = sizeof(error);
      ::getsockopt(sockets[i].fd(), SOL_SOCKET, SO_ERROR, &error, &length);
      if (error != 0) {
        throw CommunicationError(fmt::format("round trips: cannot connect to node {} at {}: {}",
                                             peer_of[i], endpoints[static_cast<std::size_t>(peer_of[i])],
                                             std::strerror(error)));
      }
      double& best = row[static_cast<std::size_t>(peer_of[i])];
      best = std::min(best, std::chrono::duration<double>(now - started[i]).count());
      done[i] = true;
      --remaining;
    }
  }
}

}  // namespace

RoundTrips measure_round_trips(MPI_Comm leaders, const std::string& address) {
  int me = 0, n = 1;
  pmpi_check(PMPI_Comm_rank(leaders, &me), "PMPI_Comm_rank");
  pmpi_check(PMPI_Comm_size(leaders, &n), "PMPI_Comm_size");
  std::string endpoint;
  const Socket listener = listen_on(address, endpoint);
  const std::vector<std::string> endpoints = all_gather_text(leaders, n, endpoint, "round trip listeners");
  std::vector<double> row(static_cast<std::size_t>(n), std::numeric_limits<double>::infinity());
  for (int repetition = 0; repetition < kRepetitions; ++repetition) {
    connect_all(listener, endpoints, me, row);
  }
  RoundTrips trips{.nodes = n, .seconds = std::vector<double>(static_cast<std::size_t>(n) * n)};
  // Also keeps every listener open until every leader has finished connecting.
  pmpi_check(PMPI_Allgather(row.data(), n, MPI_DOUBLE, trips.seconds.data(), n, MPI_DOUBLE, leaders),
             "PMPI_Allgather (round trips)");
  for (int a = 0; a < n; ++a) {
    for (int b = a + 1; b < n; ++b) {
      const std::size_t ab = static_cast<std::size_t>(a) * n + b;
      const std::size_t ba = static_cast<std::size_t>(b) * n + a;
      trips.seconds[ab] = trips.seconds[ba] = std::min(trips.seconds[ab], trips.seconds[ba]);
    }
    trips.seconds[static_cast<std::size_t>(a) * n + a] = 0;
  }
  return trips;
}

}  // namespace multilane::mpi
