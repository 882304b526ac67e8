// site_parts.cpp — see site_parts.hpp.
#include "site_parts.hpp"

#include <algorithm>

#include "rank_order.hpp"

namespace multilane::algo {

SiteLanes plan_site_lanes(const Platform& platform, const BuildParams& params) {
  SiteLanes lanes;
  lanes.sites = ranks_by_site(platform, 0);
  lanes.site_of.assign(static_cast<std::size_t>(platform.num_ranks()), 0);
  std::size_t smallest = lanes.sites.front().size();
  for (std::size_t s = 0; s < lanes.sites.size(); ++s) {
    std::sort(lanes.sites[s].begin(), lanes.sites[s].end());
    for (int r : lanes.sites[s]) lanes.site_of[r] = static_cast<int>(s);
    smallest = std::min(smallest, lanes.sites[s].size());
  }
  lanes.k = static_cast<int>(smallest);
  if (params.wan_pairs > 0) lanes.k = std::min(lanes.k, params.wan_pairs);
  return lanes;
}

int site_lanes_wan_pairs(const Platform& platform, const BuildParams& params) {
  return plan_site_lanes(platform, params).k;
}

std::vector<std::vector<int>> lane_parts(const std::vector<int>& members, int k,
                                         const BlockSizes& sizes) {
  std::vector<std::vector<int>> parts(static_cast<std::size_t>(k));
  const std::uint64_t total = sizes.of(members);
  std::uint64_t before = 0;
  const auto n = static_cast<std::uint64_t>(members.size());
  for (std::size_t j = 0; j < members.size(); ++j) {
    const std::uint64_t bytes = sizes.of(members[j]);
    // The lane of the member's middle byte (or of its index, without bytes).
    const std::uint64_t lane =
        total > 0 ? (2 * before + bytes) * k / (2 * total) : static_cast<std::uint64_t>(j) * k / n;
    parts[std::min<std::uint64_t>(lane, k - 1)].push_back(members[j]);
    before += bytes;
  }
  return parts;
}

}  // namespace multilane::algo
