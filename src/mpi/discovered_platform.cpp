// mpi/discovered_platform.cpp — nodes, lanes and sites from what the ranks gathered
// (discovered_platform.hpp).
#include "mpi/discovered_platform.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <map>

#include "multilane/errors.hpp"

namespace multilane::mpi {

namespace {

constexpr double kGuessedLanLatency = 20e-6;
constexpr double kGuessedLaneBps = 1.25e9;

WanLink guessed_wan_link() {
  WanLink link;
  link.latency_s = 5e-3;
  link.aggregate_bps = 1.25e9;
  link.tcp_window_bytes = 4 << 20;
  return link;
}

// Site of every node, from the names the ranks give; sites are added to `platform`.
std::vector<int> sites_by_name(const Discovery& found, Platform& platform) {
  const std::vector<int> node_of_rank = found.node_of_rank();
  const std::vector<int> first_rank = found.first_rank_of_nodes();
  std::map<std::string, int> site_of_name;
  std::vector<int> site_of_node(first_rank.size(), -1);
  for (std::size_t rank = 0; rank < node_of_rank.size(); ++rank) {
    const std::string name = found.site_names[rank].empty() ? "mpi" : found.site_names[rank];
    auto site = site_of_name.find(name);
    if (site == site_of_name.end()) {
      site = site_of_name.emplace(name, platform.add_site(name, kGuessedLanLatency)).first;
    }
    int& node_site = site_of_node[static_cast<std::size_t>(node_of_rank[rank])];
    if (node_site < 0) node_site = site->second;
    if (node_site != site->second) {
      const auto first =
          static_cast<std::size_t>(first_rank[static_cast<std::size_t>(node_of_rank[rank])]);
      throw UsageError(fmt::format(
          "MULTILANE_SITE: ranks {} and {} share a node but name different sites (\"{}\", \"{}\")",
          first, rank, found.site_names[first], found.site_names[rank]));
    }
  }
  if (platform.num_sites() > 1) platform.connect_all_sites(guessed_wan_link());
  return site_of_node;
}

// Site of every node, from the clusters of the round trips; sites and links are added.
std::vector<int> sites_by_round_trips(const RoundTrips& trips, Platform& platform) {
  const SiteClusters clusters = cluster_sites(trips);
  for (int s = 0; s < clusters.sites(); ++s) {
    const double measured = clusters.lan_latency_s[static_cast<std::size_t>(s)];
    platform.add_site(fmt::format("site{}", s), measured > 0 ? measured : kGuessedLanLatency);
  }
  for (int a = 0; a < clusters.sites(); ++a) {
    for (int b = a + 1; b < clusters.sites(); ++b) {
      WanLink link = guessed_wan_link();
      link.site_a = a;
      link.site_b = b;
      link.latency_s = clusters.wan_latency_s[static_cast<std::size_t>(a * clusters.sites() + b)];
      platform.wan_links.push_back(link);
    }
  }
  return clusters.site_of_node;
}

}  // namespace

std::vector<int> Discovery::node_of_rank() const {
  std::map<std::uint64_t, int> node_of_hash;
  std::vector<int> out;
  for (const std::uint64_t hash : hashes) {
    out.push_back(node_of_hash.emplace(hash, static_cast<int>(node_of_hash.size())).first->second);
  }
  return out;
}

std::vector<int> Discovery::first_rank_of_nodes() const {
  std::vector<int> out;
  const std::vector<int> nodes = node_of_rank();
  for (std::size_t rank = 0; rank < nodes.size(); ++rank) {
    if (static_cast<std::size_t>(nodes[rank]) == out.size()) out.push_back(static_cast<int>(rank));
  }
  return out;
}

bool Discovery::any_site_named() const {
  return std::any_of(site_names.begin(), site_names.end(),
                     [](const std::string& name) { return !name.empty(); });
}

std::string site_name() {
  const char* site = std::getenv("MULTILANE_SITE");
  return site == nullptr ? std::string() : std::string(site);
}

Platform discovered_platform(const Discovery& found) {
  if (found.hashes.size() != found.site_names.size() ||
      (!found.lanes.empty() && found.lanes.size() != found.hashes.size())) {
    throw UsageError("host hashes, sites and lanes differ in number");
  }
  Platform platform;
  platform.name = "mpi";
  platform.source = "discovered";
  platform.rates_guessed = true;
  const std::vector<int> first_rank = found.first_rank_of_nodes();
  std::vector<int> site_of_node;
  if (found.any_site_named() || !found.round_trips) {
    site_of_node = sites_by_name(found, platform);
  } else {
    site_of_node = sites_by_round_trips(*found.round_trips, platform);
  }
  const bool one_node = first_rank.size() == 1;
  for (std::size_t node = 0; node < first_rank.size(); ++node) {
    const auto first = static_cast<std::size_t>(first_rank[node]);
    const std::vector<LocalLane> none;
    const std::vector<LocalLane>& lanes =
        one_node || found.lanes.empty() ? none : found.lanes[first];
    const int index =
        platform.add_node(site_of_node[node], fmt::format("host{}", node), 0,
                          std::max<int>(1, static_cast<int>(lanes.size())), kGuessedLaneBps);
    Node& spec = platform.nodes[static_cast<std::size_t>(index)];
    for (std::size_t lane = 0; lane < lanes.size(); ++lane) {
      spec.lanes[lane].address = lanes[lane].address;
      spec.lanes[lane].up_bps = spec.lanes[lane].down_bps = lanes[lane].bps;
    }
  }
  for (const int node : found.node_of_rank()) {
    Node& spec = platform.nodes[static_cast<std::size_t>(node)];
    platform.ranks.push_back({node, spec.cores++});
  }
  return platform;
}

std::string summarize_platform(const Platform& platform) {
  std::size_t fewest = ~std::size_t{0}, most = 0;
  for (const Node& node : platform.nodes) {
    fewest = std::min(fewest, node.lanes.size());
    most = std::max(most, node.lanes.size());
  }
  const std::string lanes =
      fewest == most ? fmt::format("{}", most) : fmt::format("{}-{}", fewest, most);
  std::string sites;
  for (const Site& site : platform.sites) {
    sites += fmt::format("{}{}: {} node(s), {:.3g} ms one way", sites.empty() ? "" : "; ",
                         site.name, site.nodes.size(), site.lan_latency_s * 1e3);
  }
  for (const WanLink& link : platform.wan_links) {
    sites += fmt::format(
        "; {}-{}: {:.3g} ms one way", platform.sites[static_cast<std::size_t>(link.site_a)].name,
        platform.sites[static_cast<std::size_t>(link.site_b)].name, link.latency_s * 1e3);
  }
  return fmt::format("{} ranks, {} node(s) of {} lane(s), {} site(s) ({}); platform: {}",
                     platform.num_ranks(), platform.nodes.size(), lanes, platform.num_sites(),
                     sites, platform.source);
}

}  // namespace multilane::mpi
