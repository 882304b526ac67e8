#include "multilane/wan_pairs.hpp"

#include <algorithm>
#include <limits>
#include <numeric>
#include "support/ceil_div.hpp"

namespace multilane {

int wan_pairs_x(int n1, int pairs) {
  return ceil_div(n1, pairs);
}

int wan_pairs_y(int n0, int n1, int pairs) {
  return n0 >= n1 ? n0 + n1 - 1 - wan_pairs_x(n1, pairs) : n1 + pairs - 2;
}

int max_wan_pairs(const WanPairsInputs& in) {
  return std::max(1, std::min(in.n0, in.n1));
}

double wan_pairs_connection_bps(const WanPairsInputs& in, int pairs) {
  const double wan = in.link ? in.link->per_connection_bps(pairs) : in.lan_bps;
  return std::min(wan, in.lan_bps);
}

double wan_pairs_time(const WanPairsInputs& in, int pairs, std::uint64_t size) {
  const double m = static_cast<double>(size);
  return in.wan_latency_s + wan_pairs_x(in.n1, pairs) * m / wan_pairs_connection_bps(in, pairs) +
         wan_pairs_y(in.n0, in.n1, pairs) * m / in.lan_bps + in.overhead_s;
}

int optimal_wan_pairs(const WanPairsInputs& in, std::uint64_t size) {
  int best = 1;
  double best_time = std::numeric_limits<double>::infinity();
  for (int pairs = 1; pairs <= max_wan_pairs(in); ++pairs) {
    const double t = wan_pairs_time(in, pairs, size);
    if (t < best_time * (1 - 1e-12)) {
      best = pairs;
      best_time = t;
    }
  }
  return best;
}

namespace {
double node_bandwidth(const Platform& platform, int rank) {
  const auto& lanes = platform.nodes[platform.node_of(rank)].lanes;
  return std::accumulate(lanes.begin(), lanes.end(), 0.0, [](double sum, const Lane& l) {
    return sum + std::min(l.up_bps, l.down_bps);
  });
}
}  // namespace

WanPairsInputs wan_pairs_inputs(const Platform& platform, int root, int remote_site) {
  const int root_site = platform.site_of(root);
  WanPairsInputs in;
  in.n0 = static_cast<int>(platform.ranks_of_site(root_site).size());
  in.n1 = static_cast<int>(platform.ranks_of_site(remote_site).size());
  in.link = platform.wan_between(root_site, remote_site);
  in.wan_latency_s = in.link ? in.link->latency_s : 0;
  in.lan_bps = node_bandwidth(platform, root);
  in.overhead_s = platform.sites[root_site].lan_latency_s;
  return in;
}

}  // namespace multilane
