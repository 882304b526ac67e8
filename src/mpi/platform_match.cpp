// mpi/platform_match.cpp — placing ranks on a platform file's nodes by name or lane address
// (platform_match.hpp).
#include "mpi/platform_match.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdlib>
#include <map>

#include "mpi/host_identity.hpp"
#include "mpi/lane_discovery.hpp"
#include "multilane/errors.hpp"
#include "runtime/launch/address_book.hpp"

namespace multilane::mpi {

RankHost this_rank_host() {
  RankHost host;
  if (const char* id = std::getenv("MULTILANE_HOST_ID"); id != nullptr && *id != '\0') {
    host.name = id;
  } else {
    host.name = this_host().name;
  }
  for (const LocalLane& lane : interfaces_up()) host.addresses.push_back(lane.address);
  return host;
}

std::string rank_host_text(const RankHost& host) {
  return fmt::format("{}\n{}", host.name, runtime::join_addresses(host.addresses));
}

RankHost parse_rank_host(const std::string& text) {
  const std::size_t newline = text.find('\n');
  if (newline == std::string::npos) {
    throw CommunicationError(ErrorKind::protocol, "malformed host name from a peer");
  }
  return {.name = text.substr(0, newline),
          .addresses = runtime::split_addresses(text.substr(newline + 1))};
}

namespace {

// The file's node for `host`: by name, by short name, then by lane address; -1 when none.
int node_of_host(const Platform& file, const RankHost& host) {
  const std::string short_name = host.name.substr(0, host.name.find('.'));
  for (const std::string& name : {host.name, short_name}) {
    for (std::size_t n = 0; n < file.nodes.size(); ++n) {
      if (file.nodes[n].name == name) return static_cast<int>(n);
    }
  }
  for (std::size_t n = 0; n < file.nodes.size(); ++n) {
    for (const Lane& lane : file.nodes[n].lanes) {
      if (lane.address.empty()) continue;
      if (std::find(host.addresses.begin(), host.addresses.end(), lane.address) !=
          host.addresses.end()) {
        return static_cast<int>(n);
      }
    }
  }
  return -1;
}

}  // namespace

Platform place_on_file(const Platform& file, const std::string& path,
                       const std::vector<RankHost>& hosts) {
  Platform platform = file;
  platform.ranks.clear();
  std::string listed;
  for (std::size_t n = 0; n < platform.nodes.size(); ++n) {
    listed += (n == 0 ? "" : ", ") + platform.nodes[n].name;
  }
  std::vector<int> used(platform.nodes.size(), 0);
  for (std::size_t rank = 0; rank < hosts.size(); ++rank) {
    const int node = node_of_host(platform, hosts[rank]);
    if (node < 0) {
      throw UsageError(fmt::format(
          "MULTILANE_PLATFORM={}: rank {} runs on \"{}\", which is not a node of the file "
          "(nodes: {}), and none of the file's lane addresses is one of its host's ({}); name "
          "the nodes after the hosts, or set MULTILANE_HOST_ID per host",
          path, rank, hosts[rank].name, listed,
          hosts[rank].addresses.empty()
              ? "none"
              : fmt::format("{}", fmt::join(hosts[rank].addresses, ", "))));
    }
    const Node& spec = platform.nodes[static_cast<std::size_t>(node)];
    if (used[static_cast<std::size_t>(node)] == spec.cores) {
      throw UsageError(
          fmt::format("MULTILANE_PLATFORM={}: node \"{}\" has {} core(s), but more "
                      "ranks run on it (rank {} is one too many)",
                      path, spec.name, spec.cores, rank));
    }
    platform.ranks.push_back({node, used[static_cast<std::size_t>(node)]++});
  }
  return platform;
}

}  // namespace multilane::mpi
