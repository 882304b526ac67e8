// Single copy (plan.hpp): the exposing ranks' buffers are read or written in place by the
// others, through cross-memory attach, in one stage.
#include "runtime/shm/plan_builder.hpp"

namespace multilane::runtime::shm {

namespace {

// Bcast and scatter (root exposes its message or blocks) and gather (root exposes its receive
// buffer): one exposing rank, p - 1 copying ranks.
void plan_rooted(PlanBuilder& plan, const CallShape& call) {
  const int me = plan.rank();
  const std::uint64_t s = call.size;
  const Collective collective = *call.collective;
  const Stage stage = plan.stage(1, static_cast<std::uint32_t>(call.local_size - 1));
  const auto mine = static_cast<std::uint64_t>(me) * s;
  if (me == call.root) {
    plan.expose(stage, collective == Collective::Gather);
    plan.group_sync(stage, SyncRole::Writer);
    if (collective == Collective::Scatter) plan.local_copy(0, mine, s);
    if (collective == Collective::Gather) plan.local_copy(mine, 0, s);
    plan.wait_released(stage);
    return;
  }
  plan.group_sync(stage, SyncRole::Reader, call.root);
  switch (collective) {
    case Collective::Bcast:
      return plan.direct_get(stage, call.root, 0, 0, s, true);
    case Collective::Scatter:
      return plan.direct_get(stage, call.root, mine, 0, s, true);
    default:
      return plan.direct_put(stage, call.root, 0, mine, s, true);
  }
}

// Allgather and alltoall: every rank exposes its send buffer and gets from every other rank,
// starting with its right neighbour so that the p readers spread over the p buffers.
void plan_all_to_all(PlanBuilder& plan, const CallShape& call) {
  const int p = call.local_size;
  const int me = plan.rank();
  const std::uint64_t s = call.size;
  const bool alltoall = *call.collective == Collective::Alltoall;
  const auto everyone = static_cast<std::uint32_t>(p);
  const Stage stage = plan.stage(everyone, everyone);
  plan.expose(stage, false);
  plan.group_sync(stage, SyncRole::Writer);
  plan.group_sync(stage, SyncRole::Reader);
  const auto mine = static_cast<std::uint64_t>(me) * s;
  for (int k = 1; k < p; ++k) {
    const int from = (me + k) % p;
    plan.direct_get(stage, from, alltoall ? mine : 0, static_cast<std::uint64_t>(from) * s, s,
                    k == p - 1);
  }
  plan.local_copy(mine, alltoall ? mine : 0, s);
  plan.wait_released(stage);
}

}  // namespace

void plan_single_copy(PlanBuilder& plan, const CallShape& call) {
  if (call.local_size == 1 || call.size == 0) {
    // Nothing crosses between ranks: only a rank's own block, if any.
    if (*call.collective != Collective::Bcast) plan.local_copy(0, 0, call.size);
    return;
  }
  const Collective collective = *call.collective;
  if (collective == Collective::Allgather || collective == Collective::Alltoall) {
    return plan_all_to_all(plan, call);
  }
  plan_rooted(plan, call);
}

}  // namespace multilane::runtime::shm
