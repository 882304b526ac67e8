// site_parts.cpp — see site_parts.hpp.
#include "site_parts.hpp"

#include <algorithm>
#include <map>
#include <utility>

#include "rank_order.hpp"

namespace multilane::algo {

namespace {

// `members` (in rank order) ordered by their place among their node's members, then by rank:
// each node's first, then each node's second, ...
std::vector<int> spread_over_nodes(const Platform& platform, const std::vector<int>& members) {
  std::map<int, int> seen;  // node -> its members so far
  std::vector<std::pair<int, int>> keyed;
  for (int r : members) keyed.emplace_back(seen[platform.node_of(r)]++, r);
  std::sort(keyed.begin(), keyed.end());
  std::vector<int> order;
  for (const auto& [place, r] : keyed) order.push_back(r);
  return order;
}

}  // namespace

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
  lanes.lane_of.assign(static_cast<std::size_t>(platform.num_ranks()), -1);
  for (const std::vector<int>& members : lanes.sites) {
    lanes.leaders.push_back(spread_over_nodes(platform, members));
    lanes.leaders.back().resize(static_cast<std::size_t>(lanes.k));
    for (int i = 0; i < lanes.k; ++i) lanes.lane_of[lanes.leaders.back()[i]] = i;
  }
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
