#include "multilane/platform.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

#include "platform/placement_check.hpp"

namespace multilane {

double WanLink::connection_cap_bps(int connections) const {
  double cap = std::numeric_limits<double>::infinity();
  if (!per_connection_table.empty()) {
    const auto& t = per_connection_table;  // sorted by connections (the reader sorts it)
    if (connections <= t.front().connections) {
      cap = t.front().bps;
    } else if (connections >= t.back().connections) {
      cap = t.back().bps;
    } else {
      auto hi = std::find_if(t.begin(), t.end(),
                             [&](const Point& p) { return p.connections >= connections; });
      auto lo = hi - 1;
      double f = double(connections - lo->connections) / double(hi->connections - lo->connections);
      cap = lo->bps + f * (hi->bps - lo->bps);
    }
  }
  if (tcp_window_bytes > 0 && latency_s > 0) {
    cap = std::min(cap, tcp_window_bytes / (2 * latency_s));
  }
  return cap;
}

double WanLink::per_connection_bps(int connections) const {
  connections = std::max(connections, 1);
  double share =
      aggregate_bps > 0 ? aggregate_bps / connections : std::numeric_limits<double>::infinity();
  return std::min(connection_cap_bps(connections), share);
}

const WanLink* Platform::wan_between(int site_a, int site_b) const {
  for (const auto& w : wan_links) {
    if ((w.site_a == site_a && w.site_b == site_b) || (w.site_a == site_b && w.site_b == site_a)) {
      return &w;
    }
  }
  return nullptr;
}

std::vector<int> Platform::ranks_of_site(int site) const {
  std::vector<int> out;
  for (int r = 0; r < num_ranks(); ++r) {
    if (site_of(r) == site) out.push_back(r);
  }
  return out;
}

int Platform::total_cores() const {
  int total = 0;
  for (const auto& n : nodes) total += n.cores;
  return total;
}

void Platform::place_block(int count) {
  if (count > total_cores()) {
    throw std::invalid_argument("cannot place " + std::to_string(count) + " ranks on " +
                                std::to_string(total_cores()) + " cores");
  }
  ranks.clear();
  for_each_block_place(nodes, static_cast<std::size_t>(std::max(count, 0)),
                       [&](const RankPlace& place) {
                         ranks.push_back(place);
                         return true;
                       });
}

int Platform::add_site(std::string site_name, double lan_latency_s) {
  Site site;
  site.name = std::move(site_name);
  site.lan_latency_s = lan_latency_s;
  sites.push_back(std::move(site));
  return num_sites() - 1;
}

int Platform::add_node(int site, std::string node_name, int cores, int lanes, double lane_bps) {
  Node node;
  node.name = std::move(node_name);
  node.site = site;
  node.cores = cores;
  node.lanes.assign(lanes, Lane{lane_bps, lane_bps, ""});
  nodes.push_back(std::move(node));
  const int index = static_cast<int>(nodes.size()) - 1;
  sites.at(site).nodes.push_back(index);
  return index;
}

void Platform::connect_all_sites(const WanLink& link) {
  for (int a = 0; a < num_sites(); ++a) {
    for (int b = a + 1; b < num_sites(); ++b) {
      WanLink w = link;
      w.site_a = a;
      w.site_b = b;
      wan_links.push_back(std::move(w));
    }
  }
}

Platform make_uniform_platform(int sites, int nodes_per_site, int lanes, int cores, double lane_bps,
                               double lan_latency_s, double wan_latency_s, double wan_aggregate_bps,
                               double wan_connection_bps) {
  Platform p;
  p.name = "uniform";
  p.source = "generated";
  for (int s = 0; s < sites; ++s) {
    const int site = p.add_site("site" + std::to_string(s), lan_latency_s);
    for (int n = 0; n < nodes_per_site; ++n) {
      p.add_node(site, p.sites[site].name + "-n" + std::to_string(n), cores, lanes, lane_bps);
    }
  }
  WanLink link;
  link.latency_s = wan_latency_s;
  link.aggregate_bps = wan_aggregate_bps;
  if (wan_connection_bps > 0) link.per_connection_table = {{1, wan_connection_bps}};
  p.connect_all_sites(link);
  p.place_block(p.total_cores());
  return p;
}

}  // namespace multilane
