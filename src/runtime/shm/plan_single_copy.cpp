// Single copy (plan.hpp): the exposing ranks' buffers are read or written in place by the
// others, through cross-memory attach, in one stage.
#include "runtime/shm/plan_builder.hpp"
#include "runtime/shm/root_share.hpp"

namespace multilane::runtime::shm {

namespace {

// Bcast, scatter and gather with the root copying too: a root that only exposed its buffer
// would sit idle (bcast) or copy only its own block (scatter, gather) while the others copy
// all of theirs. Every rank exposes its buffer instead; the root puts the last `share` bytes
// of every other rank's block into that rank's receive buffer (gather: gets them from the
// rank's send buffer) while the rank copies the rest itself, so the p ranks copy at once; then
// everyone waits until everyone released the stage (a rank's buffer is done only when the
// root's copy is).
void plan_shared_rooted(PlanBuilder& plan, const CallShape& call, std::uint64_t share) {
  const int p = call.local_size;
  const int me = plan.rank();
  const bool root = me == call.root;
  const Collective collective = *call.collective;
  const bool gather = collective == Collective::Gather;
  const std::uint64_t s = call.size;
  const std::uint64_t rest = s - share;
  // Where rank r's block is in the root's buffer.
  const auto block = [&](int r) {
    return collective == Collective::Bcast ? 0 : static_cast<std::uint64_t>(r) * s;
  };
  const auto everyone = static_cast<std::uint32_t>(p);
  const Stage stage = plan.stage(everyone, everyone);
  plan.expose(stage, /*recv_buffer=*/root == gather);
  plan.group_sync(stage, SyncRole::Writer);
  plan.group_sync(stage, SyncRole::Reader);
  if (root) {
    if (collective == Collective::Scatter) plan.local_copy(0, block(me), s);
    if (gather) plan.local_copy(block(me), 0, s);
    for (int k = 1; k < p; ++k) {
      const int peer = (call.root + k) % p;
      if (gather) {
        plan.direct_get(stage, peer, rest, block(peer) + rest, share, k == p - 1);
      } else {
        plan.direct_put(stage, peer, block(peer) + rest, rest, share, k == p - 1);
      }
    }
  } else if (gather) {
    plan.direct_put(stage, call.root, 0, block(me), rest, true);
  } else {
    plan.direct_get(stage, call.root, block(me), 0, rest, true);
  }
  plan.wait_released(stage);
}

// Bcast and scatter (root exposes its message or blocks) and gather (root exposes its receive
// buffer) too small for a share: one exposing rank, p - 1 copying ranks.
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
  if (const std::uint64_t share = root_share_bytes(call); share > 0) {
    return plan_shared_rooted(plan, call, share);
  }
  plan_rooted(plan, call);
}

}  // namespace multilane::runtime::shm
