// mpi/lane_discovery.hpp — a node's lanes: its network interfaces that are up with an IPv4
// address, as MULTILANE_LANES selects them.
//
// Without MULTILANE_LANES every such interface but loopback and the bridges of containers and
// virtual machines (docker*, virbr*; NCCL skips the same) is a lane, in the kernel's order.
// MULTILANE_LANES=eth0,eth1 names interfaces; an entry with a dot or a colon is an address
// prefix instead (MULTILANE_LANES=198.18. takes every interface whose address starts so). A lane's
// bandwidth is the interface's link speed (/sys/class/net/IF/speed) when the kernel knows it,
// else 10 Gbit/s. Ranks exchange their lanes as text: "address@bytes_per_second" joined by
// commas.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace multilane::mpi {

struct LocalLane {
  std::string interface;  // "" when it comes from text
  std::string address;    // IPv4, dotted
  double bps = 1.25e9;    // bytes per second
};

// The interfaces of this host that are up, non-loopback and have an IPv4 address.
std::vector<LocalLane> interfaces_up();
// The lanes `spec` (MULTILANE_LANES, "" for the default) picks out of `up`. Throws UsageError
// naming the variable and the interfaces up when an entry matches none.
std::vector<LocalLane> select_lanes(const std::vector<LocalLane>& up, std::string_view spec);
// This host's lanes: select_lanes(interfaces_up(), MULTILANE_LANES).
std::vector<LocalLane> discover_lanes();

std::string lanes_text(const std::vector<LocalLane>& lanes);
// Throws CommunicationError on text lanes_text() did not make.
std::vector<LocalLane> parse_lanes_text(std::string_view text);

}  // namespace multilane::mpi
