// mpi/site_clustering.cpp — the gap, single linkage, the latencies (site_clustering.hpp).
#include "mpi/site_clustering.hpp"

#include <algorithm>
#include <limits>
#include <numeric>

namespace multilane::mpi {

namespace {

// The largest round trip that still joins two nodes into one site: below the first step up by
// kSiteGapFactor that ends above the floor, or infinity when there is none.
double joining_limit(const RoundTrips& trips) {
  std::vector<double> sorted;
  for (int a = 0; a < trips.nodes; ++a) {
    for (int b = a + 1; b < trips.nodes; ++b) sorted.push_back(trips.at(a, b));
  }
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 0; i + 1 < sorted.size(); ++i) {
    const double low = sorted[i];
    const double high = sorted[i + 1];
    if (high >= kSiteRoundTripFloor && high >= kSiteGapFactor * low) return low;
  }
  return std::numeric_limits<double>::infinity();
}

int find_root(std::vector<int>& parent, int node) {
  while (parent[static_cast<std::size_t>(node)] != node) {
    int& up = parent[static_cast<std::size_t>(node)];
    up = parent[static_cast<std::size_t>(up)];
    node = up;
  }
  return node;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t middle = values.size() / 2;
  return values.size() % 2 == 1 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
}

}  // namespace

SiteClusters cluster_sites(const RoundTrips& trips) {
  const double limit = joining_limit(trips);
  std::vector<int> parent(static_cast<std::size_t>(trips.nodes));
  std::iota(parent.begin(), parent.end(), 0);
  for (int a = 0; a < trips.nodes; ++a) {
    for (int b = a + 1; b < trips.nodes; ++b) {
      // The smaller root wins, so that a site's root is its first node.
      if (trips.at(a, b) > limit) continue;
      const int ra = find_root(parent, a);
      const int rb = find_root(parent, b);
      parent[static_cast<std::size_t>(std::max(ra, rb))] = std::min(ra, rb);
    }
  }
  SiteClusters out;
  std::vector<int> site_of_root(static_cast<std::size_t>(trips.nodes), -1);
  for (int node = 0; node < trips.nodes; ++node) {
    int& site = site_of_root[static_cast<std::size_t>(find_root(parent, node))];
    if (site < 0) site = static_cast<int>(out.lan_latency_s.size()), out.lan_latency_s.push_back(0);
    out.site_of_node.push_back(site);
  }
  const int sites = out.sites();
  std::vector<std::vector<double>> inside(static_cast<std::size_t>(sites));
  out.wan_latency_s.assign(static_cast<std::size_t>(sites * sites),
                           std::numeric_limits<double>::infinity());
  for (int a = 0; a < trips.nodes; ++a) {
    for (int b = a + 1; b < trips.nodes; ++b) {
      const int sa = out.site_of_node[static_cast<std::size_t>(a)];
      const int sb = out.site_of_node[static_cast<std::size_t>(b)];
      if (sa == sb) {
        inside[static_cast<std::size_t>(sa)].push_back(trips.at(a, b));
        continue;
      }
      for (const auto& [x, y] : {std::pair{sa, sb}, std::pair{sb, sa}}) {
        double& latency = out.wan_latency_s[static_cast<std::size_t>(x * sites + y)];
        latency = std::min(latency, trips.at(a, b) / 2);
      }
    }
  }
  for (int s = 0; s < sites; ++s) {
    out.wan_latency_s[static_cast<std::size_t>(s * sites + s)] = 0;
    if (!inside[static_cast<std::size_t>(s)].empty()) {
      out.lan_latency_s[static_cast<std::size_t>(s)] =
          median(inside[static_cast<std::size_t>(s)]) / 2;
    }
  }
  return out;
}

}  // namespace multilane::mpi
