// mpi/listen_address.hpp — the address a rank listens on for multilane's TCP streams.
//
// Ranks of one host talk over loopback. When a communicator spans hosts, MULTILANE_HOST names
// the address (as for `multilane launch`); without it the first IPv4 interface that is up and
// not loopback is used. (Several lanes per node and sites are the discovery step: not
// yet done; a node has one lane here.)
#pragma once

#include <string>

namespace multilane::mpi {

std::string listen_address(bool spans_hosts);

}  // namespace multilane::mpi
