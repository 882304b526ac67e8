// Broadcast (Table 1, row 1): the root puts each chunk of at most B bytes into a pipeline
// buffer, the group syncs, and every other rank gets the whole chunk (all at once: concurrent
// reads of one buffer are what the SMP paper exploits). One chunk when m <= B.
#include "runtime/shm/plan_builder.hpp"

namespace multilane::runtime::shm {

void plan_bcast(PlanBuilder& plan, const CallShape& call) {
  const int p = call.local_size;
  if (p == 1) return;
  const std::uint64_t b = plan.geometry().buffer_size;
  const auto readers = static_cast<std::uint32_t>(p - 1);
  const int only_reader = p == 2 ? 1 - call.root : -1;
  for (std::uint64_t c = 0; c < chunk_count(call.size, b); ++c) {
    const Chunk chunk = chunk_at(call.size, b, c);
    const Stage stage = plan.stage(1, readers);
    if (plan.rank() == call.root) {
      plan.sender_put(stage, 0, chunk.offset, chunk.length, only_reader);
      plan.group_sync(stage, SyncRole::Writer);
    } else {
      plan.group_sync(stage, SyncRole::Reader, call.root);
      plan.group_get(stage, 0, chunk.offset, chunk.length, true);
    }
  }
}

}  // namespace multilane::runtime::shm
