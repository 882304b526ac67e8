// mpi/round_trips.hpp — round trips between the nodes of a communicator, measured between one
// leader per node as the time a TCP connect() takes on the nodes' first lanes.
//
// A connect() completes when the SYN's answer arrives: one round trip, answered by the peer's
// kernel, so that it measures the network and not whether the peer process has a core (ranks
// that spin in MPI's progress on an oversubscribed node answer a ping-pong milliseconds late).
// Every leader listens, then connects to every other leader at once, five times; a pair's
// figure is its fastest connect in either direction. The lanes' addresses are the ones the
// collectives use, so the figures are those of the lanes multilane drives. Each wait ends after
// kRoundTripTimeout with an error naming the leaders that did not answer.
#pragma once

#include <mpi.h>

#include <string>

#include "mpi/site_clustering.hpp"

namespace multilane::mpi {

inline constexpr double kRoundTripTimeout = 30;  // seconds

// Collective over `leaders` (one rank per node, node i = rank i), each listening on `address`
// (its node's first lane): every leader gets the matrix. Throws CommunicationError.
RoundTrips measure_round_trips(MPI_Comm leaders, const std::string& address);

}  // namespace multilane::mpi
