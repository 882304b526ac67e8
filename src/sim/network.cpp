#include "sim/network.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "multilane/errors.hpp"

namespace multilane::sim {

Network::Network(const Platform& platform) : platform_(platform) {
  const auto nodes = platform.nodes.size();
  lane_base_.assign(nodes + 1, 0);
  for (std::size_t n = 0; n < nodes; ++n) {
    lane_base_[n + 1] = lane_base_[n] + static_cast<std::uint32_t>(platform.nodes[n].lanes.size());
  }
  place_.resize(platform.ranks.size());
  for (std::size_t r = 0; r < platform.ranks.size(); ++r) {
    const int n = platform.ranks[r].node;
    place_[r] = {n, platform.nodes[n].site, lane_base_[n], lanes_of_node(n)};
  }
  wan_base_ = 2 * lane_base_[nodes];
  mem_base_ = wan_base_ + 2 * static_cast<std::uint32_t>(platform.wan_links.size());
  const auto sites = platform.sites.size();
  site_pair_link_.assign(sites * sites, -1);
  for (std::size_t i = 0; i < platform.wan_links.size(); ++i) {
    const auto& w = platform.wan_links[i];
    site_pair_link_[w.site_a * sites + w.site_b] = int(i);
    site_pair_link_[w.site_b * sites + w.site_a] = int(i);
  }
}

double Network::lane_capacity(int node, int lane, bool up) const {
  const Lane& l = platform_.nodes[node].lanes[lane];
  return up ? l.up_bps : l.down_bps;
}

double Network::wan_capacity(int link) const {
  const double aggregate = platform_.wan_links[link].aggregate_bps;
  return aggregate > 0 ? aggregate : kInf;
}

double Network::memory_capacity(int node) const {
  const Node& n = platform_.nodes[node];
  return platform_.sites[n.site].shm.copy_bps * std::max(n.cores, 1);
}

double Network::capacity(std::uint32_t r) const {
  switch (kind(r)) {
    case ResourceKind::LaneUp:
    case ResourceKind::LaneDown: {
      const auto [node, lane] = lane_of(r);
      return lane_capacity(node, lane, kind(r) == ResourceKind::LaneUp);
    }
    case ResourceKind::Wan:
      return wan_capacity(static_cast<int>((r - wan_base_) / 2));
    case ResourceKind::Memory:
      break;
  }
  return memory_capacity(static_cast<int>(r - mem_base_));
}

ResourceKind Network::kind(std::uint32_t r) const {
  if (r < wan_base_) return (r & 1u) ? ResourceKind::LaneDown : ResourceKind::LaneUp;
  if (r < mem_base_) return ResourceKind::Wan;
  return ResourceKind::Memory;
}

std::pair<int, int> Network::lane_of(std::uint32_t r) const {
  const std::uint32_t global_lane = r / 2;
  auto it = std::upper_bound(lane_base_.begin(), lane_base_.end(), global_lane);
  const int node = static_cast<int>(it - lane_base_.begin()) - 1;
  return {node, static_cast<int>(global_lane - lane_base_[node])};
}

double Network::connection_cap(std::uint32_t r, int connections) const {
  const auto& link = platform_.wan_links[(r - wan_base_) / 2];
  return link.connection_cap_bps(connections);
}

Path Network::copy_path(int rank) const {
  const Place& at = place_[rank];
  Path p;
  p.slots = 1;
  p.resource[0] = memory_resource(at.node);
  p.weight[0] = 1;
  p.fixed_cap_bps = platform_.sites[at.site].shm.copy_bps;
  p.lane = -2;
  return p;
}

Path Network::transfer_path(int from, int to, int lane, bool copied_once) const {
  const Place& a = place_[from];
  const Place& b = place_[to];
  if (a.node == b.node) {
    const SharedMemory& shm = platform_.sites[a.site].shm;
    Path p = copy_path(from);
    if (copied_once) {
      // Single copy: one core copies from the sender's memory into the receiver's.
      p.fixed_cap_bps = shm.single_copy_bps;
      p.latency_s = shm.sync_latency_s + shm.single_copy_latency_s;
      return p;
    }
    // Shared memory: the sender copies into a shared segment, the receiver copies out: every
    // byte costs the node two copies.
    p.fixed_cap_bps /= 2;
    p.weight[0] = 2;
    p.latency_s = shm.sync_latency_s;
    return p;
  }
  // Lane i of a node: resources 2 (lane_base + i) up and 2 (lane_base + i) + 1 down.
  Path p;
  if (lane == -1) {
    const int k = std::min({a.lanes, b.lanes, kMaxStripe});
    for (int i = 0; i < k; ++i) {
      p.resource[p.slots] = 2 * (a.lane_base + static_cast<std::uint32_t>(i));
      p.weight[p.slots++] = 1.0f / float(k);
      p.resource[p.slots] = 2 * (b.lane_base + static_cast<std::uint32_t>(i)) + 1;
      p.weight[p.slots++] = 1.0f / float(k);
    }
    p.connections = static_cast<std::uint16_t>(k);
    p.lane = -1;
  } else {
    if (lane < 0 || lane >= a.lanes || lane >= b.lanes) {
      throw UsageError(fmt::format(
          "rank {} (node {}, {} lanes) sends to rank {} (node {}, {} lanes) on lane {}, which "
          "one of them does not have",
          from, platform_.nodes[a.node].name, a.lanes, to, platform_.nodes[b.node].name, b.lanes,
          lane));
    }
    p.resource[p.slots] = 2 * (a.lane_base + static_cast<std::uint32_t>(lane));
    p.weight[p.slots++] = 1;
    p.resource[p.slots] = 2 * (b.lane_base + static_cast<std::uint32_t>(lane)) + 1;
    p.weight[p.slots++] = 1;
    p.connections = 1;
    p.lane = static_cast<std::int16_t>(lane);
  }
  if (a.site == b.site) {
    p.latency_s = platform_.sites[a.site].lan_latency_s;
    p.connections = 0;
    return p;
  }
  const int link =
      site_pair_link_[std::size_t(a.site) * platform_.sites.size() + std::size_t(b.site)];
  if (link < 0) {
    throw UsageError(
        fmt::format("no WAN link between sites '{}' and '{}' (rank {} sends to rank {})",
                    platform_.sites[a.site].name, platform_.sites[b.site].name, from, to));
  }
  const auto& w = platform_.wan_links[link];
  p.wan = wan_resource(link, w.site_a == a.site ? 0 : 1);
  p.resource[p.slots] = p.wan;
  p.weight[p.slots++] = 1;
  p.latency_s = w.latency_s;
  return p;
}

}  // namespace multilane::sim
