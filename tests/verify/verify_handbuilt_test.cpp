// Hand-built schedules: a correct one, then one mutation per kind of error, each with the
// exact message the verifier must print.
#include <gtest/gtest.h>

#include "multilane/platform.hpp"
#include "multilane/schedule.hpp"
#include "multilane/verify.hpp"
#include "verify/schedule_edit.hpp"

namespace multilane {
namespace {

using testing::op_at;
using testing::remove_op;
using testing::set_deps;

constexpr std::uint64_t kSeg = 4096;
constexpr std::uint64_t kSize = 2 * kSeg;

Platform four_nodes() {
  return make_uniform_platform(1, 4, 2, 1, 125e6, 50e-6, 0, 0, 0);
}
Platform nodes(int n) {
  return make_uniform_platform(1, n, 2, 1, 125e6, 50e-6, 0, 0, 0);
}

Range recv_seg(int k) {
  return {Buffer::Recv, k * kSeg, kSeg};
}

// Broadcast from rank 0 in two segments over a binary tree 0 -> {1, 2}, 1 -> 3.
// Rank 0 feeds rank 1 on lane 0 and rank 2 on lane 1; rank 1 forwards each segment as soon as
// it has it.
Schedule tree_bcast() {
  ScheduleBuilder b(Collective::Bcast, "hand-tree", 4, 0, kSize, kSeg);
  b.start_rank(0);
  for (int k = 0; k < 2; ++k) b.send(1, recv_seg(k), 0, {});
  for (int k = 0; k < 2; ++k) b.send(2, recv_seg(k), 1, {});
  b.start_rank(1);
  const OpIndex r0 = b.recv(0, recv_seg(0), 0, {});
  const OpIndex r1 = b.recv(0, recv_seg(1), 0, {});
  b.send(3, recv_seg(0), kAnyLane, {r0});
  b.send(3, recv_seg(1), kAnyLane, {r1});
  b.start_rank(2);
  for (int k = 0; k < 2; ++k) b.recv(0, recv_seg(k), 1, {});
  b.start_rank(3);
  for (int k = 0; k < 2; ++k) b.recv(1, recv_seg(k), kAnyLane, {});
  return b.finish();
}

std::vector<std::string> errors_of(const Schedule& s, const Platform& p) {
  return verify_schedule(s, p).errors;
}
using Errors = std::vector<std::string>;

TEST(VerifyHandBuilt, CorrectBroadcastPasses) {
  const VerifyReport report = verify_schedule(tree_bcast(), four_nodes());
  EXPECT_TRUE(report.ok()) << ::testing::PrintToString(report.errors);
  EXPECT_EQ(report.ops, 12u);
  EXPECT_EQ(report.transfers, 6u);
}

TEST(VerifyHandBuilt, DroppedReceive) {
  const Schedule s = remove_op(tree_bcast(), 3, 1);
  EXPECT_EQ(errors_of(s, four_nodes()),
            Errors{"rank 1 sends 2 messages to rank 3 but rank 3 posts 1 receive from rank 1 "
                   "(first unmatched: rank 1 op #3 send recv[4096,8192))"});
}

TEST(VerifyHandBuilt, SwappedSendsDeliverWrongBytes) {
  Schedule s = tree_bcast();
  std::swap(op_at(s, 1, 2), op_at(s, 1, 3));  // ranges and dependencies travel together
  EXPECT_EQ(errors_of(s, four_nodes()),
            Errors{"rank 3 ends with wrong bytes: recv[0,4096) holds rank 0 input[4096,8192) "
                   "but should hold rank 0 input[0,4096)"});
}

TEST(VerifyHandBuilt, SwappedSendsOfDifferentLengthsMismatch) {
  Schedule s = tree_bcast();
  op_at(s, 0, 0).range.length = 100;  // segment 0 to rank 1 is now short
  op_at(s, 1, 0).range.length = 100;
  std::swap(op_at(s, 0, 0).range, op_at(s, 0, 1).range);
  EXPECT_EQ(errors_of(s, four_nodes()),
            (Errors{"message #0 from rank 0 to rank 1: rank 0 op #0 sends recv[4096,8192) (4096 "
                    "bytes) but rank 1 op #0 receives into recv[0,100) (100 bytes)",
                    "message #1 from rank 0 to rank 1: rank 0 op #1 sends recv[0,100) (100 "
                    "bytes) but rank 1 op #1 receives into recv[4096,8192) (4096 bytes)"}));
}

TEST(VerifyHandBuilt, ShortenedReceive) {
  Schedule s = tree_bcast();
  op_at(s, 3, 1).range.length -= 1;
  EXPECT_EQ(errors_of(s, four_nodes()),
            Errors{"message #1 from rank 1 to rank 3: rank 1 op #3 sends recv[4096,8192) (4096 "
                   "bytes) but rank 3 op #1 receives into recv[4096,8191) (4095 bytes)"});
}

TEST(VerifyHandBuilt, ShortenedMessageLeavesByteUnwritten) {
  Schedule s = tree_bcast();
  op_at(s, 1, 3).range.length -= 1;
  op_at(s, 3, 1).range.length -= 1;
  EXPECT_EQ(errors_of(s, four_nodes()),
            Errors{"rank 3 ends with wrong bytes: recv[8191,8192) was never written"});
}

TEST(VerifyHandBuilt, MissingDependencyIsARace) {
  Schedule s = tree_bcast();
  set_deps(s, 1, 2, {});
  const Errors errors = errors_of(s, four_nodes());
  ASSERT_FALSE(errors.empty());
  EXPECT_EQ(errors.front(),
            "rank 1 op #2 (send to rank 3) reads recv[0,4096) written by op #0 (recv from rank 0) "
            "but does not depend on it");
}

TEST(VerifyHandBuilt, ReadBeforeWriteInExecution) {
  // Rank 1 forwards segment 0 before receiving it, and says so (depends on nothing): the race
  // check and the execution both notice.
  Schedule s = tree_bcast();
  std::swap(op_at(s, 1, 0), op_at(s, 1, 2));  // send first, recv third
  set_deps(s, 1, 0, {});
  const Errors errors = errors_of(s, four_nodes());
  EXPECT_EQ(errors, (Errors{"rank 1 op #2 (recv from rank 0) writes recv[0,4096) read by op #0 "
                            "(send to rank 3) but does not depend on it",
                            "rank 1 op #0 (send to rank 3) reads recv[0,4096) before it is written",
                            // rank 1 now posts its receives from rank 0 in the other order (FIFO)
                            "rank 1 ends with wrong bytes: recv[0,4096) holds rank 0 "
                            "input[4096,8192) but should hold rank 0 input[0,4096)",
                            "rank 3 ends with wrong bytes: recv[0,4096) holds bytes that were read "
                            "before being written"}));
}

TEST(VerifyHandBuilt, WrongLaneForNode) {
  Schedule s = tree_bcast();
  op_at(s, 1, 2).lane = 2;
  EXPECT_EQ(
      errors_of(s, four_nodes()),
      Errors{"rank 1 op #2 (send to rank 3) uses lane 2 but node site0-n1 has 2 lanes (0..1)"});
}

TEST(VerifyHandBuilt, LanesOfMatchedEndsDiffer) {
  Schedule s = tree_bcast();
  op_at(s, 2, 0).lane = 0;
  EXPECT_EQ(errors_of(s, four_nodes()),
            Errors{"message #0 from rank 0 to rank 2: rank 0 op #2 uses lane 1 but rank 2 op #0 "
                   "uses lane 0"});
}

TEST(VerifyHandBuilt, NamedLaneMissingOnTheOtherNode) {
  Platform p = four_nodes();
  p.nodes[3].lanes.resize(1);
  Schedule s = tree_bcast();
  op_at(s, 1, 2).lane = 1;  // rank 3 receives with kAnyLane but has lane 0 only
  EXPECT_EQ(errors_of(s, p),
            Errors{"message #0 from rank 1 to rank 3: rank 1 op #2 uses lane 1 but rank 3 (op #0, "
                   "any lane) is on node site0-n3 with 1 lane (0..0)"});
}

TEST(VerifyHandBuilt, BothReceiveFirstDeadlocks) {
  ScheduleBuilder b(Collective::Allgather, "hand-exchange", 2, 0, 10, 0);
  for (int r = 0; r < 2; ++r) {
    b.start_rank(r);
    const OpIndex got =
        b.recv(1 - r, {Buffer::Recv, static_cast<std::uint64_t>(1 - r) * 10, 10}, kAnyLane, {});
    b.send(1 - r, {Buffer::Send, 0, 10}, kAnyLane, {got});
    b.copy({Buffer::Recv, static_cast<std::uint64_t>(r) * 10, 10}, {Buffer::Send, 0, 10}, {});
  }
  EXPECT_EQ(errors_of(b.finish(), nodes(2)),
            Errors{"deadlock: rank 0 op #0 (recv from rank 1) waits for its match rank 1 op #1 "
                   "(send to rank 0), which waits for its dependency rank 1 op #0 (recv from rank "
                   "0), which waits for its match rank 0 op #1 (send to rank 1), which waits for "
                   "its dependency rank 0 op #0 (recv from rank 1) (4 of 6 operations never "
                   "complete)"});
}

TEST(VerifyHandBuilt, FifoOrderDeadlocks) {
  // Rank 1 takes message #0 from rank 0 only after hearing from rank 2, which waits for rank
  // 0's third send, which comes after message #1: stuck behind message #0 on the pair 0->1.
  ScheduleBuilder b(Collective::Bcast, "hand-fifo", 3, 0, 30, 0);
  b.start_rank(0);
  b.send(1, {Buffer::Recv, 0, 10}, kAnyLane, {});
  const OpIndex second = b.send(1, {Buffer::Recv, 10, 10}, kAnyLane, {});
  b.send(2, {Buffer::Recv, 0, 30}, kAnyLane, {second});
  b.start_rank(1);
  const OpIndex from2 = b.recv(2, {Buffer::Recv, 20, 10}, kAnyLane, {});
  b.recv(0, {Buffer::Recv, 0, 10}, kAnyLane, {from2});
  b.recv(0, {Buffer::Recv, 10, 10}, kAnyLane, {});
  b.start_rank(2);
  const OpIndex all = b.recv(0, {Buffer::Recv, 0, 30}, kAnyLane, {});
  b.send(1, {Buffer::Recv, 20, 10}, kAnyLane, {all});
  EXPECT_EQ(errors_of(b.finish(), nodes(3)),
            Errors{"deadlock: rank 0 op #1 (send to rank 1) waits for the earlier message of the "
                   "pair at rank 1 op #1 (recv from rank 0), which waits for its dependency rank 1 "
                   "op #0 (recv from rank 2), which waits for its match rank 2 op #1 (send to rank "
                   "1), which waits for its dependency rank 2 op #0 (recv from rank 0), which "
                   "waits for its match rank 0 op #2 (send to rank 2), which waits for its "
                   "dependency rank 0 op #1 (send to rank 1) (8 of 8 operations never complete)"});
}

TEST(VerifyHandBuilt, SendToItself) {
  Schedule s = tree_bcast();
  op_at(s, 1, 2).peer = 1;
  EXPECT_EQ(errors_of(s, four_nodes()), Errors{"rank 1 op #2 (send to rank 1) sends to itself"});
}

TEST(VerifyHandBuilt, PeerOutOfRange) {
  Schedule s = tree_bcast();
  op_at(s, 3, 0).peer = 9;
  EXPECT_EQ(errors_of(s, four_nodes()),
            Errors{"rank 3 op #0 (recv from rank 9) names peer 9 but ranks are 0..3"});
}

TEST(VerifyHandBuilt, RangeOutsideBuffer) {
  Schedule s = tree_bcast();
  op_at(s, 2, 1).range.offset = 4097;
  EXPECT_EQ(errors_of(s, four_nodes()),
            Errors{"rank 2 op #1 (recv from rank 0) writes recv[4097,8193) beyond the end of the "
                   "recv buffer (8192 bytes)"});
}

TEST(VerifyHandBuilt, DependencyOnLaterOp) {
  Schedule s = tree_bcast();
  s.deps[op_at(s, 1, 2).deps_begin] = 3;
  EXPECT_EQ(errors_of(s, four_nodes()),
            Errors{"rank 1 op #2 (send to rank 3) depends on op #3, which is not an earlier "
                   "operation of rank 1"});
}

TEST(VerifyHandBuilt, ScratchNeedsToBeRequested) {
  ScheduleBuilder b(Collective::Bcast, "hand-scratch", 2, 0, 10, 0);
  b.start_rank(0);
  b.send(1, {Buffer::Recv, 0, 10}, kAnyLane, {});
  b.start_rank(1);
  const OpIndex got = b.recv(0, {Buffer::Scratch, 0, 10}, kAnyLane, {});
  b.copy({Buffer::Recv, 0, 10}, {Buffer::Scratch, 0, 10}, {got});
  const Schedule without = b.finish();
  EXPECT_EQ(errors_of(without, nodes(2)),
            (Errors{"rank 1 op #0 (recv from rank 0) writes scratch[0,10) beyond the end of the "
                    "scratch buffer (0 bytes)",
                    "rank 1 op #1 (copy) reads scratch[0,10) beyond the end of the scratch buffer "
                    "(0 bytes)"}));
  Schedule with = without;
  with.scratch_bytes[1] = 10;
  EXPECT_TRUE(verify_schedule(with, nodes(2)).ok());
}

TEST(VerifyHandBuilt, CopyRangesMustAgree) {
  ScheduleBuilder b(Collective::Allgather, "hand-copy", 1, 0, 10, 0);
  b.start_rank(0);
  b.copy({Buffer::Recv, 0, 10}, {Buffer::Send, 0, 9}, {});
  EXPECT_EQ(errors_of(b.finish(), nodes(1)),
            Errors{"rank 0 op #0 (copy) copies send[0,9) (9 bytes) into recv[0,10) (10 bytes): "
                   "lengths differ"});
}

TEST(VerifyHandBuilt, SendBufferIsReadOnly) {
  ScheduleBuilder b(Collective::Allgather, "hand-copy", 1, 0, 10, 0);
  b.start_rank(0);
  b.copy({Buffer::Recv, 0, 10}, {Buffer::Send, 0, 10}, {});
  b.copy({Buffer::Send, 0, 10}, {Buffer::Recv, 0, 10}, {0});
  EXPECT_EQ(errors_of(b.finish(), nodes(1)),
            Errors{"rank 0 op #1 (copy) writes send[0,10), but the send buffer is the caller's "
                   "read-only input"});
}

TEST(VerifyHandBuilt, UnorderedWritesRace) {
  ScheduleBuilder b(Collective::Gather, "hand-waw", 3, 0, 10, 0);
  b.start_rank(0);
  b.copy({Buffer::Recv, 0, 10}, {Buffer::Send, 0, 10}, {});
  b.recv(1, {Buffer::Recv, 10, 10}, kAnyLane, {});
  b.recv(2, {Buffer::Recv, 10, 20}, kAnyLane, {});  // overlaps rank 1's block
  b.start_rank(1);
  b.send(0, {Buffer::Send, 0, 10}, kAnyLane, {});
  b.start_rank(2);
  b.send(0, {Buffer::Send, 0, 10}, kAnyLane, {});
  Schedule s = b.finish();
  op_at(s, 2, 0).range.length = 10;
  op_at(s, 0, 2).range = {Buffer::Recv, 15, 10};
  const Errors errors = errors_of(s, nodes(3));
  ASSERT_FALSE(errors.empty());
  EXPECT_EQ(errors.front(),
            "rank 0 op #2 (recv from rank 2) writes recv[15,20) also written by "
            "op #1 (recv from rank 1) but does not depend on it");
}

TEST(VerifyHandBuilt, MaxErrorsBoundsTheReport) {
  Schedule s = tree_bcast();
  for (int r = 1; r < 4; ++r) {
    for (OpIndex i = 0; i < 2; ++i) op_at(s, r, i).range.offset = 1u << 20;
  }
  const VerifyReport report = verify_schedule(s, four_nodes(), {.max_errors = 2});
  EXPECT_EQ(report.errors.size(), 2u);
  EXPECT_TRUE(report.truncated);
  EXPECT_FALSE(verify_schedule(s, four_nodes(), {.max_errors = 8}).truncated);
}

TEST(VerifyHandBuilt, RankCountMustMatchPlatform) {
  EXPECT_EQ(errors_of(tree_bcast(), nodes(5)),
            Errors{"schedule has 4 ranks but platform uniform places 5"});
}

}  // namespace
}  // namespace multilane
