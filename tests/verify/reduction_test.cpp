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

// A scan's rank i must hold x_0 (+) ... (+) x_i: a rank that adds a later rank's input, or
// misses an earlier one, is named with the ranks it should hold.
TEST(ReductionVerify, AScanHoldingTooManyOrTooFewRanksIsNamed) {
  ScheduleBuilder b(Collective::Scan, "test", 3, 0, kSize, 0);
  b.set_element_size(4);
  b.start_rank(0);
  const OpIndex own = b.copy(recv_all(), send_all());
  b.recv_reduce(1, recv_all(), kAnyLane, {own});  // rank 0 takes rank 1's input too
  b.start_rank(1);
  b.send(0, send_all());
  b.copy(recv_all(), send_all());  // rank 1 never gets rank 0's
  b.start_rank(2);
  b.copy(recv_all(), send_all());
  const VerifyReport report = verify_schedule(b.finish(), ranks(3), {.max_errors = 3});
  ASSERT_EQ(report.errors.size(), 3u);
  EXPECT_EQ(report.errors[0],
            "rank 0 ends with wrong bytes: recv[0,8) holds the reduction of ranks 0-1 "
            "input[0,8) but should hold that of rank 0 (rank 1 too many)");
  EXPECT_EQ(report.errors[1],
            "rank 1 ends with wrong bytes: recv[0,8) holds the reduction of rank 1 input[0,8) "
            "but should hold that of ranks 0-1 (rank 0 missing)");
  EXPECT_EQ(report.errors[2],
            "rank 2 ends with wrong bytes: recv[0,8) holds the reduction of rank 2 input[0,8) "
            "but should hold that of every rank (ranks 0-1 missing)");
}

// Rank 0's receive buffer of an exscan is empty: a schedule that writes it is caught.
TEST(ReductionVerify, AnExscanThatWritesRankZerosResultIsCaught) {
  ScheduleBuilder b(Collective::Exscan, "test", 2, 0, kSize, 0);
  b.set_element_size(4);
  b.start_rank(0);
  b.copy(recv_all(), send_all());
  b.send(1, send_all());
  b.start_rank(1);
  b.recv(0, recv_all());
  const std::string error = first_error(b.finish(), 2);
  EXPECT_NE(error.find("rank 0 op #0 (copy"), std::string::npos) << error;
  EXPECT_NE(error.find("recv[0,8)"), std::string::npos) << error;
}

// Every scan algorithm keeps rank order, so it serves operations that are not commutative.
TEST(ReductionVerify, EveryScanAlgorithmKeepsRankOrder) {
  const Platform two_sites = make_uniform_platform(2, 3, 1, 1, 125e6, 50e-6, 1e9, 5e-3, 0);
  for (const Collective c : {Collective::Scan, Collective::Exscan}) {
    for (const std::string_view name : {"chain", "recursive-doubling", "multilane-sites"}) {
      for (int p : {1, 2, 3, 5, 8, 13}) {
        const Platform platform = ranks(p);
        const BuildParams params{.size = 64, .segment = 16, .element_size = 4};
        const VerifyReport report = verify_schedule(build_schedule(platform, c, name, params),
                                                    platform, {.commutative = false});
        EXPECT_TRUE(report.ok()) << to_string(c) << "/" << name << " p=" << p << ": "
                                 << report.errors.front();
      }
      const BuildParams params{.size = 64, .segment = 16, .element_size = 4};
      const VerifyReport report = verify_schedule(build_schedule(two_sites, c, name, params),
                                                  two_sites, {.commutative = false});
      EXPECT_TRUE(report.ok()) << to_string(c) << "/" << name
                               << " on two sites: " << (report.ok() ? "" : report.errors.front());
    }
  }
}

}  // namespace
}  // namespace multilane
