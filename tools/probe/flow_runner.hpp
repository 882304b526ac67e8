// tools/probe/flow_runner.hpp — runs one link test's flows at once over multilane's WAN channels
// and returns what they carried together.
//
// Every rank of the communicator calls it (it is collective); a rank takes part in at most one
// flow. A flow's receiver listens on each of its node's lanes, the ports go round with one
// MPI_Allgather, the sender connects a path of `streams` streams to each, and after a barrier
// the sender sends 1 MiB messages on all its paths, round after round, for `seconds`, then a
// 1-byte message on each that ends the flow. The receiver's rate is the bytes it received over
// the time from the barrier to the end; the test's figure is the sum over the flows. Channels
// authenticate with the secret the caller shares (drawn by rank 0), and every wait of a path is
// bounded by its timeout (30 s).
#pragma once

#include <mpi.h>

#include "multilane/channels.hpp"
#include "probe/link_tests.hpp"

namespace multilane::probe {

// Bytes per second, the same on every rank. Throws channels::ChannelError or
// CommunicationError.
double run_flows(MPI_Comm comm, const Platform& platform, const LinkTest& test,
                 const channels::Credentials& credentials, double seconds);

}  // namespace multilane::probe
