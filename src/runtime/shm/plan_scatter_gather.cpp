// Scatter and gather (Table 1, rows 2 and 3).
//
// m = p * size <= B, one stage, blocks laid out by rank in the buffer:
//   scatter: the root puts every other block (Sender_put), Group_sync, each rank gets its own
//            block (Group_seg_get);
//   gather:  each rank puts its block (Group_seg_put), Group_sync, the root gets them all
//            (Receiver_get).
// m > B: root and each other rank exchange the block pair-wise in chunks of at most B bytes
// (Sender_put, Pair_sync, Receiver_get), chunk-major: chunk 0 of every rank, then chunk 1, ...,
// so every rank's copy overlaps the root's copies to or from the other ranks.
#include "runtime/shm/plan_builder.hpp"

namespace multilane::runtime::shm {
namespace {

// The ranks other than the root, starting after it.
int nth_other(const CallShape& call, int n) {
  return (call.root + 1 + n) % call.local_size;
}

void scatter_one_stage(PlanBuilder& plan, const CallShape& call) {
  const int p = call.local_size;
  const std::uint64_t s = call.size;
  const auto root = static_cast<std::uint64_t>(call.root);
  const Stage stage = plan.stage(1, static_cast<std::uint32_t>(p - 1));
  if (plan.rank() == call.root) {
    const int only_reader = p == 2 ? nth_other(call, 0) : -1;
    plan.sender_put(stage, 0, 0, root * s, only_reader);
    plan.sender_put(stage, (root + 1) * s, (root + 1) * s, (p - root - 1) * s, only_reader);
    plan.group_sync(stage, SyncRole::Writer);
  } else {
    plan.group_sync(stage, SyncRole::Reader, call.root);
    plan.group_seg_get(stage, static_cast<std::uint64_t>(plan.rank()) * s, 0, s, true);
  }
}

void gather_one_stage(PlanBuilder& plan, const CallShape& call) {
  const int p = call.local_size;
  const std::uint64_t s = call.size;
  const auto root = static_cast<std::uint64_t>(call.root);
  const Stage stage = plan.stage(static_cast<std::uint32_t>(p - 1), 1);
  if (plan.rank() == call.root) {
    plan.group_sync(stage, SyncRole::Reader, p == 2 ? nth_other(call, 0) : -1);
    plan.receiver_get(stage, 0, 0, root * s, false);
    plan.receiver_get(stage, (root + 1) * s, (root + 1) * s, (p - root - 1) * s, true);
  } else {
    plan.group_seg_put(stage, static_cast<std::uint64_t>(plan.rank()) * s, 0, s, call.root);
    plan.group_sync(stage, SyncRole::Writer);
  }
}

// Pair-wise, chunk-major; `to_root` selects gather (rank -> root) over scatter (root -> rank).
void pairwise(PlanBuilder& plan, const CallShape& call, bool to_root) {
  const std::uint64_t s = call.size;
  const std::uint64_t b = plan.geometry().buffer_size;
  for (std::uint64_t c = 0; c < chunk_count(s, b); ++c) {
    const Chunk chunk = chunk_at(s, b, c);
    for (int n = 0; n < call.local_size - 1; ++n) {
      const int other = nth_other(call, n);
      const Stage stage = plan.stage(1, 1);
      const std::uint64_t at_root = static_cast<std::uint64_t>(other) * s + chunk.offset;
      const int writer = to_root ? other : call.root;
      const int reader = to_root ? call.root : other;
      if (plan.rank() == writer) {
        plan.sender_put(stage, 0, to_root ? chunk.offset : at_root, chunk.length, reader);
        plan.pair_sync(stage, SyncRole::Writer, writer);
      } else if (plan.rank() == reader) {
        plan.pair_sync(stage, SyncRole::Reader, writer);
        plan.receiver_get(stage, 0, to_root ? at_root : chunk.offset, chunk.length, true);
      }
    }
  }
}

}  // namespace

void plan_scatter(PlanBuilder& plan, const CallShape& call) {
  if (call.local_size > 1 && call.size > 0) {
    if (fits_one_stage(call, plan.geometry())) {
      scatter_one_stage(plan, call);
    } else {
      pairwise(plan, call, false);
    }
  }
  // The root's own block last, so that the other ranks start reading first.
  if (plan.rank() == call.root) {
    plan.local_copy(0, static_cast<std::uint64_t>(call.root) * call.size, call.size);
  }
}

void plan_gather(PlanBuilder& plan, const CallShape& call) {
  if (call.local_size > 1 && call.size > 0) {
    if (fits_one_stage(call, plan.geometry())) {
      gather_one_stage(plan, call);
    } else {
      pairwise(plan, call, true);
    }
  }
  // The root's own block last: the others' writers would wait for it otherwise.
  if (plan.rank() == call.root) {
    plan.local_copy(static_cast<std::uint64_t>(call.root) * call.size, 0, call.size);
  }
}

}  // namespace multilane::runtime::shm
