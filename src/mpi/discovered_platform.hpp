// mpi/discovered_platform.hpp — the platform of a communicator when no file describes it, from
// what its ranks found out (discovery.hpp gathers it).
//
// Ranks with equal host hashes (host_identity.hpp) share a node, numbered by their first rank;
// a node has as many cores as ranks and the lanes its first rank found (lane_discovery.hpp),
// or one lane without an address when it found none or when the communicator has one node
// (loopback and shared memory serve it). Sites: the names ranks give in MULTILANE_SITE when any
// does (a node belongs to the site of its ranks; unnamed ranks are in site "mpi"), else the
// clusters of the measured round trips between nodes (site_clustering.hpp), else one site.
// Latencies are measured when round trips are; what is not measured is a guess that only
// serves to rank the algorithms: 20 us inside a site, 5 ms one way between sites, 10 Gbit/s
// between sites in all, 4 MiB TCP windows. MULTILANE_PLATFORM, or a file written by `multilane
// platform probe`, gives real ones.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mpi/lane_discovery.hpp"
#include "mpi/site_clustering.hpp"
#include "multilane/platform.hpp"

namespace multilane::mpi {

struct Discovery {
  std::vector<std::uint64_t> hashes;          // rank -> host hash
  std::vector<std::string> site_names;        // rank -> MULTILANE_SITE ("" when unset)
  std::vector<std::vector<LocalLane>> lanes;  // rank -> its lanes (empty: none found)
  std::optional<RoundTrips> round_trips;      // between nodes, numbered by first rank

  // Node index of each rank (nodes numbered by first rank) and each node's first rank.
  std::vector<int> node_of_rank() const;
  std::vector<int> first_rank_of_nodes() const;
  bool any_site_named() const;
};

// This rank's site name: MULTILANE_SITE, or "".
std::string site_name();
// Throws UsageError when two ranks of one node name different sites.
Platform discovered_platform(const Discovery& found);
// One line for MULTILANE_EXPLAIN (describe_platform of platform_file.hpp is the full summary):
// "8 ranks, 8 nodes of 1-2 lanes, 2 sites (site0: 4 nodes, 0.05 ms
// one way; site1: ...; site0-site1: 10.1 ms one way); platform: discovered".
std::string summarize_platform(const Platform& platform);

}  // namespace multilane::mpi
