#include "emu/plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "emu/addressing.hpp"
#include "emu/names.hpp"
#include "multilane/errors.hpp"

namespace multilane::emu {

namespace {

constexpr int kMinMtu = 576;
constexpr int kMaxMtu = 65000;
constexpr int kEthernetHeader = 14;

void check_limits(const Platform& platform, const EmuOptions& options) {
  check_emulation_name(options.name);
  if (platform.nodes.empty()) throw UsageError("platform has no nodes to emulate");
  if (platform.num_sites() > kMaxSites) {
    throw UsageError(fmt::format("platform {} has {} sites; the emulator handles at most {}",
                                 platform.name, platform.num_sites(), kMaxSites));
  }
  for (const Site& site : platform.sites) {
    if (static_cast<int>(site.nodes.size()) > kMaxNodesPerSite) {
      throw UsageError(fmt::format("site {} has {} nodes; the emulator handles at most {} per site",
                                   site.name, site.nodes.size(), kMaxNodesPerSite));
    }
  }
  for (const Node& node : platform.nodes) {
    if (static_cast<int>(node.lanes.size()) > kMaxLanes) {
      throw UsageError(fmt::format("node {} has {} lanes; the emulator handles at most {}",
                                   node.name, node.lanes.size(), kMaxLanes));
    }
  }
  if (options.mtu < kMinMtu || options.mtu > kMaxMtu) {
    throw UsageError(
        fmt::format("--mtu must be between {} and {}, got {}", kMinMtu, kMaxMtu, options.mtu));
  }
  if (!(options.wan_loss >= 0 && options.wan_loss < 1)) {
    throw UsageError(
        fmt::format("--loss must be at least 0 and below 1, got {}", options.wan_loss));
  }
  if (options.wan_queue_bytes &&
      *options.wan_queue_bytes < std::uint64_t(options.mtu + kEthernetHeader)) {
    throw UsageError(fmt::format("--queue must hold at least one frame ({} bytes), got {}",
                                 options.mtu + kEthernetHeader, *options.wan_queue_bytes));
  }
}

std::vector<SitePlan> plan_sites(const Platform& platform, const std::string& name) {
  std::vector<SitePlan> sites;
  for (int s = 0; s < platform.num_sites(); ++s) {
    sites.push_back({platform.sites[s].name, site_netns(name, s), "sitebr"});
  }
  return sites;
}

// The longest round trip a node of `site` sees: across its slowest WAN link, else its LAN.
double longest_rtt(const Platform& platform, int site) {
  double rtt = 2 * platform.sites[site].lan_latency_s;
  for (const WanLink& link : platform.wan_links) {
    if (link.site_a == site || link.site_b == site) rtt = std::max(rtt, 2 * link.latency_s);
  }
  return rtt;
}

NodePlan plan_node(const Platform& platform, const EmuOptions& options, int index,
                   int index_in_site) {
  const Node& node = platform.nodes[index];
  const double rtt = longest_rtt(platform, node.site);
  NodePlan plan{index, node.name, node.site, node.cores, node_netns(options.name, index), {}, 0};
  for (int l = 0; l < static_cast<int>(node.lanes.size()); ++l) {
    plan.lanes.push_back({fmt::format("lane{}", l), fmt::format("n{}l{}", index, l),
                          format_ipv4(lane_ipv4(node.site, index_in_site, l)),
                          format_mac(lane_mac(node.site, index_in_site, l)),
                          lane_shaping(node.lanes[l].up_bps, rtt, options.mtu),
                          lane_shaping(node.lanes[l].down_bps, rtt, options.mtu)});
  }
  plan.tcp_window_bytes = node_tcp_window(platform, node.site);
  return plan;
}

std::vector<NodePlan> plan_nodes(const Platform& platform, const EmuOptions& options) {
  std::vector<NodePlan> nodes;
  for (const Site& site : platform.sites) {
    for (int i = 0; i < static_cast<int>(site.nodes.size()); ++i) {
      nodes.push_back(plan_node(platform, options, site.nodes[i], i));
    }
  }
  std::sort(nodes.begin(), nodes.end(),
            [](const NodePlan& a, const NodePlan& b) { return a.index < b.index; });
  return nodes;
}

std::vector<WanPlan> plan_wans(const Platform& platform, const EmuOptions& options) {
  std::vector<WanPlan> wans;
  for (const WanLink& link : platform.wan_links) {
    WanPlan wan;
    wan.index = static_cast<int>(wans.size());
    wan.site_a = link.site_a;
    wan.site_b = link.site_b;
    wan.tap_a = fmt::format("wan{}", link.site_b);
    wan.tap_b = fmt::format("wan{}", link.site_a);
    wan.latency_s = link.latency_s;
    wan.bps = link.aggregate_bps;
    wan.queue_bytes = options.wan_queue_bytes.value_or(
        default_wan_queue(link.aggregate_bps, link.latency_s, options.mtu));
    wan.loss = options.wan_loss;
    wan.seed = options.seed + static_cast<std::uint64_t>(wan.index);
    wan.tcp_window_bytes = wan_tcp_window(link);
    wans.push_back(wan);
  }
  return wans;
}

}  // namespace

std::uint64_t wan_tcp_window(const WanLink& link) {
  double window = link.tcp_window_bytes;
  const double cap = link.connection_cap_bps(1);
  if (window <= 0 && std::isfinite(cap)) window = cap * 2 * link.latency_s;
  return static_cast<std::uint64_t>(std::llround(window));
}

std::uint64_t node_tcp_window(const Platform& platform, int site) {
  std::uint64_t window = 0;
  for (const WanLink& link : platform.wan_links) {
    if (link.site_a == site || link.site_b == site) window = std::max(window, wan_tcp_window(link));
  }
  return window;
}

std::uint64_t default_wan_queue(double bps, double latency_s, int mtu) {
  const double bdp = bps * 2 * latency_s;
  const double floor = 32.0 * (mtu + kEthernetHeader);
  return static_cast<std::uint64_t>(std::llround(std::max(bdp, floor)));
}

Shaping lane_shaping(double bps, double rtt_s, int mtu) {
  const double frame = mtu + kEthernetHeader;
  const double burst = std::max(2 * frame, bps * 0.5e-3);
  const double queue = std::max({bps * rtt_s, bps * 1e-3, 4 * burst});
  return {bps, static_cast<std::uint64_t>(std::llround(burst)),
          static_cast<std::uint64_t>(std::llround(queue))};
}

Plan make_plan(const Platform& platform, const EmuOptions& options) {
  check_limits(platform, options);
  Plan plan;
  plan.name = options.name;
  plan.platform_name = platform.name;
  plan.platform_source = platform.source;
  plan.mtu = options.mtu;
  plan.sites = plan_sites(platform, options.name);
  plan.nodes = plan_nodes(platform, options);
  plan.wans = plan_wans(platform, options);
  return plan;
}

// ---- JSON ----

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Shaping, bps, burst_bytes, queue_bytes)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(LanePlan, node_interface, site_interface, address, mac, up, down)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(NodePlan, index, name, site, cores, netns, lanes,
                                   tcp_window_bytes)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(SitePlan, name, netns, bridge)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(WanPlan, index, site_a, site_b, tap_a, tap_b, latency_s, bps,
                                   queue_bytes, loss, seed, tcp_window_bytes)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Plan, name, platform_name, platform_source, mtu, sites, nodes,
                                   wans)

nlohmann::json plan_to_json(const Plan& plan) {
  return plan;
}

Plan plan_from_json(const nlohmann::json& json) {
  try {
    return json.get<Plan>();
  } catch (const nlohmann::json::exception& e) {
    throw EmuError(fmt::format("emulation plan is malformed: {}", e.what()));
  }
}

}  // namespace multilane::emu
