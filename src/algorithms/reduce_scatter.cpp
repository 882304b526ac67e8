// reduce_scatter.cpp — reduce-scatter with equal blocks (MPI_Reduce_scatter_block), algorithms
// side by side: the ring (p-1 steps, two blocks of room), pairwise (p-1 steps, each rank
// sending block r+k straight from its input to rank r+k), and recursive halving (log p steps
// over the whole vector, then every block to its owner).
#include <vector>

#include "builders.hpp"
#include "reduce_steps.hpp"

namespace multilane::algo {

namespace {

ScheduleBuilder reduce_scatter_builder(std::string name, int p, const BuildParams& params) {
  return reduction_builder(Collective::ReduceScatter, std::move(name), p, params);
}

Range block_of(Buffer buffer, int block, std::uint64_t size) {
  return {buffer, static_cast<std::uint64_t>(block) * size, size};
}

}  // namespace

Schedule reduce_scatter_ring(const Platform& platform, const BuildParams& params) {
  const int p = platform.num_ranks();
  const std::uint64_t size = params.size;
  std::vector<int> ring(p);
  for (int r = 0; r < p; ++r) ring[r] = r;
  ScheduleBuilder b = reduce_scatter_builder("ring", p, params);
  for (int r = 0; r < p; ++r) {
    b.start_rank(r);
    if (p > 2) b.need_scratch(2 * size);
    const auto input = [&](int j) { return block_of(Buffer::Send, j, size); };
    // Piece j arrives in step (r-2-j) mod p; steps alternate between two slots of Scratch, and
    // the rank's own block (the last step's) lands in Recv.
    const auto place = [&](int j) {
      if (j == r) return Range{Buffer::Recv, 0, size};
      const int step = ((r - 2 - j) % p + p) % p;
      return block_of(Buffer::Scratch, step % 2, size);
    };
    ring_reduce_scatter(b, ring, r, input, place, {});
  }
  return b.finish();
}

Schedule reduce_scatter_pairwise(const Platform& platform, const BuildParams& params) {
  const int p = platform.num_ranks();
  const std::uint64_t size = params.size;
  ScheduleBuilder b = reduce_scatter_builder("pairwise", p, params);
  for (int r = 0; r < p; ++r) {
    b.start_rank(r);
    const Range result{Buffer::Recv, 0, size};
    OpIndex combined = b.copy(result, block_of(Buffer::Send, r, size), {});
    for (int k = 1; k < p; ++k) {
      const int to = (r + k) % p;
      const int from = (r - k + p) % p;
      b.send(to, block_of(Buffer::Send, to, size), kAnyLane, {});
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
  const std::uint64_t size = params.size;
  const std::uint64_t all = size * static_cast<std::uint64_t>(p);
  const auto first_block = [&](int v) { return v * p / q; };
  Pieces pieces;
  for (int v = 0; v <= q; ++v) pieces.bounds.push_back(first_block(v) * size);
  const auto same = [](int v) { return v; };
  ScheduleBuilder b = reduce_scatter_builder("recursive-halving", p, params);
  for (int r = 0; r < p; ++r) {
    b.start_rank(r);
    const Range result{Buffer::Recv, 0, size};
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
      const Range reduced = block_of(Buffer::Scratch, block, size);
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
