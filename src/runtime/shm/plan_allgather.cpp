// Allgather within a node (not in the paper's Table 1; built from the same primitives): every
// rank puts a piece of its block into its part of the buffer (Group_seg_put), Group_sync, and
// every rank gets the other ranks' pieces (Group_get). With p * size <= B the pieces are whole
// blocks and the call is one stage; above, each stage carries pieces of B / p bytes of every
// block, pipelined over the buffers. Small calls with no more ranks than buffers go in rows
// instead (plan_rows): each rank's block is a row of its own, which every other rank gets.
#include <algorithm>

#include "runtime/shm/plan_builder.hpp"

namespace multilane::runtime::shm {

void plan_allgather(PlanBuilder& plan, const CallShape& call) {
  const int p = call.local_size;
  const std::uint64_t s = call.size;
  const auto me = static_cast<std::uint64_t>(plan.rank());
  // The rank's own block last, so that the others do not wait for its pieces meanwhile.
  if (p == 1 || s == 0) return plan.local_copy(me * s, 0, s);
  if (fits_in_rows(call, plan.geometry())) {
    const auto put_row = [&](const Stage& stage) { plan.group_seg_put(stage, 0, 0, s); };
    const auto get_from = [&](const Stage& stage, int from) {
      plan.group_get(stage, 0, static_cast<std::uint64_t>(from) * s, s, true);
    };
    plan_rows(plan, p, s, put_row, get_from);
    return plan.local_copy(me * s, 0, s);
  }
  const std::uint64_t piece =
      std::min(s, plan.geometry().buffer_size / static_cast<std::uint64_t>(p));
  const auto all = static_cast<std::uint32_t>(p);
  for (std::uint64_t c = 0; c < chunk_count(s, piece); ++c) {
    const Chunk chunk = chunk_at(s, piece, c);
    const Stage stage = plan.stage(all, all);
    plan.group_seg_put(stage, me * piece, chunk.offset, chunk.length);
    plan.group_sync(stage, SyncRole::Writer);
    plan.group_sync(stage, SyncRole::Reader);
    const int last = plan.rank() == p - 1 ? p - 2 : p - 1;
    for (int q = 0; q < p; ++q) {
      if (q == plan.rank()) continue;
      const auto from = static_cast<std::uint64_t>(q);
      plan.group_get(stage, from * piece, from * s + chunk.offset, chunk.length, q == last);
    }
  }
  plan.local_copy(me * s, 0, s);
}

}  // namespace multilane::runtime::shm
