// reduce.cpp — reduce to a root, algorithms side by side: the tree shapes of the broadcasts
// reversed (binomial, binary, chain, two-tree, multilane; tree_reduce.hpp) and Rabenseifner's
// reduce-scatter followed by a binomial gather.
#include <vector>

#include "builders.hpp"
#include "rank_order.hpp"
#include "reduce_steps.hpp"
#include "tree_reduce.hpp"
#include "tree_shapes.hpp"

namespace multilane::algo {

namespace {

Schedule reduce_over(std::string name, const BuildParams& params, std::uint64_t segment,
                     const TreeSet& trees, int num_ranks) {
  return tree_reduce_schedule(std::move(name), num_ranks, params.root, params.size,
                              params.element_size, element_segment(segment, params.element_size),
                              tree_parts(trees, Buffer::Send, params.size, params.element_size));
}

std::uint64_t whole_vector(const BuildParams& params) {
  return std::max<std::uint64_t>(params.size, 1);
}

}  // namespace

Schedule reduce_binomial(const Platform& platform, const BuildParams& params) {
  return reduce_over("binomial", params, whole_vector(params),
                     binomial_trees(platform, params.root), platform.num_ranks());
}

Schedule reduce_binary(const Platform& platform, const BuildParams& params) {
  return reduce_over("binary", params, params.segment, binary_trees(platform, params.root),
                     platform.num_ranks());
}

Schedule reduce_chain(const Platform& platform, const BuildParams& params) {
  return reduce_over("chain", params, params.segment, chain_trees(platform, params.root),
                     platform.num_ranks());
}

Schedule reduce_two_tree(const Platform& platform, const BuildParams& params) {
  return reduce_over("two-tree", params, params.segment, dbtree_trees(platform, params.root),
                     platform.num_ranks());
}

Schedule reduce_multilane(const Platform& platform, const BuildParams& params) {
  return reduce_over("multilane", params, params.segment, multilane_trees(platform, params.root),
                     platform.num_ranks());
}

// Positions are ranks relative to the root. The p-q extras hand their vector to position
// v-q; the q = 2^k others reduce-scatter by recursive halving (position v ends with piece v),
// then gather the pieces to position 0 along a binomial tree (position v, with lowest set bit
// d, sends its pieces [v, v+d) to v-d once it has gathered them).
Schedule reduce_rabenseifner(const Platform& platform, const BuildParams& params) {
  const int p = platform.num_ranks();
  const int q = largest_power_of_two(p);
  const int root = params.root;
  const Pieces pieces = even_pieces(params.size, q, params.element_size);
  const auto rank_at = [&](int v) { return absolute_rank(v, root, p); };
  ScheduleBuilder b = reduction_builder(Collective::Reduce, "rabenseifner", p, params);
  const Range input{Buffer::Send, 0, params.size};
  for (int r = 0; r < p; ++r) {
    b.start_rank(r);
    const int v = relative_rank(r, root, p);
    if (v >= q) {
      b.send(rank_at(v - q), input, kAnyLane, {});
      continue;
    }
    const Buffer acc = v == 0 ? Buffer::Recv : Buffer::Scratch;
    if (acc == Buffer::Scratch) b.need_scratch(params.size);
    std::vector<OpIndex> ready{b.copy({acc, 0, params.size}, input, {})};
    if (v + q < p)
      ready.assign(1, b.recv_reduce(rank_at(v + q), {acc, 0, params.size}, kAnyLane, ready));
    ready = recursive_halving(b, q, v, rank_at, pieces, acc, ready);
    for (int d = 1; d < q; d <<= 1) {
      if (v & d) {
        b.send(rank_at(v - d), pieces.range(acc, v, v + d), kAnyLane, ready);
        break;
      }
      ready.push_back(b.recv(rank_at(v + d), pieces.range(acc, v + d, v + 2 * d), kAnyLane, ready));
    }
  }
  return b.finish();
}

}  // namespace multilane::algo
