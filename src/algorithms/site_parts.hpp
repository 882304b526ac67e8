// site_parts.hpp — the lanes of the site-aware exchanges (allgather and alltoall
// `multilane-sites`): every site's ranks, k lane leaders per site, and the parts of a site's
// ranks that each lane carries. A site's leaders are on as many of its nodes as they can be
// (each node's first rank, then each node's second, ...), so that k lanes cross on the NICs of
// k nodes where the site has them.
#pragma once

#include <vector>

#include "blocks.hpp"
#include "multilane/algorithms.hpp"

namespace multilane::algo {

struct SiteLanes {
  std::vector<std::vector<int>> sites;    // ranks by site, each in increasing rank order
  std::vector<int> site_of;               // rank -> index into sites
  int k = 1;                              // lanes
  std::vector<std::vector<int>> leaders;  // [site][i]: the rank that leads lane i
  std::vector<int> lane_of;               // rank -> the lane it leads, -1 for none
};

// k is BuildParams::wan_pairs when given, else the smallest site's rank count, at most that.
SiteLanes plan_site_lanes(const Platform& platform, const BuildParams& params);
// k, the lanes across the WAN (AlgorithmInfo::wan_pairs of both multilane-sites exchanges).
int site_lanes_wan_pairs(const Platform& platform, const BuildParams& params);

// The members of a site carried on each of k lanes: consecutive members, about equal bytes
// (by member count when they have no bytes).
std::vector<std::vector<int>> lane_parts(const std::vector<int>& members, int k,
                                         const BlockSizes& sizes);

}  // namespace multilane::algo
