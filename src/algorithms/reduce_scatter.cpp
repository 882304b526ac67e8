// reduce_scatter.cpp — reduce-scatter, algorithms side by side: the ring (p-1 steps, two blocks
// of room), pairwise (p-1 steps, each rank sending block r+k straight from its input to rank
// r+k), and recursive halving (log p steps over the whole vector, then every block to its
// owner). Blocks are equal (MPI_Reduce_scatter_block) or one size per rank (reduce-scatterv,
// MPI_Reduce_scatter: BuildParams::counts); every algorithm takes both.
#include <vector>

#include "builders.hpp"
#include "reduce_steps.hpp"

namespace multilane::algo {

namespace {

ScheduleBuilder reduce_scatter_builder(std::string name, int p, const BuildParams& params) {
  return reduction_builder(Collective::ReduceScatter, std::move(name), p, params);
}

}  // namespace

Schedule reduce_scatter_ring(const Platform& platform, const BuildParams& params) {
  const int p = platform.num_ranks();
  const Pieces blocks = reduce_scatter_blocks(params, p);
  const std::uint64_t largest = params.size;
  std::vector<int> ring(p);
  for (int r = 0; r < p; ++r) ring[r] = r;
  ScheduleBuilder b = reduce_scatter_builder("ring", p, params);
  for (int r = 0; r < p; ++r) {
    b.start_rank(r);
    if (p > 2) b.need_scratch(2 * largest);
    const auto input = [&](int j) { return blocks.range(Buffer::Send, j, j + 1); };
    // Piece j arrives in step (r-2-j) mod p; steps alternate between two slots of Scratch, and
    // the rank's own block (the last step's) lands in Recv.
    const auto place = [&](int j) {
      if (j == r) return Range{Buffer::Recv, 0, blocks.length(r)};
      const int step = ((r - 2 - j) % p + p) % p;
      return Range{Buffer::Scratch, static_cast<std::uint64_t>(step % 2) * largest,
                   blocks.length(j)};
    };
    ring_reduce_scatter(b, ring, r, input, place, {});
  }
  return b.finish();
}

Schedule reduce_scatter_pairwise(const Platform& platform, const BuildParams& params) {
  const int p = platform.num_ranks();
  const Pieces blocks = reduce_scatter_blocks(params, p);
  ScheduleBuilder b = reduce_scatter_builder("pairwise", p, params);
  for (int r = 0; r < p; ++r) {
    b.start_rank(r);
    const Range result{Buffer::Recv, 0, blocks.length(r)};
    OpIndex combined = b.copy(result, blocks.range(Buffer::Send, r, r + 1), {});
    for (int k = 1; k < p; ++k) {
      const int to = (r + k) % p;
      const int from = (r - k + p) % p;
      b.send(to, blocks.range(Buffer::Send, to, to + 1), kAnyLane, {});
      combined = b.recv_reduce(from, result, kAnyLane, {combined});
    }
  }
  return b.finish();
}

// The p-q extras hand their whole vector to rank v-q; the q = 2^k others halve over q pieces
// of whole blocks (piece v: blocks [v*p/q, (v+1)*p/q)) and then send every block of their piece
// to its owner.
Schedule reduce_scatter_recursive_halving(const Platform& platform, const BuildParams& params) {
  const int p = platform.num_ranks();
  const int q = largest_power_of_two(p);
  const Pieces blocks = reduce_scatter_blocks(params, p);
  const std::uint64_t all = blocks.bounds.back();
  const auto first_block = [&](int v) { return v * p / q; };
  Pieces pieces;
  for (int v = 0; v <= q; ++v) pieces.bounds.push_back(blocks.offset(first_block(v)));
  const auto same = [](int v) { return v; };
  ScheduleBuilder b = reduce_scatter_builder("recursive-halving", p, params);
  for (int r = 0; r < p; ++r) {
    b.start_rank(r);
    const Range result{Buffer::Recv, 0, blocks.length(r)};
    const int owner_of_mine = [&] {
      int v = 0;
      while (first_block(v + 1) <= r) ++v;
      return v;
    }();
    if (r >= q) {
      b.send(r - q, {Buffer::Send, 0, all}, kAnyLane, {});
      b.recv(owner_of_mine, result, kAnyLane, {});
      continue;
    }
    b.need_scratch(all);
    std::vector<OpIndex> ready{b.copy({Buffer::Scratch, 0, all}, {Buffer::Send, 0, all}, {})};
    if (r + q < p) {
      ready.assign(1, b.recv_reduce(r + q, {Buffer::Scratch, 0, all}, kAnyLane, ready));
    }
    ready = recursive_halving(b, q, r, same, pieces, Buffer::Scratch, ready);
    for (int block = first_block(r); block < first_block(r + 1); ++block) {
      const Range reduced = blocks.range(Buffer::Scratch, block, block + 1);
      if (block == r) {
        b.copy(result, reduced, ready);
      } else {
        b.send(block, reduced, kAnyLane, ready);
      }
    }
    if (owner_of_mine != r) b.recv(owner_of_mine, result, kAnyLane, {});
  }
  return b.finish();
}

}  // namespace multilane::algo
