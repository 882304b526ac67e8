// bcast_trees.cpp — the classic broadcast trees, side by side: linear, chain, binary,
// binomial, NCCL's double binary tree and MagPIe's site tree. Each is only a tree; the
// schedule comes from the shared engine in tree_broadcast.cpp.
//
// dbtree for p = 8, root 0: two in-order trees over the 7 non-root ranks, each carrying half
// the message. With an odd count the second tree is the first with every position shifted by
// one (x -> x mod 7 + 1); with an even count it is the first mirrored. A rank is an inner node
// in at most one tree (A: 4, 2, 6; B: 5, 3, 7), so it sends at most two halves in all:
//
//        tree A (first half)          tree B (second half)
//              0                             0
//              |                             |
//              4                             5
//            /   \                         /   \     inner nodes
//           2     6                       3     7
//          / \   / \                     / \   / \   leaves
//         1   3 5   7                   2   4 6   1
#include <algorithm>
#include <vector>

#include "builders.hpp"
#include "lane_coloring.hpp"
#include "rank_order.hpp"
#include "tree_broadcast.hpp"
#include "tree_shapes.hpp"

namespace multilane::algo {

namespace {

// Non-pipelined algorithms send the whole message at once.
std::uint64_t whole_message(const BuildParams& params) {
  return std::max<std::uint64_t>(params.size, 1);
}

// Broadcasts along the trees, tree i carrying the i-th part of the message.
Schedule broadcast_over(std::string name, const Platform& platform, const BuildParams& params,
                        std::uint64_t segment, const TreeSet& trees) {
  return tree_broadcast_schedule(std::move(name), platform.num_ranks(), params.root, params.size,
                                 segment, tree_parts(trees, Buffer::Recv, params.size));
}

// The root first hands the whole message to one representative per remote site, one site
// after the other and over all its lanes; then every site runs `local` from its
// representative (the root's site only once the remote sends are done). This is how the
// broadcast paper runs binary and binomial trees on several sites (section 6).
template <typename LocalTree>
void add_site_tree(Tree& tree, const Platform& platform, int root, LocalTree local) {
  const auto groups = ranks_by_site(platform, root);
  int phase = 0;
  for (std::size_t s = 1; s < groups.size(); ++s) {
    tree.add_edge(root, groups[s].front(), phase++, EdgeLanes::Striped);
  }
  for (std::size_t s = 1; s < groups.size(); ++s) local(tree, groups[s], 0);
  local(tree, groups[0], phase);
}

}  // namespace

TreeSet finish_trees(const Platform& platform, std::vector<Tree> trees) {
  std::vector<Tree*> pointers;
  for (Tree& t : trees) {
    t.finalize();
    pointers.push_back(&t);
  }
  assign_lanes(pointers, platform);
  return {std::move(trees)};
}

std::vector<TreePart> tree_parts(const TreeSet& set, Buffer buffer, std::uint64_t size,
                                 std::uint64_t element_size) {
  const std::uint64_t n = set.trees.size();
  const std::uint64_t elements = size / element_size;
  std::vector<TreePart> parts;
  std::uint64_t offset = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::uint64_t count = elements / n + (i < elements % n ? 1 : 0);
    parts.push_back({&set.trees[i], Range{buffer, offset, count * element_size}});
    offset += count * element_size;
  }
  return parts;
}

TreeSet linear_trees(const Platform& platform, int root) {
  const int p = platform.num_ranks();
  Tree tree(p, root);
  add_flat(tree, relative_order(p, root));
  return finish_trees(platform, {std::move(tree)});
}

TreeSet chain_trees(const Platform& platform, int root) {
  Tree tree(platform.num_ranks(), root);
  add_chain(tree, site_grouped_order(platform, root));
  return finish_trees(platform, {std::move(tree)});
}

TreeSet binary_trees(const Platform& platform, int root) {
  Tree tree(platform.num_ranks(), root);
  add_site_tree(tree, platform, root, [](Tree& t, std::span<const int> order, int phase) {
    add_binary_heap(t, order, phase);
  });
  return finish_trees(platform, {std::move(tree)});
}

TreeSet binomial_trees(const Platform& platform, int root) {
  const int p = platform.num_ranks();
  Tree tree(p, root);
  add_binomial(tree, relative_order(p, root));
  return finish_trees(platform, {std::move(tree)});
}

TreeSet site_binomial_trees(const Platform& platform, int root) {
  Tree tree(platform.num_ranks(), root);
  add_site_tree(tree, platform, root, [](Tree& t, std::span<const int> order, int phase) {
    add_binomial(t, order, phase);
  });
  return finish_trees(platform, {std::move(tree)});
}

Schedule bcast_linear(const Platform& platform, const BuildParams& params) {
  return broadcast_over("linear", platform, params, whole_message(params),
                        linear_trees(platform, params.root));
}

Schedule bcast_chain(const Platform& platform, const BuildParams& params) {
  return broadcast_over("chain", platform, params, params.segment,
                        chain_trees(platform, params.root));
}

Schedule bcast_binary(const Platform& platform, const BuildParams& params) {
  return broadcast_over("binary", platform, params, params.segment,
                        binary_trees(platform, params.root));
}

Schedule bcast_binomial(const Platform& platform, const BuildParams& params) {
  return broadcast_over("binomial", platform, params, whole_message(params),
                        binomial_trees(platform, params.root));
}

Schedule bcast_site_binomial(const Platform& platform, const BuildParams& params) {
  return broadcast_over("site-binomial", platform, params, whole_message(params),
                        site_binomial_trees(platform, params.root));
}

namespace {

// In-order binary tree over positions 1..n (NCCL's "btree"): position x with lowest set bit h
// has children x - h/2 and the largest x + h/2^k <= n. Odd positions are the leaves.
void add_inorder_tree(Tree& tree, int n, auto rank_at) {
  for (int x = 2; x <= n; x += 2) {
    const int h = x & -x;
    tree.add_edge(rank_at(x), rank_at(x - h / 2));
    for (int d = h / 2; d >= 1; d /= 2) {
      if (x + d <= n) {
        tree.add_edge(rank_at(x), rank_at(x + d));
        break;
      }
    }
  }
}

int inorder_root(int n) {
  int r = 1;
  while (r * 2 <= n) r *= 2;
  return r;
}

}  // namespace

TreeSet dbtree_trees(const Platform& platform, int root) {
  // Two trees over the n = p-1 non-root ranks, each carrying half the message; the second is
  // the first mirrored (n even) or shifted by one (n odd), so that a rank is an inner node in
  // at most one tree and sends at most two halves in all.
  const int p = platform.num_ranks();
  const int n = p - 1;
  auto first = [&](int x) { return absolute_rank(x, root, p); };
  auto second = [&](int x) {
    const int y = (n % 2 == 0) ? n + 1 - x : x % n + 1;
    return absolute_rank(y, root, p);
  };
  Tree a(p, root);
  Tree b(p, root);
  if (n >= 1) {
    a.add_edge(root, first(inorder_root(n)));
    b.add_edge(root, second(inorder_root(n)));
    add_inorder_tree(a, n, first);
    add_inorder_tree(b, n, second);
  }
  std::vector<Tree> trees;
  trees.push_back(std::move(a));
  trees.push_back(std::move(b));
  return finish_trees(platform, std::move(trees));
}

Schedule bcast_dbtree(const Platform& platform, const BuildParams& params) {
  return broadcast_over("dbtree", platform, params, params.segment,
                        dbtree_trees(platform, params.root));
}

}  // namespace multilane::algo
