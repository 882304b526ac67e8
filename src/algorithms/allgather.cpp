// allgather.cpp — ring (p-1 steps, each rank forwarding the block it got last) and
// recursive doubling (log p steps for powers of two, two more otherwise; see
// recursive_doubling.hpp).
#include <vector>

#include "builders.hpp"
#include "recursive_doubling.hpp"

namespace multilane::algo {

namespace {

Range block(int rank, std::uint64_t size) {
  return {Buffer::Recv, static_cast<std::uint64_t>(rank) * size, size};
}

// Every allgather starts by copying the rank's own block into place.
OpIndex copy_own_block(ScheduleBuilder& b, int rank, std::uint64_t size) {
  return b.copy(block(rank, size), Range{Buffer::Send, 0, size}, {});
}

}  // namespace

Schedule allgather_ring(const Platform& platform, const BuildParams& params) {
  const int p = platform.num_ranks();
  ScheduleBuilder b(Collective::Allgather, "ring", p, params.root, params.size, 0);
  for (int r = 0; r < p; ++r) {
    b.start_rank(r);
    const int right = (r + 1) % p;
    const int left = (r - 1 + p) % p;
    OpIndex last = copy_own_block(b, r, params.size);
    for (int step = 0; step + 1 < p; ++step) {
      b.send(right, block((r - step + p) % p, params.size), kAnyLane, {last});
      last = b.recv(left, block((r - step - 1 + p) % p, params.size), kAnyLane, {});
    }
  }
  return b.finish();
}

Schedule allgather_recursive_doubling(const Platform& platform, const BuildParams& params) {
  const int p = platform.num_ranks();
  const std::uint64_t size = params.size;
  ChunkLayout layout;
  layout.positions = p;
  layout.rank_at = [](int v) { return v; };
  layout.chunks = [size](int first, int last) {
    return Range{Buffer::Recv, first * size, static_cast<std::uint64_t>(last - first) * size};
  };
  ScheduleBuilder b(Collective::Allgather, "recursive-doubling", p, params.root, size, 0);
  for (int r = 0; r < p; ++r) {
    b.start_rank(r);
    const OpIndex own = copy_own_block(b, r, size);
    emit_recursive_doubling(b, r, layout, std::span<const OpIndex>(&own, 1));
  }
  return b.finish();
}

}  // namespace multilane::algo
