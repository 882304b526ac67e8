// site_parts.hpp — the lanes of the site-aware exchanges (allgather and alltoall
// `multilane-sites`): every site's ranks, k lane leaders per site (its first k ranks), and the
// parts of a site's ranks that each lane carries.
#pragma once

#include <vector>

#include "blocks.hpp"
#include "multilane/algorithms.hpp"

namespace multilane::algo {

struct SiteLanes {
  std::vector<std::vector<int>> sites;  // ranks by site, each in increasing rank order
  std::vector<int> site_of;             // rank -> index into sites
  int k = 1;                            // lanes: leader i of a site is its rank sites[s][i]
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
