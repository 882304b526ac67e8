// All-to-all within a node (Table 1, row 4).
//
// m = p * p * size <= B, one stage: block j of rank i goes to position i * p + j of the buffer;
// every rank puts its row (Group_seg_put), Group_sync, and gets its column (Group_seg_get).
// m > B: pairwise exchange in p - 1 rounds (round j: rank i sends to i + j and receives from
// i - j), each block in chunks of at most B bytes through [Sender_put, Pair_sync,
// Receiver_get]. The p transfers of one (round, chunk) are p consecutive stages. With at least
// p buffers a rank writes before it reads within a round (every transfer of the round moves at
// once); with fewer it goes in stage order, which is deadlock-free for any number of buffers.
#include <vector>

#include "runtime/shm/plan_builder.hpp"

namespace multilane::runtime::shm {
namespace {

void one_stage(PlanBuilder& plan, const CallShape& call) {
  const auto p = static_cast<std::uint64_t>(call.local_size);
  const std::uint64_t s = call.size;
  const auto me = static_cast<std::uint64_t>(plan.rank());
  const Stage stage = plan.stage(static_cast<std::uint32_t>(p), static_cast<std::uint32_t>(p));
  for (std::uint64_t to = 0; to < p; ++to) {
    if (to != me) plan.group_seg_put(stage, (me * p + to) * s, to * s, s);
  }
  plan.group_sync(stage, SyncRole::Writer);
  plan.group_sync(stage, SyncRole::Reader);
  const std::uint64_t last = me == p - 1 ? p - 2 : p - 1;
  for (std::uint64_t from = 0; from < p; ++from) {
    if (from != me) plan.group_seg_get(stage, (from * p + me) * s, from * s, s, from == last);
  }
}

// Small calls with no more ranks than pipeline buffers, in rows (plan_rows): a rank's row is
// the blocks it sends, and every other rank gets its block from it.
void rows(PlanBuilder& plan, const CallShape& call) {
  const auto p = static_cast<std::uint64_t>(call.local_size);
  const std::uint64_t s = call.size;
  const auto me = static_cast<std::uint64_t>(plan.rank());
  const auto put_row = [&](const Stage& stage) {
    for (std::uint64_t to = 0; to < p; ++to) {
      if (to != me) plan.group_seg_put(stage, to * s, to * s, s);
    }
  };
  const auto get_from = [&](const Stage& stage, int from) {
    plan.group_seg_get(stage, me * s, static_cast<std::uint64_t>(from) * s, s, true);
  };
  plan_rows(plan, call.local_size, p * s, put_row, get_from);
}

void pairwise(PlanBuilder& plan, const CallShape& call) {
  const int p = call.local_size;
  const int me = plan.rank();
  const std::uint64_t s = call.size;
  const std::uint64_t b = plan.geometry().buffer_size;
  const bool write_first = plan.geometry().buffers >= static_cast<std::uint32_t>(p);
  std::vector<Stage> stages(static_cast<std::size_t>(p));
  for (int round = 1; round < p; ++round) {
    const int to = (me + round) % p;
    const int from = (me - round + p) % p;
    for (std::uint64_t c = 0; c < chunk_count(s, b); ++c) {
      const Chunk chunk = chunk_at(s, b, c);
      for (Stage& stage : stages) stage = plan.stage(1, 1);  // stage of sender i: stages[i]
      const Stage& mine = stages[static_cast<std::size_t>(me)];
      const Stage& theirs = stages[static_cast<std::size_t>(from)];
      const auto write = [&] {
        plan.sender_put(mine, 0, static_cast<std::uint64_t>(to) * s + chunk.offset, chunk.length,
                        to);
        plan.pair_sync(mine, SyncRole::Writer, me);
      };
      const auto read = [&] {
        plan.pair_sync(theirs, SyncRole::Reader, from);
        plan.receiver_get(theirs, 0, static_cast<std::uint64_t>(from) * s + chunk.offset,
                          chunk.length, true);
      };
      if (write_first || me < from) {
        write();
        read();
      } else {
        read();
        write();
      }
    }
  }
}

}  // namespace

void plan_alltoall(PlanBuilder& plan, const CallShape& call) {
  if (call.local_size > 1 && call.size > 0) {
    if (fits_in_rows(call, plan.geometry())) {
      rows(plan, call);
    } else if (fits_one_stage(call, plan.geometry())) {
      one_stage(plan, call);
    } else {
      pairwise(plan, call);
    }
  }
  // The rank's own block last, so that the others do not wait for its writes meanwhile.
  const auto me = static_cast<std::uint64_t>(plan.rank());
  plan.local_copy(me * call.size, me * call.size, call.size);
}

}  // namespace multilane::runtime::shm
