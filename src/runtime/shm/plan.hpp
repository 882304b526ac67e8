// runtime/shm/plan.hpp — the intra-node collectives as lists of primitives (the paper's Table 1).
//
// build_plan() appends one rank's Steps (runtime/shm/step.hpp) for one call. It is a pure
// function of the call, the rank and the StageClock, and every rank advances its clock by the
// same number of stages, so the ranks of a group agree on every stage number without talking.
// m is the bytes that pass through shared memory in one call, B the pipeline buffer size:
//
//   collective  m <= B (one stage)                         m > B
//   bcast       Sender_put, Group_sync, Group_get           the same, pipelined in chunks of B
//   scatter     Sender_put, Group_sync, Group_seg_get       Sender_put, Pair_sync, Receiver_get
//   gather      Group_seg_put, Group_sync, Receiver_get       per receiver, pipelined in chunks
//   allgather   Group_seg_put, Group_sync, Group_get        the same, each stage carrying a
//                                                             piece of B/p bytes of every block
//   alltoall    Group_seg_put, Group_sync, Group_seg_get    pairwise rounds of [Sender_put,
//                                                             Pair_sync, Receiver_get], pipelined
//
// with m = size (bcast), p*size (scatter, gather, allgather), p*p*size (alltoall). A rank's own
// block never passes through shared memory (LocalCopy). Ours, beyond the table: a one-stage
// alltoall with no more ranks than pipeline buffers uses one stage per rank instead (each rank
// puts its row and syncs alone; the others get their block from it), since p writers counting
// into one shared word cost more than the 8-byte call itself (plan_alltoall.cpp).
//
// Single copy (CallShape::single_copy; ours, beyond the paper): Table 1 copies every byte
// twice, into shared memory and out. With cross-memory attach (cross_memory.hpp) a rank can
// copy straight from another rank's buffer, once, as Open MPI's vader does for large
// messages. The call is then one stage: the ranks whose buffers are read (or written) Expose
// them, the group syncs, the ranks copy their bytes directly (DirectGet, or DirectPut into
// gather's root and by bcast's root), and the exposing ranks wait until every copier released
// the stage before they return:
//
//   bcast           every rank exposes its buffer; the root puts the message's last part
//                   (its share, by default 1/p) into every other rank, which gets the rest
//   scatter         every rank exposes its buffer; the root copies its own block and puts
//                   the last part of every other block (by default 3/4 of 1/p), which its
//                   rank gets the rest of
//   gather          the same the other way: the others put most of their block into the
//                   root's receive buffer, the root gets the last part from their send buffer
//                   (below a cache line's share: only the root exposes, the others copy all;
//                   the share is learned as the calls run: root_share.hpp)
//   allgather       every rank exposes its block; every rank gets every other block
//   alltoall        every rank exposes its send buffer; every rank gets its block from each
//
// All readers copy at once, from one buffer (bcast) or from p buffers (allgather, alltoall),
// the paper's Group_get idea without its second copy. Ranks run their steps in order; the
// order is deadlock-free for any number of pipeline buffers (the tests run every plan of every
// rank in one process and check progress and bytes).
//
// The clock also tracks the geometry (buffer size, number of buffers): a call with another
// geometry than the previous one starts a new epoch, and its writers first wait until every
// buffer of the old epoch has been read (zero-length puts on the old buffers), since old and
// new buffers overlap in memory.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "multilane/schedule.hpp"
#include "runtime/shm/step.hpp"

namespace multilane::runtime::shm {

struct CallShape {
  std::optional<Collective> collective;  // nullopt: barrier
  int root = 0;
  std::uint64_t size = 0;  // bytes per block (the whole message for bcast)
  int local_size = 1;
  bool single_copy = false;  // plan_single_copy(): one copy per byte instead of Table 1's two
  // Single-copy bcast, scatter and gather: how much of every other rank's block the root copies
  // itself, in 1/1024ths (root_share.hpp); nullopt: the default.
  std::optional<std::uint16_t> root_share;
  friend bool operator==(const CallShape&, const CallShape&) = default;
};

// Stage numbering shared by the ranks of a group (each rank holds an identical copy).
struct StageClock {
  std::uint64_t next = 0;         // number of the next stage
  std::uint64_t epoch_start = 0;  // first stage of the current geometry
  Geometry geometry;              // geometry of the current epoch
  std::uint64_t epochs = 0;       // geometries used in turn so far (each change drains the old)
};

struct ShmPlan {
  std::vector<Step> steps;
  std::uint64_t first_stage = 0;
  std::uint64_t stages = 0;
};

// Distance between two pipeline buffers in the data area (cache-line aligned).
std::uint64_t buffer_stride(const Geometry& geometry);
// Bytes of the data area the geometry needs.
std::uint64_t data_bytes(const Geometry& geometry);
// Bytes that pass through shared memory in one call (m above).
std::uint64_t shared_bytes(const CallShape& call);
// Whether the call completes in one stage (m <= B), the paper's switch point.
bool fits_one_stage(const CallShape& call, const Geometry& geometry);

// Replaces `plan` with `local_rank`'s steps for the call and advances `clock`. The geometry must
// be valid for the call (checked by the caller: buffers in 1..kMaxPipelineBuffers, buffer
// size >= local_size for allgather).
void build_plan(const CallShape& call, int local_rank, const Geometry& geometry, StageClock& clock,
                ShmPlan& plan);

}  // namespace multilane::runtime::shm
