#include "simgrid_platform.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>

#include "multilane/units.hpp"

namespace multilane::simgrid_peer {

namespace sg4 = simgrid::s4u;

namespace {

// Bandwidth of the links that stand for a non-blocking switch or an unlimited WAN: they carry
// latency only (FATPIPE, so each flow is bounded by it alone, far above any lane).
constexpr double kUnlimitedBps = 1e15;
// TCP-gamma when no WAN link caps a connection: gamma / (2 x latency) then bounds nothing.
constexpr double kNoWindowBytes = 1e20;

// The TCP window (gamma) that reproduces a WAN link's per-connection cap, or 0 when it has none.
// Adds a caveat when the cap cannot be one window: it varies with P, or the latency is zero.
double window_of(const Platform& platform, const WanLink& link, std::vector<std::string>& caveats) {
  const auto& a = platform.sites[link.site_a];
  const auto& b = platform.sites[link.site_b];
  const double cap = link.connection_cap_bps(1);
  if (!std::isfinite(cap)) return 0;
  const std::string name = fmt::format("{} <-> {}", a.name, b.name);
  if (link.latency_s <= 0) {
    caveats.push_back(
        fmt::format("{}: per-connection cap {} with zero latency: TCP-gamma bounds nothing then",
                    name, format_bandwidth(cap)));
    return 0;
  }
  // Every connection count the link may see: each node pair on every lane.
  int most = 1;
  for (const auto& site : {a, b}) {
    int lanes = 0;
    for (int n : site.nodes) lanes += static_cast<int>(platform.nodes[n].lanes.size());
    most = std::max(most, lanes);
  }
  double low = cap;
  double high = cap;
  for (int p = 2; p <= most; ++p) {
    low = std::min(low, link.connection_cap_bps(p));
    high = std::max(high, link.connection_cap_bps(p));
  }
  if (high > low * (1 + 1e-9)) {
    caveats.push_back(fmt::format(
        "{}: the per-connection cap varies with the number of connections ({} to {}); SimGrid's "
        "TCP-gamma is one window for all, set from the cap of one connection",
        name, format_bandwidth(low), format_bandwidth(high)));
  }
  return cap * 2 * link.latency_s;
}

// CM02 applies gamma to every flow, LAN flows too: a short LAN latency makes that bound high,
// but say so when it falls below one of the site's lanes.
void lan_bound_caveat(const Platform& platform, const Site& site, double gamma,
                      std::vector<std::string>& caveats) {
  if (site.lan_latency_s <= 0) return;
  const double bound = gamma / (2 * site.lan_latency_s);
  for (int n : site.nodes) {
    for (const auto& lane : platform.nodes[n].lanes) {
      if (bound < std::max(lane.up_bps, lane.down_bps)) {
        caveats.push_back(fmt::format(
            "TCP-gamma also bounds LAN flows of site {} at {} (below its lanes), which multilane's "
            "simulator does not",
            site.name, format_bandwidth(bound)));
        return;
      }
    }
  }
}

}  // namespace

SimGridSettings simgrid_settings(const Platform& platform) {
  SimGridSettings s;
  double gamma = 0;
  for (const auto& link : platform.wan_links) {
    const double window = window_of(platform, link, s.caveats);
    if (window <= 0) continue;
    if (gamma > 0 && std::abs(window - gamma) > 1e-9 * gamma) {
      s.caveats.push_back(fmt::format(
          "WAN links need different TCP windows ({} and {} bytes); SimGrid's TCP-gamma is global, "
          "the first one is used",
          gamma, window));
      continue;
    }
    if (gamma == 0) gamma = window;
  }
  s.tcp_gamma_bytes = gamma > 0 ? gamma : kNoWindowBytes;
  if (gamma > 0) {
    for (const auto& site : platform.sites) lan_bound_caveat(platform, site, gamma, s.caveats);
  }
  s.config = {"network/model:CM02", "network/crosstraffic:0",
              fmt::format("network/TCP-gamma:{}", s.tcp_gamma_bytes)};
  return s;
}

SimGridPlatform::SimGridPlatform(const Platform& platform) : platform_(platform) {
  sg4::NetZone* zone = sg4::create_full_zone("multilane");
  for (std::size_t n = 0; n < platform.nodes.size(); ++n) {
    const Node& node = platform.nodes[n];
    lane_base_.push_back(static_cast<int>(lane_hosts_.size()));
    for (std::size_t i = 0; i < node.lanes.size(); ++i) {
      const std::string name = fmt::format("node{}/lane{}", n, i);
      // Lane hosts never compute; their speed is irrelevant.
      lane_hosts_.push_back(zone->create_host(name, 1.0)->seal());
      lane_up_.push_back(zone->create_link(name + "-up", node.lanes[i].up_bps)->seal());
      lane_down_.push_back(zone->create_link(name + "-down", node.lanes[i].down_bps)->seal());
    }
    const SharedMemory& shm = platform.sites[node.site].shm;
    memory_hosts_.push_back(zone->create_host(fmt::format("node{}/memory", n), shm.copy_bps)
                                ->set_core_count(std::max(node.cores, 1))
                                ->seal());
  }
  for (std::size_t s = 0; s < platform.sites.size(); ++s) {
    site_lan_.push_back(zone->create_link(fmt::format("site{}-lan", s), kUnlimitedBps)
                            ->set_sharing_policy(sg4::Link::SharingPolicy::FATPIPE)
                            ->set_latency(platform.sites[s].lan_latency_s)
                            ->seal());
  }
  const std::size_t sites = platform.sites.size();
  wan_.assign(sites * sites, nullptr);
  for (std::size_t w = 0; w < platform.wan_links.size(); ++w) {
    const WanLink& link = platform.wan_links[w];
    for (const auto& [from, to] :
         {std::pair{link.site_a, link.site_b}, {link.site_b, link.site_a}}) {
      const bool unlimited = link.aggregate_bps <= 0;
      sg4::Link* l = zone->create_link(fmt::format("wan{}:site{}->site{}", w, from, to),
                                       unlimited ? kUnlimitedBps : link.aggregate_bps);
      if (unlimited) l->set_sharing_policy(sg4::Link::SharingPolicy::FATPIPE);
      wan_[std::size_t(from) * sites + std::size_t(to)] = l->set_latency(link.latency_s)->seal();
    }
  }
  for (std::size_t a = 0; a < platform.nodes.size(); ++a) {
    for (std::size_t b = 0; b < platform.nodes.size(); ++b) {
      if (a == b) continue;
      const int sa = platform.nodes[a].site;
      const int sb = platform.nodes[b].site;
      const sg4::Link* middle = sa == sb ? site_lan_[sa] : wan_[std::size_t(sa) * sites + sb];
      if (middle == nullptr) continue;
      const int lanes = static_cast<int>(
          std::min(platform.nodes[a].lanes.size(), platform.nodes[b].lanes.size()));
      for (int i = 0; i < lanes; ++i) {
        const int from = lane_base_[a] + i;
        const int to = lane_base_[b] + i;
        zone->add_route(lane_hosts_[from]->get_netpoint(), lane_hosts_[to]->get_netpoint(), nullptr,
                        nullptr,
                        {sg4::LinkInRoute(lane_up_[from]), sg4::LinkInRoute(middle),
                         sg4::LinkInRoute(lane_down_[to])},
                        false);
      }
    }
  }
  zone->seal();
}

bool SimGridPlatform::sites_connected(int site_a, int site_b) const {
  return site_a == site_b || wan_[std::size_t(site_a) * platform_.sites.size() + site_b] != nullptr;
}

}  // namespace multilane::simgrid_peer
