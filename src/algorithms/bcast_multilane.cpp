// bcast_multilane.cpp — the multi-lane broadcast of Chiba, Endo and Matsuoka (CCGrid 2007).
//
// The message is split into halves M_A and M_B. The non-root ranks of a site are split into
// groups A and B, each a heap-shaped binary tree (Tree_A, Tree_B). M_A flows root -> A_1 ->
// down Tree_A; the leaves of Tree_A, whose two uplinks are otherwise idle, send M_A on to every
// node of group B (leaf A_{n+i} feeds B_{2i+1} and B_{2i+2}). M_B flows the mirror way. Every
// node then receives on two lanes and, but for a few, sends on two lanes: all bandwidth is used.
//
// Generalised to every p (the paper needs p = 4n-1): with a = ceil(m/2) and b = floor(m/2)
// nodes in the groups of an m-node site, Tree_A has a+1 free sending slots (two per leaf, one
// on a half-full inner node) for the b nodes of B, and Tree_B has b+1 >= a for A's nodes;
// exactly two slots are left over in every site. Multi-site (section 3.2): sites are chained,
// those two spare slots (the paper's A_{2n-1} and B_{2n-1}) feeding the two tree roots of the
// next site, so each WAN link carries M once, in two streams.
//
// What add_site() builds for p = 8 on one site, root 0: A = {1, 2, 3, 4}, B = {5, 6, 7}.
// The upper edges are the heaps, the lower ones the swap stage (a leaf of one tree feeding the
// other group); every non-root rank receives M_A once and M_B once:
//
//        tree A carries M_A            tree B carries M_B
//               0                             0
//               |                             |
//               1                             5
//             /   \                         /   \     (heaps)
//            2     3                       6     7
//            |    / \    swap: A's        / \   / \   swap: B's
//            4   5   6   leaves feed B   1   2 3   4   leaves feed A
//            |
//            7
//
// The spare slots are 4 (its second) and 2 (the inner node with one child).
//
// multilane-sites chains the sites through those spare slots. 2 sites x 4 nodes, root 0,
// site 0 = {0, 1, 2, 3}, site 1 = {4, 5, 6, 7}:
//
//            site 0                              site 1
//   M_A:  0 -> 1 -> 2 -> 3          2 ==WAN==> 4 -> 5 -> 6, 7
//   M_B:  0 -> 3 -> 1, 2            1 ==WAN==> 6 -> 7 -> 4, 5
//
// Site 0 leaves 2 (M_A) and 1 (M_B) spare, which cross the WAN to the roots of site 1's trees;
// site 1 leaves 4 and 6 for a third site. Each WAN hop moves the message once, as two halves
// on two node pairs.
#include <vector>

#include "builders.hpp"
#include "lane_coloring.hpp"
#include "rank_order.hpp"
#include "tree_broadcast.hpp"
#include "tree_shapes.hpp"

namespace multilane::algo {

namespace {

// Free sending slots of a heap-shaped binary tree over `group`, leaves first (two each, in
// heap order), then the inner node that has a single child.
std::vector<int> free_slots(const std::vector<int>& group) {
  const std::size_t n = group.size();
  std::vector<int> slots;
  for (std::size_t i = n / 2; i < n; ++i) slots.insert(slots.end(), 2, group[i]);
  if (n >= 2 && n % 2 == 0) slots.push_back(group[(n - 2) / 2]);
  return slots;
}

struct Exits {
  int a;  // the rank that forwards M_A to the next site
  int b;  // the rank that forwards M_B to the next site
};

// Adds one site's two trees, fed by `from`; returns the two spare slots for the next site.
Exits add_site(Tree& tree_a, Tree& tree_b, const std::vector<int>& members, Exits from) {
  const std::size_t a_size = (members.size() + 1) / 2;
  const std::vector<int> group_a(members.begin(), members.begin() + a_size);
  const std::vector<int> group_b(members.begin() + a_size, members.end());

  tree_a.add_edge(from.a, group_a.front());
  tree_b.add_edge(from.b, group_b.empty() ? group_a.front() : group_b.front());
  add_binary_heap(tree_a, group_a);
  add_binary_heap(tree_b, group_b);

  // Swap stage: each group's free slots feed the other group its half.
  const auto slots_a = free_slots(group_a);
  const auto slots_b = free_slots(group_b);
  for (std::size_t i = 0; i < group_b.size(); ++i) tree_a.add_edge(slots_a[i], group_b[i]);
  if (!group_b.empty()) {
    for (std::size_t i = 0; i < group_a.size(); ++i) tree_b.add_edge(slots_b[i], group_a[i]);
  }

  std::vector<int> spare(slots_a.begin() + group_b.size(), slots_a.end());
  if (!group_b.empty()) spare.insert(spare.end(), slots_b.begin() + group_a.size(), slots_b.end());
  return {spare.at(0), spare.at(1)};
}

// Both trees over the given groups of non-root ranks, chained group after group.
TreeSet multilane_over_groups(const Platform& platform, int root,
                              const std::vector<std::vector<int>>& groups) {
  const int p = platform.num_ranks();
  Tree tree_a(p, root);
  Tree tree_b(p, root);
  Exits exits{root, root};
  for (const auto& members : groups) {
    if (!members.empty()) exits = add_site(tree_a, tree_b, members, exits);
  }
  std::vector<Tree> trees;
  trees.push_back(std::move(tree_a));
  trees.push_back(std::move(tree_b));
  return finish_trees(platform, std::move(trees));
}

Schedule broadcast_over(std::string name, const Platform& platform, const BuildParams& params,
                        const TreeSet& trees) {
  return tree_broadcast_schedule(std::move(name), platform.num_ranks(), params.root, params.size,
                                 params.segment, tree_parts(trees, Buffer::Recv, params.size));
}

}  // namespace

TreeSet multilane_trees(const Platform& platform, int root) {
  auto order = relative_order(platform.num_ranks(), root);
  order.erase(order.begin());  // the root
  return multilane_over_groups(platform, root, {order});
}

TreeSet multilane_sites_trees(const Platform& platform, int root) {
  auto groups = ranks_by_site(platform, root);
  groups.front().erase(groups.front().begin());  // the root heads its site's group
  return multilane_over_groups(platform, root, groups);
}

Schedule bcast_multilane(const Platform& platform, const BuildParams& params) {
  return broadcast_over("multilane", platform, params, multilane_trees(platform, params.root));
}

Schedule bcast_multilane_sites(const Platform& platform, const BuildParams& params) {
  return broadcast_over("multilane-sites", platform, params,
                        multilane_sites_trees(platform, params.root));
}

}  // namespace multilane::algo
