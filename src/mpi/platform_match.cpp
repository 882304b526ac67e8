// mpi/platform_match.cpp — placing ranks on a platform file's nodes by name
// (platform_match.hpp).
#include "mpi/platform_match.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <map>

#include "mpi/host_identity.hpp"
#include "multilane/errors.hpp"

namespace multilane::mpi {

std::string node_name() {
  if (const char* id = std::getenv("MULTILANE_HOST_ID"); id != nullptr && *id != '\0') return id;
  return this_host().name;
}

Platform place_by_name(const Platform& file, const std::string& path,
                       const std::vector<std::string>& names) {
  Platform platform = file;
  platform.ranks.clear();
  std::map<std::string, int> node_of_name;
  std::string listed;
  for (std::size_t n = 0; n < platform.nodes.size(); ++n) {
    node_of_name.emplace(platform.nodes[n].name, static_cast<int>(n));
    listed += (n == 0 ? "" : ", ") + platform.nodes[n].name;
  }
  std::vector<int> used(platform.nodes.size(), 0);
  for (std::size_t rank = 0; rank < names.size(); ++rank) {
    const std::string& name = names[rank];
    auto it = node_of_name.find(name);
    if (it == node_of_name.end()) it = node_of_name.find(name.substr(0, name.find('.')));
    if (it == node_of_name.end()) {
      throw UsageError(fmt::format(
          "MULTILANE_PLATFORM={}: rank {} runs on \"{}\", which is not a node of the file "
          "(nodes: {}); name the nodes after the hosts, or set MULTILANE_HOST_ID per host",
          path, rank, name, listed));
    }
    const int node = it->second;
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
