// Barrier: Group_sync of every rank, alone (one stage, nothing put or got).
#include "runtime/shm/plan_builder.hpp"

namespace multilane::runtime::shm {

void plan_barrier(PlanBuilder& plan, const CallShape& call) {
  if (call.local_size == 1) return;
  const auto all = static_cast<std::uint32_t>(call.local_size);
  const Stage stage = plan.stage(all, all);
  plan.group_sync(stage, SyncRole::Writer);
  plan.group_sync(stage, SyncRole::Reader);
  plan.group_get(stage, 0, 0, 0, true);  // reads nothing; releases the buffer
}

}  // namespace multilane::runtime::shm
