// mpi/placement_key.cpp — placements as keys (placement_key.hpp).
#include "mpi/placement_key.hpp"

#include <fmt/format.h>
#include <xxhash.h>

#include <cstdint>
#include <set>
#include <vector>

namespace multilane::mpi {

PlacementKey placement_key(const Platform& platform) {
  const int ranks = platform.num_ranks();
  std::vector<std::int32_t> shape;
  shape.reserve(static_cast<std::size_t>(ranks) * 3);
  std::set<int> nodes, sites;
  for (int rank = 0; rank < ranks; ++rank) {
    shape.push_back(platform.site_of(rank));
    shape.push_back(platform.node_of(rank));
    shape.push_back(platform.lanes_of(rank));
    nodes.insert(platform.node_of(rank));
    sites.insert(platform.site_of(rank));
  }
  const std::uint64_t hash = XXH3_64bits(shape.data(), shape.size() * sizeof(std::int32_t));
  auto plural = [](std::size_t n, const char* one) {
    return fmt::format("{} {}{}", n, one, n == 1 ? "" : "s");
  };
  return {.fingerprint = fmt::format("{:016x}", hash),
          .words = fmt::format("{} on {} of {}", plural(static_cast<std::size_t>(ranks), "rank"),
                               plural(nodes.size(), "node"), plural(sites.size(), "site")),
          .ranks = ranks};
}

}  // namespace multilane::mpi
