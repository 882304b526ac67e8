// mpi/round_trips.hpp — round trips between the nodes of a communicator, measured with PMPI
// point-to-point messages between one leader per node.
//
// Every pair is measured (each leader pings the next n/2 leaders, in waves of 8 partners at
// once, so that a leader answers at most 16 messages at a time and a wave takes one round trip
// of its slowest pair), three times; a pair's figure is its fastest. 64 nodes across a 20 ms WAN
// take 4 waves x 3 x 20 ms = 0.24 s. Each wait ends after kRoundTripTimeout with an error
// naming the leaders that did not answer.
#pragma once

#include <mpi.h>

#include "mpi/site_clustering.hpp"

namespace multilane::mpi {

inline constexpr double kRoundTripTimeout = 30;  // seconds

// Collective over `leaders` (one rank per node, node i = rank i): every leader gets the matrix.
// Throws CommunicationError.
RoundTrips measure_round_trips(MPI_Comm leaders);

}  // namespace multilane::mpi
