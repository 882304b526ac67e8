// blocks.hpp — moving per-rank blocks (scatter/gather) between block stores.
//
// In a scatter the root's Send buffer holds block u of rank u at u*size; intermediate ranks
// keep the blocks they carry in Scratch in the order of the list they were given. A list of
// ranks is sent as one message per run of consecutive rank numbers, so a relay forwards a
// site's blocks in one or two messages (two when the run wraps past the last rank). Sender
// and receiver derive the same runs from the same list.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "multilane/schedule.hpp"

namespace multilane::algo {

struct BlockStore {
  Buffer buffer = Buffer::Scratch;
  std::function<std::uint64_t(int rank)> offset_of;  // where block `rank` starts
};

// The root's Send buffer: block u at u*size.
BlockStore send_buffer_store(std::uint64_t size);
// Scratch holding the blocks of `ranks` in list order, starting at byte 0.
BlockStore scratch_store(std::vector<int> ranks, std::uint64_t size);

// A rank's view of the blocks it is given in a scatter: where they are and which receives
// bring them. The rank's own block also ends up in its Recv buffer.
struct HeldBlocks {
  BlockStore store;
  std::vector<OpIndex> arrived;  // empty at the root: its blocks are there from the start
};
// The root of a scatter: everything is in Send; copies its own block to Recv.
HeldBlocks hold_at_root(ScheduleBuilder& b, int root, std::uint64_t size);
// `self` receives the blocks of `carried` (which includes its own) from `from`, into Recv
// when it carries only its own block, else into Scratch, and copies its own block out.
HeldBlocks receive_carried(ScheduleBuilder& b, int self, int from, std::vector<int> carried,
                           std::uint64_t size, int lane = kAnyLane);

struct Run {
  std::size_t first;  // index into the list
  std::size_t count;
};
std::vector<Run> block_runs(std::span<const int> ranks);

// Sends the blocks of `ranks` (a contiguous part of what `from` stores) to `peer`, one message
// per run, each waiting for `deps`. Returns the send operations.
std::vector<OpIndex> send_blocks(ScheduleBuilder& b, int peer, std::span<const int> ranks,
                                 std::uint64_t size, const BlockStore& from,
                                 std::span<const OpIndex> deps, int lane = kAnyLane);
// Receives what send_blocks sends into `into`. Returns the receive operations.
std::vector<OpIndex> recv_blocks(ScheduleBuilder& b, int peer, std::span<const int> ranks,
                                 std::uint64_t size, const BlockStore& into, int lane = kAnyLane);

// A message that crosses the WAN travels on one lane: one TCP connection per node pair, as
// in the scatter/gather paper (striping it over every NIC would open one connection per lane).
inline constexpr int kWanLane = 0;

// Sends `ranks`' blocks (from `held`) to `peer` once `previous` has completed: scatters
// serve one destination at a time. Returns the last send (or `previous` when none was needed).
OpIndex send_after(ScheduleBuilder& b, int peer, std::span<const int> ranks, std::uint64_t size,
                   const HeldBlocks& held, OpIndex previous, int lane = kAnyLane);
// Hands every rank of `members` other than `self` its own block, one after the other.
void hand_out(ScheduleBuilder& b, int self, std::span<const int> members, std::uint64_t size,
              const HeldBlocks& held, OpIndex previous = kNoOp);

}  // namespace multilane::algo
