#include "rank_order.hpp"

namespace multilane::algo {

std::vector<int> relative_order(int p, int root) {
  std::vector<int> order(p);
  for (int v = 0; v < p; ++v) order[v] = absolute_rank(v, root, p);
  return order;
}

std::vector<int> site_order(const Platform& platform, int root) {
  const int sites = platform.num_sites();
  std::vector<bool> has_ranks(sites, false);
  for (int r = 0; r < platform.num_ranks(); ++r) has_ranks[platform.site_of(r)] = true;
  std::vector<int> order;
  const int first = platform.site_of(root);
  for (int i = 0; i < sites; ++i) {
    const int s = (first + i) % sites;
    if (has_ranks[s]) order.push_back(s);
  }
  return order;
}

std::vector<std::vector<int>> ranks_by_site(const Platform& platform, int root) {
  const int p = platform.num_ranks();
  const auto sites = site_order(platform, root);
  std::vector<int> slot(platform.num_sites(), -1);
  for (std::size_t i = 0; i < sites.size(); ++i) slot[sites[i]] = static_cast<int>(i);
  std::vector<std::vector<int>> groups(sites.size());
  for (int r : relative_order(p, root)) groups[slot[platform.site_of(r)]].push_back(r);
  return groups;
}

std::vector<int> site_grouped_order(const Platform& platform, int root) {
  std::vector<int> order;
  for (const auto& group : ranks_by_site(platform, root)) {
    order.insert(order.end(), group.begin(), group.end());
  }
  return order;
}

}  // namespace multilane::algo
