// runtime/shm/plan_builder.hpp — composes one rank's steps in the vocabulary of the paper.
//
// The plan_*.cpp files describe each collective for one rank with these calls. The builder
// allocates stage numbers and pipeline buffers round robin, drops zero-length copies, merges
// a put or get that continues the previous one (same stage, adjacent in shared memory and in
// the user's buffer). When the
// call changes the geometry, every rank's plan starts with waits for every buffer of the
// previous epoch to be read (zero-length Group_seg_puts), so no rank writes a new buffer that
// overlaps an old one still being read.
#pragma once

#include <cstdint>
#include <functional>

#include "runtime/shm/plan.hpp"

namespace multilane::runtime::shm {

class PlanBuilder {
 public:
  PlanBuilder(int local_rank, const Geometry& geometry, StageClock& clock, ShmPlan& plan);

  // Stages from now on touch at most `bytes` bytes each: they keep them out of the data area
  // when they fit in their slot header (kInlineBytes), or, with one writer, in their flagged
  // lines (kFlaggedBytes). See place_of().
  void use_small_stages(std::uint64_t bytes) { small_stage_bytes_ = bytes; }
  SharedPlace place_of(const Stage& stage) const;

  int rank() const { return rank_; }
  const Geometry& geometry() const { return geometry_; }

  // The next stage of the group, used by `writers` and `readers` ranks. Every rank must
  // allocate the same stages in the same order, whether it takes part in them or not.
  Stage stage(std::uint32_t writers, std::uint32_t readers);

  // `slot_offset` is the offset inside the stage's pipeline buffer; `offset` the offset in the
  // send buffer (puts) or receive buffer (gets). `peer`: the single reader (puts), the single
  // writer (reader syncs), or -1.
  void sender_put(const Stage& stage, std::uint64_t slot_offset, std::uint64_t offset,
                  std::uint64_t length, int reader);
  void group_seg_put(const Stage& stage, std::uint64_t slot_offset, std::uint64_t offset,
                     std::uint64_t length, int reader = -1);
  void pair_sync(const Stage& stage, SyncRole role, int writer);
  void group_sync(const Stage& stage, SyncRole role, int writer = -1);
  void receiver_get(const Stage& stage, std::uint64_t slot_offset, std::uint64_t offset,
                    std::uint64_t length, bool release);
  void group_get(const Stage& stage, std::uint64_t slot_offset, std::uint64_t offset,
                 std::uint64_t length, bool release);
  void group_seg_get(const Stage& stage, std::uint64_t slot_offset, std::uint64_t offset,
                     std::uint64_t length, bool release);
  void local_copy(std::uint64_t recv_offset, std::uint64_t send_offset, std::uint64_t length);

  // Single copy. expose() writes where this rank's send (or receive) buffer is into its entry
  // of the stage's buffer (entry r at r * kExposedBytes). direct_get() copies `length` bytes at
  // `remote` in `peer`'s exposed buffer to `offset` in this rank's receive buffer; direct_put()
  // copies from `offset` in this rank's send buffer to `remote` in `peer`'s. wait_released()
  // waits until every reader of `stage` is done, so an exposed buffer may be left.
  void expose(const Stage& stage, bool recv_buffer);
  void direct_get(const Stage& stage, int peer, std::uint64_t remote, std::uint64_t offset,
                  std::uint64_t length, bool release);
  void direct_put(const Stage& stage, int peer, std::uint64_t offset, std::uint64_t remote,
                  std::uint64_t length, bool release);
  void wait_released(const Stage& stage);

 private:
  // Where a put or get of `length` bytes at `slot_offset` in its stage's buffer is.
  void place(Step& step, std::uint64_t slot_offset, std::uint64_t length) const;
  void put(Primitive primitive, const Stage& stage, std::uint64_t slot_offset, std::uint64_t offset,
           std::uint64_t length, int reader);
  void sync(Primitive primitive, const Stage& stage, SyncRole role, int writer);
  void get(Primitive primitive, const Stage& stage, std::uint64_t slot_offset, std::uint64_t offset,
           std::uint64_t length, bool release);
  void direct(Primitive primitive, const Stage& stage, int peer, std::uint64_t offset,
              std::uint64_t remote, std::uint64_t length, bool release);
  // Where rank `rank`'s entry of `stage`'s buffer is, in the data area.
  std::uint64_t exposed_entry(const Stage& stage, int rank) const;
  // A sync of a stage in FlaggedLines covers the bytes this rank wrote (writers, from its puts
  // so far) or will read (readers, extended by each get); see Step::slot_offset.
  void cover_puts(Step& writer_sync) const;
  void cover_get(const Step& get);
  // Extends the last step if `step` continues it; true if it did.
  bool merge_with_last(const Step& step);
  void enter_epoch();
  void wait_for_epoch(const StageClock& epoch);

  int rank_;
  std::uint64_t small_stage_bytes_ = 0;  // 0: every stage in the data area
  Geometry geometry_;
  StageClock& clock_;
  ShmPlan& plan_;
};

// One chunk of a message cut into pieces of at most `chunk` bytes.
struct Chunk {
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
};
// Number of chunks of `total` bytes (0 for 0 bytes).
std::uint64_t chunk_count(std::uint64_t total, std::uint64_t chunk);
Chunk chunk_at(std::uint64_t total, std::uint64_t chunk, std::uint64_t index);

// Small calls in rows (alltoall, allgather; plan_rows.cpp): one stage per rank, which the rank
// fills alone (`put_row`, at most `row_bytes` bytes) and syncs alone; every other rank then
// gets its part of it (`get_from`, which must release). A lone writer stores its arrival where
// a shared stage needs an atomic addition by every rank, and with two ranks the readers too
// are alone: this saves two contended cache-line transfers per call, most of the cost of an
// 8-byte call. A small row travels in its slot header or flagged lines (use_small_stages).
bool fits_in_rows(const CallShape& call, const Geometry& geometry);  // p <= buffers, one stage
void plan_rows(PlanBuilder& plan, int local_size, std::uint64_t row_bytes,
               const std::function<void(const Stage&)>& put_row,
               const std::function<void(const Stage&, int from)>& get_from);

// Every collective's steps for one rank (one file each).
void plan_bcast(PlanBuilder& plan, const CallShape& call);
void plan_scatter(PlanBuilder& plan, const CallShape& call);
void plan_gather(PlanBuilder& plan, const CallShape& call);
void plan_allgather(PlanBuilder& plan, const CallShape& call);
void plan_alltoall(PlanBuilder& plan, const CallShape& call);
void plan_barrier(PlanBuilder& plan, const CallShape& call);
void plan_single_copy(PlanBuilder& plan, const CallShape& call);

}  // namespace multilane::runtime::shm
