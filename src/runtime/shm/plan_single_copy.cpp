// Single copy (plan.hpp): the exposing ranks' buffers are read or written in place by the
// others, through cross-memory attach, in one stage.
#include "runtime/shm/plan_builder.hpp"

namespace multilane::runtime::shm {

namespace {

// The bytes at the end of a bcast's message that the root puts into every reader itself: 1/p
// of it, whole cache lines, so that every rank copies about (p - 1)/p of the message.
std::uint64_t root_share(const CallShape& call) {
  constexpr std::uint64_t kLine = 64;
  return call.size / static_cast<std::uint64_t>(call.local_size) / kLine * kLine;
}

// Bcast: a root that only exposed its message would sit idle while the readers copy all of
// it. Every rank exposes its buffer instead; the root puts the message's last share into
// every reader while each reader gets the rest, so the p ranks copy at once and the call
// takes about (p - 1)/p of one copy, plus a sync in both directions (the readers wait until
// the root's puts into their buffers are done).
void plan_shared_bcast(PlanBuilder& plan, const CallShape& call, std::uint64_t share) {
  const int p = call.local_size;
  const std::uint64_t rest = call.size - share;
  const auto everyone = static_cast<std::uint32_t>(p);
  const Stage stage = plan.stage(everyone, everyone);
  const bool root = plan.rank() == call.root;
  plan.expose(stage, !root);
  plan.group_sync(stage, SyncRole::Writer);
  plan.group_sync(stage, SyncRole::Reader);
  if (root) {
    for (int k = 1; k < p; ++k) {
      plan.direct_put(stage, (call.root + k) % p, rest, rest, share, k == p - 1);
    }
  } else {
    plan.direct_get(stage, call.root, 0, 0, rest, true);
  }
  plan.wait_released(stage);
}

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
  const auto mine = static_cast<std::uint64_t>(me) * s;
  plan.expose(stage, false);
  plan.group_sync(stage, SyncRole::Writer);
  // The rank's own block first: it needs nobody, so it fills the wait for the last rank.
  plan.local_copy(mine, alltoall ? mine : 0, s);
  plan.group_sync(stage, SyncRole::Reader);
  for (int k = 1; k < p; ++k) {
    const int from = (me + k) % p;
    plan.direct_get(stage, from, alltoall ? mine : 0, static_cast<std::uint64_t>(from) * s, s,
                    k == p - 1);
  }
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
  if (const std::uint64_t share = root_share(call); collective == Collective::Bcast && share > 0) {
    return plan_shared_bcast(plan, call, share);
  }
  plan_rooted(plan, call);
}

}  // namespace multilane::runtime::shm
