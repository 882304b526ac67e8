// rank_order.hpp — orders of ranks that algorithms are defined over.
//
// MPI-style algorithms are written for root 0 and applied to "relative ranks"
// (rank - root) mod p; grid-aware ones walk sites starting with the root's site.
#pragma once

#include <algorithm>
#include <vector>

#include "multilane/platform.hpp"

namespace multilane::algo {

inline int relative_rank(int rank, int root, int p) {
  return (rank - root + p) % p;
}
inline int absolute_rank(int relative, int root, int p) {
  return (relative + root) % p;
}

// The number of positions in the binomial subtree rooted at relative rank v.
inline int subtree_span(int v, int p) {
  return v == 0 ? p : std::min(v & -v, p - v);
}

// Ranks in relative order: root, root+1, ..., wrapping around.
std::vector<int> relative_order(int p, int root);

// Sites in visiting order: the root's site first, then the others in increasing index,
// wrapping around. Sites without ranks are skipped.
std::vector<int> site_order(const Platform& platform, int root);

// For each site in site_order, its ranks in relative order (the root first in its site).
std::vector<std::vector<int>> ranks_by_site(const Platform& platform, int root);

// All ranks grouped by site: the concatenation of ranks_by_site (so the WAN is crossed once
// per site by a chain over this order).
std::vector<int> site_grouped_order(const Platform& platform, int root);

}  // namespace multilane::algo
