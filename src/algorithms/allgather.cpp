// allgather.cpp — ring (p-1 steps, each rank forwarding the block it got last) and
// recursive doubling (log p steps for powers of two, two more otherwise; see
// recursive_doubling.hpp). With per-rank counts (BuildParams::counts) the same schedules are
// allgatherv: block i is counts[i] bytes, the blocks packed in rank order.
#include <vector>

#include "builders.hpp"
#include "multilane/collective.hpp"
#include "recursive_doubling.hpp"

namespace multilane::algo {

namespace {

// Where each rank's block lies in Recv: offsets[i], offsets[i+1] - offsets[i] bytes.
std::vector<std::uint64_t> recv_offsets(int p, const BuildParams& params) {
  if (!params.counts.empty()) return block_offsets(params.counts, p);
  std::vector<std::uint64_t> offsets(static_cast<std::size_t>(p) + 1);
  for (int i = 0; i <= p; ++i) offsets[i] = static_cast<std::uint64_t>(i) * params.size;
  return offsets;
}

// The Recv bytes of the blocks of ranks [first, last).
Range blocks(const std::vector<std::uint64_t>& offsets, int first, int last) {
  return {Buffer::Recv, offsets[first], offsets[last] - offsets[first]};
}

// Every allgather starts by copying the rank's own block into place.
OpIndex copy_own_block(ScheduleBuilder& b, int rank, const std::vector<std::uint64_t>& offsets) {
  const Range own = blocks(offsets, rank, rank + 1);
  return b.copy(own, Range{Buffer::Send, 0, own.length}, {});
}

}  // namespace

Schedule allgather_ring(const Platform& platform, const BuildParams& params) {
  const int p = platform.num_ranks();
  const auto offsets = recv_offsets(p, params);
  const auto block = [&offsets](int rank) { return blocks(offsets, rank, rank + 1); };
  ScheduleBuilder b(Collective::Allgather, "ring", p, params.root, params.size, 0);
  for (int r = 0; r < p; ++r) {
    b.start_rank(r);
    const int right = (r + 1) % p;
    const int left = (r - 1 + p) % p;
    OpIndex last = copy_own_block(b, r, offsets);
    for (int step = 0; step + 1 < p; ++step) {
      // The block sent is the one received the step before (empty blocks: neither exists).
      b.send(right, block((r - step + p) % p), kAnyLane, {last});
      last = b.recv(left, block((r - step - 1 + p) % p), kAnyLane, {});
    }
  }
  return b.finish();
}

Schedule allgather_recursive_doubling(const Platform& platform, const BuildParams& params) {
  const int p = platform.num_ranks();
  const auto offsets = recv_offsets(p, params);
  ChunkLayout layout;
  layout.positions = p;
  layout.rank_at = [](int v) { return v; };
  layout.chunks = [&offsets](int first, int last) { return blocks(offsets, first, last); };
  ScheduleBuilder b(Collective::Allgather, "recursive-doubling", p, params.root, params.size, 0);
  for (int r = 0; r < p; ++r) {
    b.start_rank(r);
    const OpIndex own = copy_own_block(b, r, offsets);
    emit_recursive_doubling(b, r, layout, std::span<const OpIndex>(&own, 1));
  }
  return b.finish();
}

}  // namespace multilane::algo
