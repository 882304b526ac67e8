// blocks.hpp — moving per-rank blocks (scatter/gather and their v-forms) between block stores.
//
// Block u belongs to rank u and has sizes.of(u) bytes: one size for every rank, or one per rank
// (scatterv, gatherv). In a scatter the root's Send buffer holds the blocks packed in rank
// order; intermediate ranks keep the blocks they carry in Scratch, packed in the order of the
// list they were given. A list of ranks is sent as one message per run of consecutive rank
// numbers (consecutive blocks are adjacent in both layouts), so a relay forwards a site's
// blocks in one or two messages (two when the run wraps past the last rank). Sender and
// receiver derive the same runs from the same list.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "multilane/schedule.hpp"

namespace multilane::algo {

// The bytes of each rank's block.
class BlockSizes {
 public:
  // Every block `size` bytes.
  explicit BlockSizes(std::uint64_t size) : uniform_(size) {}
  // Block i counts[i] bytes (empty: every block `size`), from BuildParams.
  BlockSizes(std::uint64_t size, std::span<const std::uint64_t> counts)
      : uniform_(size), counts_(counts) {}
  std::uint64_t of(int rank) const { return counts_.empty() ? uniform_ : counts_[rank]; }
  // The bytes of the blocks of `ranks`.
  std::uint64_t of(std::span<const int> ranks) const;

 private:
  std::uint64_t uniform_;
  std::span<const std::uint64_t> counts_;
};

struct BlockStore {
  Buffer buffer = Buffer::Scratch;
  std::function<std::uint64_t(int rank)> offset_of;  // where block `rank` starts
};

// The root's Send buffer: the blocks of ranks 0..p-1 packed in rank order.
BlockStore send_buffer_store(const BlockSizes& sizes, int p);
// Scratch holding the blocks of `ranks` packed in list order, starting at byte 0.
BlockStore scratch_store(std::vector<int> ranks, const BlockSizes& sizes);

// A rank's view of the blocks it is given in a scatter: where they are and which receives
// bring them. The rank's own block also ends up in its Recv buffer.
struct HeldBlocks {
  BlockStore store;
  std::vector<OpIndex> arrived;  // empty at the root: its blocks are there from the start
};
// The root of a scatter: everything is in Send; copies its own block to Recv.
HeldBlocks hold_at_root(ScheduleBuilder& b, int root, int p, const BlockSizes& sizes);
// `self` receives the blocks of `carried` (which includes its own) from `from`, into Recv
// when it carries only its own block, else into Scratch, and copies its own block out.
HeldBlocks receive_carried(ScheduleBuilder& b, int self, int from, std::vector<int> carried,
                           const BlockSizes& sizes, int lane = kAnyLane);

struct Run {
  std::size_t first;  // index into the list
  std::size_t count;
};
std::vector<Run> block_runs(std::span<const int> ranks);

// Sends the blocks of `ranks` (a contiguous part of what `from` stores) to `peer`, one message
// per run, each waiting for `deps`. Returns the send operations.
std::vector<OpIndex> send_blocks(ScheduleBuilder& b, int peer, std::span<const int> ranks,
                                 const BlockSizes& sizes, const BlockStore& from,
                                 std::span<const OpIndex> deps, int lane = kAnyLane);
// Receives what send_blocks sends into `into`. Returns the receive operations.
std::vector<OpIndex> recv_blocks(ScheduleBuilder& b, int peer, std::span<const int> ranks,
                                 const BlockSizes& sizes, const BlockStore& into,
                                 int lane = kAnyLane);

// A message that crosses the WAN travels on one lane: one TCP connection per node pair, as
// in the scatter/gather paper (striping it over every NIC would open one connection per lane).
inline constexpr int kWanLane = 0;

// Sends `ranks`' blocks (from `held`) to `peer` once `previous` has completed: scatters
// serve one destination at a time. Returns the last send (or `previous` when none was needed).
OpIndex send_after(ScheduleBuilder& b, int peer, std::span<const int> ranks,
                   const BlockSizes& sizes, const HeldBlocks& held, OpIndex previous,
                   int lane = kAnyLane);
// Hands every rank of `members` other than `self` its own block, one after the other.
void hand_out(ScheduleBuilder& b, int self, std::span<const int> members, const BlockSizes& sizes,
              const HeldBlocks& held, OpIndex previous = kNoOp);

}  // namespace multilane::algo
