// sim/network.hpp — the resources of a platform as the simulator sees them, and the path of a
// transfer through them.
//
// Resources, numbered densely: for every node and lane an "up" and a "down" resource (lane
// bandwidth each way), for every WAN link one resource per direction (aggregate bandwidth,
// infinite when the link declares none), and for every node its memory (one core's copy
// bandwidth times the node's cores). A Path lists the resources a flow crosses with the weight
// of the flow on each (1, or 1/k on each of k lanes of a striped transfer; 2 on the memory for
// a message between ranks of one node copied twice, into shared memory and out), its latency and
// what caps its rate: a fixed cap (memory copies) and, across a WAN, k connections each
// limited to b_WAN cap(P) of the link (P = connections crossing that direction now).
//
// transfer_path() reads one 16-byte record per rank (its node, site and lanes), not the
// Platform's nested structures, so computing a path costs two cache misses on a million ranks.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "multilane/platform.hpp"
#include "sim/huge_page_allocator.hpp"

namespace multilane::sim {

inline constexpr std::uint32_t kNone = 0xffffffffu;
inline constexpr int kMaxStripe = 8;                  // lanes a kAnyLane transfer stripes over
inline constexpr int kMaxSlots = 2 * kMaxStripe + 1;  // lanes up + lanes down + WAN or memory
inline constexpr double kInf = std::numeric_limits<double>::infinity();

struct Path {
  int slots = 0;
  std::uint32_t resource[kMaxSlots];  // the first `slots` entries are set
  float weight[kMaxSlots];
  double latency_s = 0;
  double fixed_cap_bps = kInf;    // per-flow cap independent of others (memory copies)
  std::uint32_t wan = kNone;      // WAN direction resource crossed, if any
  std::uint16_t connections = 0;  // connections this flow opens on `wan`
  std::int16_t lane = 0;          // lane used, -1 striped, -2 memory (for traces)
};

enum class ResourceKind : std::uint8_t { LaneUp, LaneDown, Wan, Memory };

class Network {
 public:
  explicit Network(const Platform& platform);

  // Path of a message from rank `from` to rank `to` on `lane` (kAnyLane: striped). Throws
  // UsageError naming the sites when no WAN link joins them, or the lane a node lacks. Between
  // ranks of one node the bytes are copied twice through shared memory, or once by the kernel
  // when `copied_once` (SharedMemory's single copy).
  Path transfer_path(int from, int to, int lane, bool copied_once = false) const;
  // Path of a local copy by `rank`.
  Path copy_path(int rank) const;

  std::size_t num_resources() const { return mem_base_ + static_cast<std::size_t>(num_nodes()); }
  // Capacity of resource r in bytes per second (infinite for a WAN without an aggregate).
  double capacity(std::uint32_t r) const;
  // Calls f(capacity(r)) for every lane and WAN resource r (r < mem_base()) in increasing
  // order, in one pass over the platform (capacity(r) alone costs a search for lanes).
  template <class F>
  void for_each_link_capacity(F f) const;
  // Cap on one connection's rate across WAN direction resource `r` with `connections` active.
  double connection_cap(std::uint32_t r, int connections) const;

  ResourceKind kind(std::uint32_t r) const;
  // For lanes: node and lane; for WAN: link and direction (0: a->b); for memory: node.
  std::uint32_t lane_resource(int node, int lane, bool up) const {
    return 2 * (lane_base_[node] + static_cast<std::uint32_t>(lane)) + (up ? 0 : 1);
  }
  std::uint32_t wan_resource(int link, int direction) const {
    return wan_base_ + 2 * static_cast<std::uint32_t>(link) + static_cast<std::uint32_t>(direction);
  }
  std::uint32_t memory_resource(int node) const {
    return mem_base_ + static_cast<std::uint32_t>(node);
  }
  std::uint32_t wan_base() const { return wan_base_; }
  std::uint32_t mem_base() const { return mem_base_; }
  int lanes_of_node(int node) const {
    return static_cast<int>(lane_base_[node + 1] - lane_base_[node]);
  }
  // Inverse of lane_resource: (node, lane) of a lane resource.
  std::pair<int, int> lane_of(std::uint32_t r) const;
  int num_nodes() const { return static_cast<int>(lane_base_.size()) - 1; }

 private:
  double lane_capacity(int node, int lane, bool up) const;
  double wan_capacity(int link) const;
  double memory_capacity(int node) const;

  const Platform& platform_;
  struct Place {  // where a rank lives
    std::int32_t node;
    std::int32_t site;
    std::uint32_t lane_base;  // lane_base_[node]
    std::int32_t lanes;       // lanes of the node
  };
  std::vector<std::uint32_t> lane_base_;  // per node, prefix sum of lanes (size nodes+1)
  BigVector<Place> place_;                // per rank
  std::vector<int> site_pair_link_;       // sites*sites -> link index or -1
  std::uint32_t wan_base_ = 0;
  std::uint32_t mem_base_ = 0;
};

template <class F>
void Network::for_each_link_capacity(F f) const {
  for (const Node& node : platform_.nodes) {
    for (const Lane& lane : node.lanes) {
      f(lane.up_bps);
      f(lane.down_bps);
    }
  }
  for (int link = 0; link < static_cast<int>((mem_base_ - wan_base_) / 2); ++link) {
    f(wan_capacity(link));
    f(wan_capacity(link));
  }
}

}  // namespace multilane::sim
