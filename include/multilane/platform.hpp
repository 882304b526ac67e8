// multilane/platform.hpp — the machine a collective runs on.
//
// A platform is a set of sites (clusters) joined by WAN links. A site has nodes; a node has
// lanes (NICs, full duplex, each with its own up and down bandwidth) and cores (ranks that
// may run on it). Ranks are placed on nodes (block placement unless the file says otherwise).
//
// Units inside the program are SI base units: bytes, bytes per second, seconds. The TOML
// reader (platform_file.hpp) converts what people write (`10ms`, `1Gbit/s`, `64KiB`).
//
// Everything here is plain data plus small queries; builders, the verifier, the model and
// the simulator all read the same structure.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace multilane {

// One network interface of a node. Lanes with the same index on different nodes are on the
// same network ("rail"): a transfer leaves the sender's lane i and enters the receiver's lane i.
struct Lane {
  double up_bps = 0;    // bytes per second the node can send on this lane
  double down_bps = 0;  // bytes per second the node can receive on this lane
  std::string address;  // optional IP address for the runtime to bind ("" = any)
};

// Shared-memory figures of a node, for transfers between ranks on the same node.
struct SharedMemory {
  double copy_bps = 4e9;         // memory copy bandwidth of one core
  double reduce_bps = 2e9;       // bytes of an accumulator one core combines per second
  double sync_latency_s = 1e-6;  // cost of one synchronisation between cores
  // Single copy (the runtime's, beyond the SMP paper's two copies through a shared buffer): a
  // group call whose block (a bcast's whole message) has at least `single_copy_from` bytes
  // copies every byte once, by the kernel, from one process's memory into the other's, at
  // `single_copy_bps` per core after `single_copy_latency_s` for each such copy (the system
  // call and the pinning of the other process's pages). 0: never (the paper's Table 1 only).
  std::uint64_t single_copy_from = 8 * 1024;  // the runtime's default on one rank per core
  double single_copy_bps = 4e9;
  double single_copy_latency_s = 1.5e-6;

  // Whether a group call of `block` bytes per block (a bcast's message) is copied once.
  bool copies_once(double block) const {
    return single_copy_from > 0 && block >= static_cast<double>(single_copy_from);
  }
};

struct Node {
  std::string name;
  int site = 0;             // index into Platform::sites
  int cores = 1;            // how many ranks may be placed on this node
  std::vector<Lane> lanes;  // at least one
};

struct Site {
  std::string name;
  double lan_latency_s = 0;  // one-way latency between two nodes of this site
  SharedMemory shm;
  std::vector<int> nodes;  // indices into Platform::nodes, in file order
};

// A wide-area link between two sites. Long fat pipes: a single TCP connection rarely fills
// them, which is why the algorithms open several connections (node pairs, streams, routers).
struct WanLink {
  int site_a = 0;
  int site_b = 0;
  double latency_s = 0;      // one-way
  double aggregate_bps = 0;  // B_WAN: what all connections together can carry
  // Per-connection bandwidth b_WAN(P) when P connections are active. Either a table of
  // measured points (connections -> bytes/s, interpolated linearly, clamped at the ends) or a
  // TCP window cap (window / round-trip time). With neither, a connection is limited only by
  // the aggregate and the lanes.
  struct Point {
    int connections = 1;
    double bps = 0;
  };
  std::vector<Point> per_connection_table;
  double tcp_window_bytes = 0;

  // The cap on one connection's rate when `connections` are active, before sharing the
  // aggregate (infinity when nothing caps it).
  double connection_cap_bps(int connections) const;
  // b_WAN(P) of the scatter/gather paper: min(cap(P), B_WAN / P).
  double per_connection_bps(int connections) const;
};

// Where a rank runs.
struct RankPlace {
  int node = 0;  // index into Platform::nodes
  int core = 0;  // 0 .. cores-1 on that node
};

struct Platform {
  std::string name;
  std::string source;  // file it was read from, or "generated"
  // Some bandwidths are guesses, not measurements (a platform the MPI library discovered without
  // a file: its WAN links always, its lanes where the system does not tell their speed). The
  // model may rank algorithms on them, but does not cut pipelines by them (algorithm_choice.hpp).
  bool rates_guessed = false;
  std::vector<Site> sites;
  std::vector<Node> nodes;
  std::vector<WanLink> wan_links;
  std::vector<RankPlace> ranks;  // rank -> place; size is the number of ranks

  int num_ranks() const { return static_cast<int>(ranks.size()); }
  int node_of(int rank) const { return ranks.at(rank).node; }
  int site_of(int rank) const { return nodes.at(ranks.at(rank).node).site; }
  int lanes_of(int rank) const { return static_cast<int>(nodes.at(node_of(rank)).lanes.size()); }
  // The WAN link joining two different sites, or nullptr when none is declared.
  const WanLink* wan_between(int site_a, int site_b) const;
  // Ranks of a site in increasing rank order.
  std::vector<int> ranks_of_site(int site) const;
  int num_sites() const { return static_cast<int>(sites.size()); }

  // Builders for platforms made in code (tests, generators): append a site, append a node
  // of `lanes` identical lanes to a site, join every pair of sites with a copy of `link`
  // (whose site_a/site_b are set). Each returns the new index where there is one.
  int add_site(std::string site_name, double lan_latency_s);
  int add_node(int site, std::string node_name, int cores, int lanes, double lane_bps);
  void connect_all_sites(const WanLink& link);

  // Places `count` ranks on the nodes in file order, filling every core of a node first.
  // Throws std::invalid_argument when count exceeds the total number of cores.
  void place_block(int count);
  // Total cores of all nodes.
  int total_cores() const;
};

// A one-site, `nodes`-node platform with `lanes` lanes of `lane_bps` each and one rank per
// node. Handy for tests and for the closed-form examples of the broadcast paper.
Platform make_uniform_platform(int sites, int nodes_per_site, int lanes, int cores, double lane_bps,
                               double lan_latency_s, double wan_latency_s, double wan_aggregate_bps,
                               double wan_connection_bps);

}  // namespace multilane
