// allreduce.cpp — allreduce algorithms side by side: recursive doubling (whole vectors, log p
// steps), the ring (reduce-scatter then allgather around a ring), Rabenseifner (recursive
// halving then recursive doubling), and reduce-then-broadcast down the two-tree and multilane
// trees, pipelined (tree_reduce.hpp).
#include <vector>

#include "builders.hpp"
#include "recursive_doubling.hpp"
#include "reduce_steps.hpp"
#include "tree_reduce.hpp"
#include "tree_shapes.hpp"

namespace multilane::algo {

namespace {

Range whole(Buffer buffer, const BuildParams& params) {
  return {buffer, 0, params.size};
}

ScheduleBuilder allreduce_builder(std::string name, int p, const BuildParams& params) {
  return reduction_builder(Collective::Allreduce, std::move(name), p, params);
}

Schedule allreduce_over(std::string name, const Platform& platform, const BuildParams& params,
                        const TreeSet& trees) {
  return tree_allreduce_schedule(std::move(name), platform.num_ranks(), params.root, params.size,
                                 params.element_size,
                                 element_segment(params.segment, params.element_size),
                                 tree_parts(trees, Buffer::Send, params.size, params.element_size));
}

}  // namespace

Schedule allreduce_recursive_doubling(const Platform& platform, const BuildParams& params) {
  const int p = platform.num_ranks();
  ScheduleBuilder b = allreduce_builder("recursive-doubling", p, params);
  for (int r = 0; r < p; ++r) {
    b.start_rank(r);
    const OpIndex own = b.copy(whole(Buffer::Recv, params), whole(Buffer::Send, params), {});
    if (largest_power_of_two(p) > 1 && r < largest_power_of_two(p)) b.need_scratch(params.size);
    recursive_doubling_allreduce(
        b, p, r, [](int v) { return v; }, whole(Buffer::Recv, params),
        whole(Buffer::Scratch, params), std::span<const OpIndex>(&own, 1));
  }
  return b.finish();
}

Schedule allreduce_ring(const Platform& platform, const BuildParams& params) {
  const int p = platform.num_ranks();
  const Pieces pieces = even_pieces(params.size, p, params.element_size);
  std::vector<int> ring(p);
  for (int r = 0; r < p; ++r) ring[r] = r;
  ScheduleBuilder b = allreduce_builder("ring", p, params);
  for (int r = 0; r < p; ++r) {
    b.start_rank(r);
    const auto input = [&](int j) { return pieces.range(Buffer::Send, j, j + 1); };
    const auto place = [&](int j) { return pieces.range(Buffer::Recv, j, j + 1); };
    const auto reduced = ring_reduce_scatter(b, ring, r, input, place, {});
    ring_allgather(b, ring, r, place, reduced);
  }
  return b.finish();
}

// The p-q extras hand their vector to position v-q and get the result back last; the q = 2^k
// others reduce-scatter by recursive halving and allgather by recursive doubling.
Schedule allreduce_rabenseifner(const Platform& platform, const BuildParams& params) {
  const int p = platform.num_ranks();
  const int q = largest_power_of_two(p);
  const Pieces pieces = even_pieces(params.size, q, params.element_size);
  const auto same = [](int v) { return v; };
  ChunkLayout layout;
  layout.positions = q;
  layout.rank_at = same;
  layout.chunks = [&](int first, int last) { return pieces.range(Buffer::Recv, first, last); };
  ScheduleBuilder b = allreduce_builder("rabenseifner", p, params);
  const Range all = whole(Buffer::Recv, params);
  for (int r = 0; r < p; ++r) {
    b.start_rank(r);
    if (r >= q) {
      const OpIndex sent = b.send(r - q, whole(Buffer::Send, params), kAnyLane, {});
      b.recv(r - q, all, kAnyLane, {sent});
      continue;
    }
    std::vector<OpIndex> ready{b.copy(all, whole(Buffer::Send, params), {})};
    if (r + q < p) ready.assign(1, b.recv_reduce(r + q, all, kAnyLane, ready));
    ready = recursive_halving(b, q, r, same, pieces, Buffer::Recv, ready);
    emit_recursive_doubling(b, r, layout, ready);
    if (r + q < p) {
      // Waits for everything: the last of the doubling's receives need not be the latest.
      std::vector<OpIndex> all_ops;
      for (OpIndex i = 0; i < b.ops_of_current_rank(); ++i) all_ops.push_back(i);
      b.send(r + q, all, kAnyLane, all_ops);
    }
  }
  return b.finish();
}

Schedule allreduce_two_tree(const Platform& platform, const BuildParams& params) {
  return allreduce_over("two-tree", platform, params, dbtree_trees(platform, params.root));
}

Schedule allreduce_multilane(const Platform& platform, const BuildParams& params) {
  return allreduce_over("multilane", platform, params, multilane_trees(platform, params.root));
}

}  // namespace multilane::algo
