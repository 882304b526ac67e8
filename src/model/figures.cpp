#include "model/figures.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace multilane::model {

int ceil_log2(int n) {
  int k = 0;
  while ((1 << k) < n) ++k;
  return k;
}

int floor_log2(int n) {
  int k = 0;
  while ((2 << k) <= n) ++k;
  return n <= 1 ? 0 : k;
}

double Figures::wan_rate(int connections, int concurrent) const {
  double rate = std::min(node_bps, lane_bps * connections);
  if (wan) {
    const int total = std::max(1, connections * concurrent);
    rate = std::min(rate, connections * wan->connection_cap_bps(total));
    if (wan->aggregate_bps > 0) rate = std::min(rate, wan->aggregate_bps / concurrent);
  }
  return rate;
}

Figures figures_of(const Platform& platform, int root, double overhead_s) {
  Figures f;
  f.p = platform.num_ranks();
  f.overhead_s = overhead_s;
  const int root_site = platform.site_of(root);
  for (int k = 0; k < platform.num_sites(); ++k) {
    const int s = (root_site + k) % platform.num_sites();
    const int n = static_cast<int>(platform.ranks_of_site(s).size());
    if (n == 0) continue;
    f.site_ranks.push_back(n);
    if (k > 0 && !f.wan) f.wan = platform.wan_between(root_site, s);
  }
  const auto& lanes = platform.nodes[platform.node_of(root)].lanes;
  f.lanes = static_cast<int>(lanes.size());
  f.lane_bps = std::numeric_limits<double>::infinity();
  for (const auto& l : lanes) {
    const double bps = std::min(l.up_bps, l.down_bps);
    f.lane_bps = std::min(f.lane_bps, bps);
    f.node_bps += bps;
  }
  f.lan_s = platform.sites[root_site].lan_latency_s;
  f.reduce_bps = platform.sites[root_site].shm.reduce_bps;
  f.wan_s = f.wan ? f.wan->latency_s : 0;
  return f;
}

double pipeline(const Figures& f, int hops, int wan_hops, double rate, std::uint64_t size,
                std::uint64_t segment) {
  if (hops <= 0) return 0;
  const double m = static_cast<double>(size);
  const double s = segment == 0 ? m : std::min<double>(m, static_cast<double>(segment));
  const double n = s > 0 ? std::ceil(m / s) : 1;
  return (hops - wan_hops) * f.lan_s + wan_hops * f.wan_s + (hops - 1) * (f.overhead_s + s / rate) +
         n * f.overhead_s + m / rate;
}

}  // namespace multilane::model

namespace multilane::model {

int remote_site(const Platform& platform, int root) {
  const int root_site = platform.site_of(root);
  for (int k = 1; k < platform.num_sites(); ++k) {
    const int s = (root_site + k) % platform.num_sites();
    if (!platform.ranks_of_site(s).empty()) return s;
  }
  return root_site;
}

}  // namespace multilane::model
