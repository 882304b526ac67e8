// The verifier on reductions: hand-built schedules where one contribution is dropped, counted
// twice, combined with the wrong elements or split mid-element are each caught with their exact
// message; operands out of rank order are flagged for an operation that is not commutative, and
// the real builders are checked against that rule.
#include <gtest/gtest.h>

#include "multilane/algorithms.hpp"
#include "multilane/platform.hpp"
#include "multilane/verify.hpp"

namespace multilane {
namespace {

Platform ranks(int p) {
  return make_uniform_platform(1, p, 1, 1, 125e6, 50e-6, 0, 0, 0);
}

constexpr std::uint64_t kSize = 8;  // two 4-byte elements

Range send_all() {
  return {Buffer::Send, 0, kSize};
}
Range recv_all() {
  return {Buffer::Recv, 0, kSize};
}

// A reduce of kSize bytes to rank 0 on 3 ranks; each test writes the programs.
ScheduleBuilder reduce_builder() {
  ScheduleBuilder b(Collective::Reduce, "test", 3, 0, kSize, 0);
  b.set_element_size(4);
  return b;
}

std::string first_error(const Schedule& s, int p, VerifyOptions options = {}) {
  const VerifyReport report = verify_schedule(s, ranks(p), options);
  return report.ok() ? "" : report.errors.front();
}

TEST(ReductionVerify, AChainReduceVerifies) {
  ScheduleBuilder b = reduce_builder();
  b.start_rank(0);
  const OpIndex own = b.copy(recv_all(), send_all());
  b.recv_reduce(1, recv_all(), kAnyLane, {own});
  b.start_rank(1);
  b.need_scratch(kSize);
  const OpIndex mine = b.copy({Buffer::Scratch, 0, kSize}, send_all());
  const OpIndex both = b.recv_reduce(2, {Buffer::Scratch, 0, kSize}, kAnyLane, {mine});
  b.send(0, {Buffer::Scratch, 0, kSize}, kAnyLane, {both});
  b.start_rank(2);
  b.send(1, send_all());
  const Schedule s = b.finish();
  EXPECT_EQ(first_error(s, 3), "");
  // In rank order too: rank 0 (+) (rank 1 (+) rank 2).
  EXPECT_EQ(first_error(s, 3, {.commutative = false}), "");
}

TEST(ReductionVerify, ADroppedContributionIsNamed) {
  ScheduleBuilder b = reduce_builder();
  b.start_rank(0);
  const OpIndex own = b.copy(recv_all(), send_all());
  b.recv_reduce(1, recv_all(), kAnyLane, {own});
  b.start_rank(1);
  b.send(0, send_all());  // forgets rank 2
  b.start_rank(2);
  EXPECT_EQ(first_error(b.finish(), 3),
            "rank 0 ends with wrong bytes: recv[0,8) holds the reduction of ranks 0-1 "
            "input[0,8) but should hold that of every rank (rank 2 missing)");
}

TEST(ReductionVerify, AContributionCountedTwiceIsNamed) {
  ScheduleBuilder b = reduce_builder();
  b.start_rank(0);
  const OpIndex own = b.copy(recv_all(), send_all());
  const OpIndex first = b.recv_reduce(1, recv_all(), kAnyLane, {own});
  b.recv_reduce(2, recv_all(), kAnyLane, {first});
  b.start_rank(1);
  b.need_scratch(kSize);
  const OpIndex mine = b.copy({Buffer::Scratch, 0, kSize}, send_all());
  const OpIndex both = b.recv_reduce(2, {Buffer::Scratch, 0, kSize}, kAnyLane, {mine});
  b.send(0, {Buffer::Scratch, 0, kSize}, kAnyLane, {both});
  b.start_rank(2);
  b.send(1, send_all());
  b.send(0, send_all());
  EXPECT_EQ(first_error(b.finish(), 3),
            "rank 0 op #2 (recv-reduce from rank 2) counts rank 2's input[0,8) twice in "
            "recv[0,8)");
}

TEST(ReductionVerify, AMisplacedContributionIsNamed) {
  ScheduleBuilder b = reduce_builder();
  b.start_rank(0);
  const OpIndex own = b.copy(recv_all(), send_all());
  b.recv_reduce(1, {Buffer::Recv, 0, 4}, kAnyLane, {own});
  b.recv_reduce(1, {Buffer::Recv, 4, 4}, kAnyLane, {own});
  b.start_rank(1);
  b.send(0, {Buffer::Send, 4, 4});  // the two halves swapped
  b.send(0, {Buffer::Send, 0, 4});
  b.start_rank(2);
  EXPECT_EQ(first_error(b.finish(), 3),
            "rank 0 op #1 (recv-reduce from rank 1) combines rank 1 input[4,8) into recv[0,4), "
            "which holds rank 0 input[0,4): different elements");
}

TEST(ReductionVerify, CombiningBytesNobodyWroteIsNamed) {
  ScheduleBuilder b = reduce_builder();
  b.start_rank(0);
  b.recv_reduce(1, recv_all(), kAnyLane, {});  // the accumulator was never filled
  b.start_rank(1);
  b.send(0, send_all());
  b.start_rank(2);
  EXPECT_EQ(first_error(b.finish(), 3),
            "rank 0 op #0 (recv-reduce from rank 1) combines into recv[0,8) before it is written");
}

TEST(ReductionVerify, ARangeThatSplitsAnElementIsNamed) {
  ScheduleBuilder b = reduce_builder();
  b.start_rank(0);
  const OpIndex own = b.copy(recv_all(), send_all());
  const OpIndex a = b.recv_reduce(1, {Buffer::Recv, 0, 6}, kAnyLane, {own});
  b.recv_reduce(1, {Buffer::Recv, 6, 2}, kAnyLane, {a});
  b.start_rank(1);
  b.send(0, {Buffer::Send, 0, 6});
  b.send(0, {Buffer::Send, 6, 2});
  b.start_rank(2);
  EXPECT_EQ(first_error(b.finish(), 3),
            "rank 0 op #1 (recv-reduce from rank 1) touches recv[0,6), which is not a whole "
            "number of 4-byte elements");
}

TEST(ReductionVerify, OperandsOutOfRankOrderAreFlaggedOnlyForNonCommutativeOperations) {
  ScheduleBuilder b = reduce_builder();
  b.start_rank(0);
  const OpIndex own = b.copy(recv_all(), send_all());
  const OpIndex two = b.recv_reduce(2, recv_all(), kAnyLane, {own});  // rank 2 before rank 1
  b.recv_reduce(1, recv_all(), kAnyLane, {two});
  b.start_rank(1);
  b.send(0, send_all());
  b.start_rank(2);
  b.send(0, send_all());
  const Schedule s = b.finish();
  EXPECT_EQ(first_error(s, 3), "");
  EXPECT_EQ(first_error(s, 3, {.commutative = false}),
            "rank 0 op #1 (recv-reduce from rank 2) combines rank 0 (+) rank 2 in recv[0,8): "
            "operands out of rank order, but the operation is not commutative");
}

// MPICH's binomial reduce to root 0 keeps rank order (its children are combined smallest
// subtree first: x0 (+) x1, then (+) x2..x3, ...), the ring does not.
TEST(ReductionVerify, BinomialReduceToRankZeroKeepsRankOrderAndTheRingDoesNot) {
  const Platform platform = ranks(8);
  const BuildParams params{.root = 0, .size = 64, .element_size = 4};
  EXPECT_TRUE(verify_schedule(build_schedule(platform, Collective::Reduce, "binomial", params),
                              platform, {.commutative = false})
                  .ok());
  const VerifyReport ring =
      verify_schedule(build_schedule(platform, Collective::Allreduce, "ring", params), platform,
                      {.commutative = false});
  ASSERT_FALSE(ring.ok());
  EXPECT_NE(ring.errors.front().find("operands out of rank order"), std::string::npos)
      << ring.errors.front();
}

}  // namespace
}  // namespace multilane
