// mpi/discovered_platform.cpp — nodes and sites from what the ranks gathered
// (discovered_platform.hpp).
#include "mpi/discovered_platform.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <map>

#include "multilane/errors.hpp"

namespace multilane::mpi {

std::string site_name() {
  const char* site = std::getenv("MULTILANE_SITE");
  return site == nullptr ? std::string() : std::string(site);
}

Platform discovered_platform(const std::vector<std::uint64_t>& hashes,
                             const std::vector<std::string>& sites) {
  if (hashes.size() != sites.size()) throw UsageError("host hashes and sites differ in number");
  Platform platform;
  platform.name = "mpi";
  platform.source = "discovered";
  std::map<std::string, int> site_of_name;
  std::map<std::uint64_t, int> node_of_hash;
  std::vector<int> first_rank;  // node -> its first rank
  for (std::size_t rank = 0; rank < hashes.size(); ++rank) {
    const std::string name = sites[rank].empty() ? "mpi" : sites[rank];
    auto site = site_of_name.find(name);
    if (site == site_of_name.end()) {
      site = site_of_name.emplace(name, platform.add_site(name, 20e-6)).first;
    }
    auto node = node_of_hash.find(hashes[rank]);
    if (node == node_of_hash.end()) {
      const int index =
          platform.add_node(site->second, fmt::format("host{}", node_of_hash.size()), 0, 1, 1.25e9);
      node = node_of_hash.emplace(hashes[rank], index).first;
      first_rank.push_back(static_cast<int>(rank));
    }
    Node& spec = platform.nodes[static_cast<std::size_t>(node->second)];
    if (spec.site != site->second) {
      const int first = first_rank[static_cast<std::size_t>(node->second)];
      throw UsageError(fmt::format(
          "MULTILANE_SITE: ranks {} and {} share a node but name different sites (\"{}\", \"{}\")",
          first, rank, sites[static_cast<std::size_t>(first)], sites[rank]));
    }
    platform.ranks.push_back({node->second, spec.cores++});
  }
  if (platform.num_sites() > 1) {
    WanLink link;
    link.latency_s = 5e-3;
    link.aggregate_bps = 1.25e9;
    link.tcp_window_bytes = 4 << 20;
    platform.connect_all_sites(link);
  }
  return platform;
}

}  // namespace multilane::mpi
