// mpi/site_clustering.hpp — sites from the round trips between nodes.
//
// Inside a site a round trip takes microseconds; between sites, milliseconds. Sorted, the
// round trips between node pairs show a gap: the first step up by a factor of 10 or more
// separates the sites (steps below kSiteRoundTripFloor never do: two racks of one room are one
// site). Two nodes whose round trip is below the gap are in one site, and so is every node
// they reach that way (single linkage: a node alone in its site is still found, through its
// long round trips to all the others). Without such a gap all nodes are one site.
//
//   round trips (ms), sorted:  0.05 0.06 0.06 0.07 | 20.1 20.2 20.2 20.3 ...
//                                                   ^ 20.1 / 0.07 > 10: sites split here
//
// The figures the model needs come along: a site's LAN latency is half the median round trip
// inside it, a WAN link's latency half the smallest round trip between its two sites.
#pragma once

#include <vector>

namespace multilane::mpi {

inline constexpr double kSiteGapFactor = 10;
inline constexpr double kSiteRoundTripFloor = 200e-6;  // seconds

// Round trips between nodes, in seconds: row-major, nodes x nodes, symmetric; the diagonal is
// ignored.
struct RoundTrips {
  int nodes = 1;
  std::vector<double> seconds;
  double at(int a, int b) const {
    return seconds[static_cast<std::size_t>(a) * static_cast<std::size_t>(nodes) +
                   static_cast<std::size_t>(b)];
  }
};

struct SiteClusters {
  std::vector<int> site_of_node;      // sites numbered by their first node
  std::vector<double> lan_latency_s;  // per site (0 for a site of one node)
  std::vector<double> wan_latency_s;  // sites x sites, row-major (0 on the diagonal)
  int sites() const { return static_cast<int>(lan_latency_s.size()); }
};

SiteClusters cluster_sites(const RoundTrips& round_trips);

}  // namespace multilane::mpi
