// Mutations of real algorithm schedules must all be caught: a deleted receive, two sends
// with their ranges swapped, one message shortened by a byte at both ends. The schedules are
// built by the registry's builders on an uneven two-site platform.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <string>
#include <vector>

#include "multilane/algorithms.hpp"
#include "multilane/platform.hpp"
#include "multilane/verify.hpp"
#include "verify/schedule_edit.hpp"

namespace multilane {
namespace {

using testing::op_at;
using testing::remove_op;

// Two sites of 3 and 2 nodes with 2 lanes and 2 cores: 10 ranks.
Platform two_sites() {
  Platform p = make_uniform_platform(2, 3, 2, 2, 125e6, 50e-6, 10e-3, 1.25e9, 0);
  p.sites[1].nodes.pop_back();
  p.nodes.pop_back();
  p.place_block(p.total_cores());
  return p;
}

struct Target {
  Collective collective;
  const char* algorithm;
  // Every byte reaches each rank once. vandegeijn's allgather for p not a power of two sends
  // some bytes twice (even back to the root), so losing one copy can go unnoticed.
  bool delivers_once = true;
};

constexpr Target kTargets[] = {
    {Collective::Bcast, "multilane"},
    {Collective::Bcast, "chain"},
    {Collective::Bcast, "vandegeijn", false},
    {Collective::Scatter, "multilane"},
    {Collective::Gather, "binomial"},
    {Collective::Allgather, "ring"},
    {Collective::Allgather, "recursive-doubling"},
    {Collective::Alltoall, "pairwise"},
};

Schedule build(const Platform& platform, const Target& t) {
  return build_schedule(platform, t.collective, t.algorithm,
                        {.root = 1, .size = 1000, .segment = 300});
}

std::string name(const Target& t) {
  return fmt::format("{}/{}", to_string(t.collective), t.algorithm);
}

// Global index of every op of a kind.
std::vector<std::pair<int, OpIndex>> ops_of_kind(const Schedule& s, OpKind kind) {
  std::vector<std::pair<int, OpIndex>> out;
  for (int r = 0; r < s.num_ranks(); ++r) {
    const auto program = s.program(r);
    for (OpIndex i = 0; i < program.size(); ++i) {
      if (program[i].kind == kind) out.emplace_back(r, i);
    }
  }
  return out;
}

// The receive matching the send at (rank, index): the k-th receive from rank at the peer.
std::pair<int, OpIndex> matching_recv(const Schedule& s, int rank, OpIndex index) {
  const auto program = s.program(rank);
  const int peer = program[index].peer;
  int k = 0;
  for (OpIndex i = 0; i < index; ++i) {
    if (program[i].kind == OpKind::Send && program[i].peer == peer) ++k;
  }
  const auto peer_program = s.program(peer);
  for (OpIndex i = 0; i < peer_program.size(); ++i) {
    const Op& op = peer_program[i];
    if (op.kind == OpKind::Recv && op.peer == rank && k-- == 0) return {peer, i};
  }
  ADD_FAILURE() << "no matching receive";
  return {peer, 0};
}

TEST(VerifyMutations, UnmutatedSchedulesPass) {
  const Platform platform = two_sites();
  for (const Target& t : kTargets) {
    const VerifyReport r = verify_schedule(build(platform, t), platform);
    EXPECT_TRUE(r.ok()) << name(t) << ": " << ::testing::PrintToString(r.errors);
  }
}

TEST(VerifyMutations, EveryDeletedReceiveIsCaught) {
  const Platform platform = two_sites();
  for (const Target& t : kTargets) {
    const Schedule s = build(platform, t);
    for (const auto& [rank, index] : ops_of_kind(s, OpKind::Recv)) {
      EXPECT_FALSE(verify_schedule(remove_op(s, rank, index), platform).ok())
          << name(t) << ": deleting rank " << rank << " op #" << index;
    }
  }
}

TEST(VerifyMutations, SwappedSendRangesAreCaught) {
  const Platform platform = two_sites();
  for (const Target& t : kTargets) {
    const Schedule s = build(platform, t);
    int swaps = 0;
    const auto sends = ops_of_kind(s, OpKind::Send);
    for (std::size_t k = 1; k < sends.size(); ++k) {
      const auto [rank, a] = sends[k - 1];
      const auto [rank_b, b] = sends[k];
      if (rank != rank_b) continue;
      Schedule m = s;
      if (op_at(m, rank, a).range == op_at(m, rank, b).range) continue;
      std::swap(op_at(m, rank, a).range, op_at(m, rank, b).range);
      ++swaps;
      const VerifyReport r = verify_schedule(m, platform);
      EXPECT_FALSE(r.ok()) << name(t) << ": swapping rank " << rank << " ops #" << a << " and #"
                           << b;
    }
    EXPECT_GT(swaps, 0) << name(t);
  }
}

TEST(VerifyMutations, MessageShortenedByOneByteIsCaught) {
  const Platform platform = two_sites();
  for (const Target& t : kTargets) {
    const Schedule s = build(platform, t);
    for (const auto& [rank, index] : ops_of_kind(s, OpKind::Send)) {
      Schedule m = s;
      // One end only: the lengths differ.
      op_at(m, rank, index).range.length -= 1;
      EXPECT_FALSE(verify_schedule(m, platform).ok())
          << name(t) << ": shortening rank " << rank << " op #" << index;
      // Both ends: a byte is missing somewhere.
      if (!t.delivers_once) continue;
      const auto [peer, recv] = matching_recv(s, rank, index);
      op_at(m, peer, recv).range.length -= 1;
      EXPECT_FALSE(verify_schedule(m, platform).ok())
          << name(t) << ": shortening rank " << rank << " op #" << index << " and rank " << peer
          << " op #" << recv;
    }
  }
}

}  // namespace
}  // namespace multilane
