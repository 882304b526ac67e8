// mpi/round_trips.hpp — round trips between nodes, measured as the time a TCP connect() takes
// between one leader per node, on the nodes' first lanes.
//
// A connect() completes when the SYN's answer arrives: one round trip, answered by the peer's
// kernel, so that it measures the network and not whether the peer process has a core (ranks
// that spin in MPI's progress on an oversubscribed node answer a ping-pong milliseconds late).
// Every rank listens (discovery.hpp passes the endpoints along with the other facts, and only
// the leaders' are used); every leader connects to every other leader at once, five times, and
// a pair's figure is its fastest connect in either direction. The lanes are the ones the
// collectives use, so the figures are those of the lanes multilane drives. A wait ends after
// kRoundTripTimeout with an error naming the nodes that did not answer.
#pragma once

#include <string>
#include <vector>

namespace multilane::mpi {

inline constexpr double kRoundTripTimeout = 30;  // seconds

// A listening socket on one address, with its "address:port"; closed when destroyed (after
// every leader has finished connecting to it: the caller's next collective ensures that).
class RoundTripListener {
 public:
  explicit RoundTripListener(const std::string& address);  // throws CommunicationError
  RoundTripListener(const RoundTripListener&) = delete;
  RoundTripListener& operator=(const RoundTripListener&) = delete;
  ~RoundTripListener();
  const std::string& endpoint() const { return endpoint_; }
  int fd() const { return fd_; }

 private:
  int fd_ = -1;
  std::string endpoint_;
};

// This leader's row: the fastest connect, in seconds, to every leader of `endpoints` (node ->
// "address:port"), 0 for itself (`me`). Throws CommunicationError.
std::vector<double> time_connects(const RoundTripListener& listener,
                                  const std::vector<std::string>& endpoints, int me);

}  // namespace multilane::mpi
