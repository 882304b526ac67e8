// mpi/listen_address.hpp — the address a rank listens on for multilane's TCP streams.
//
// Ranks of one host talk over loopback. When a communicator spans hosts, its nodes' lanes
// carry their own addresses (lane_discovery.hpp); this one serves a lane without: MULTILANE_HOST
// (as for `multilane launch`), else the first IPv4 interface that is up and not loopback.
#pragma once

#include <string>

namespace multilane::mpi {

std::string listen_address(bool spans_hosts);

}  // namespace multilane::mpi
