// RootShareBalancer (runtime/shm/root_share.hpp): the root's share of single-copy bcast, scatter
// and gather moves towards where the root and the others finish together, every rank takes the
// same share for every call, and each root changes only the shares of the calls it roots.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>

#include <chrono>
#include <vector>

#include "runtime/shm/call_record.hpp"
#include "runtime/shm/root_share.hpp"
#include "shm/fake_segment.hpp"

namespace multilane::runtime::shm {
namespace {

using namespace std::chrono_literals;
using testing::FakeSegment;

CallShape rooted(Collective collective, std::uint64_t size, int ranks, int root = 0) {
  CallShape call;
  call.collective = collective;
  call.size = size;
  call.local_size = ranks;
  call.root = root;
  call.single_copy = true;
  return call;
}

TEST(RootShare, DefaultsAreAQuarterOfACopyForTheRootsOwnBlock) {
  EXPECT_EQ(default_root_share(Collective::Bcast, 2), 512);  // 1/p
  EXPECT_EQ(default_root_share(Collective::Bcast, 4), 256);
  EXPECT_EQ(default_root_share(Collective::Scatter, 2), 384);  // 3/4 of 1/p
  EXPECT_EQ(default_root_share(Collective::Gather, 4), 192);
  CallShape call = rooted(Collective::Scatter, 1 << 20, 2);
  EXPECT_EQ(root_share_bytes(call), 384u << 10);
  call.root_share = 0;
  EXPECT_EQ(root_share_bytes(call), 0u);
  call.size = 5000;
  call.root_share = 100;  // 488 bytes: 448 in whole lines
  EXPECT_EQ(root_share_bytes(call), 448u);
  call.root_share = kMaxShare;  // the whole block, in whole lines
  EXPECT_EQ(root_share_bytes(call), 4992u);
}

TEST(RootShare, OnlySingleCopyRootedCallsOfSeveralRanksHaveOne) {
  EXPECT_EQ(root_share_class(rooted(Collective::Bcast, 4096, 2)), 0u);
  EXPECT_EQ(root_share_class(rooted(Collective::Bcast, 100, 2)), 0u);  // small ones: first class
  EXPECT_EQ(root_share_class(rooted(Collective::Scatter, 1 << 20, 2)), kRootShareClasses + 8);
  EXPECT_EQ(root_share_class(rooted(Collective::Gather, 1ull << 40, 2)), kRootShareWords - 1);
  CallShape call = rooted(Collective::Alltoall, 1 << 20, 2);
  EXPECT_EQ(root_share_class(call), std::nullopt);
  call = rooted(Collective::Scatter, 1 << 20, 1);
  EXPECT_EQ(root_share_class(call), std::nullopt);
  call = rooted(Collective::Scatter, 0, 2);
  EXPECT_EQ(root_share_class(call), std::nullopt);
  call = rooted(Collective::Gather, 1 << 20, 2);
  call.single_copy = false;
  EXPECT_EQ(root_share_class(call), std::nullopt);
}

TEST(RootShare, ChoiceWordsRoundTrip) {
  for (const ShareChoice choice :
       {ShareChoice{true, 0, 768, 1}, ShareChoice{true, 384, 40, (1ull << 41) - 1},
        ShareChoice{true, 1024, 0, 12345}}) {
    const ShareChoice back = unpack_share(pack(choice));
    EXPECT_TRUE(back.valid);
    EXPECT_EQ(back.old_value, choice.old_value);
    EXPECT_EQ(back.new_value, choice.new_value);
    EXPECT_EQ(back.from_serial, choice.from_serial);
  }
  EXPECT_EQ(pack(ShareChoice{}), 0u);
  EXPECT_FALSE(unpack_share(0).valid);
}

TEST(RootShare, ProposalsStepHalfwayTowardsBalance) {
  constexpr std::uint64_t kMiB = 1 << 20;
  // A root twice as slow as the other rank at 3/8: balance lies 5/16 of a block lower; half
  // of that is more than the largest step, 1/16 (64 units).
  EXPECT_EQ(propose_root_share(384, kMiB, 2, 100e-6, 50e-6), 320);
  // Others slower: the share grows, again by at most 1/16.
  EXPECT_EQ(propose_root_share(64, kMiB, 2, 20e-6, 80e-6), 128);
  // Close to balance: half the step. Others 10% slower at 1/8 on 2 ranks: the balance is
  // (88 - 80) / (2 x 88 / 896 KiB) = 40.7 KiB higher, half of it 20.4 KiB = 20 units.
  EXPECT_EQ(propose_root_share(128, kMiB, 2, 80e-6, 88e-6), 148);
  // On 4 ranks the root copies a share of three blocks: the same gap moves each share half
  // as far, (88 - 80) / (4 x 88 / 896 KiB) = 20.4 KiB, half of it 10 units.
  EXPECT_EQ(propose_root_share(128, kMiB, 4, 80e-6, 88e-6), 138);
  // Within 2 units of balance: no change.
  EXPECT_EQ(propose_root_share(384, kMiB, 2, 50e-6, 50.4e-6), 384);
  // Never below 0 nor above kMaxShare.
  EXPECT_EQ(propose_root_share(10, kMiB, 2, 90e-6, 10e-6), 0);
  EXPECT_EQ(propose_root_share(1020, kMiB, 2, 10e-6, 90e-6), kMaxShare);
  // The root copies everything: its own time per byte (90 us for 1 MiB) says how far back.
  // (5 - 90) / (2 x 90 / 1 MiB) = -0.47 MiB, half of it beyond the 1/16 step: 64 units less.
  EXPECT_EQ(propose_root_share(kMaxShare, kMiB, 2, 90e-6, 5e-6), kMaxShare - 64);
  // Nothing measured, or one rank: no change.
  EXPECT_EQ(propose_root_share(384, kMiB, 2, 50e-6, 0), 384);
  EXPECT_EQ(propose_root_share(384, kMiB, 1, 50e-6, 90e-6), 384);
}

// Ranks of one group on one fake segment, each with its balancer; run() plays one call with
// the copy times given, each rank choosing in turn, as ShmGroup does.
class Group {
 public:
  explicit Group(int ranks) : segment_(ranks) {
    for (int r = 0; r < ranks; ++r) balancers_.emplace_back(segment_.view(), r, true);
  }
  // How long the root's whole call takes at a share.
  using CallTime = std::function<std::chrono::nanoseconds(std::uint16_t share)>;
  // The share every rank took (fails the test if they differ). The call takes as long as its
  // slowest rank's copies, unless `call_time` says otherwise.
  std::uint16_t run(const CallShape& call, const std::vector<std::chrono::nanoseconds>& times,
                    const CallTime& call_time = {}) {
    ++serial_;
    std::vector<std::uint16_t> shares;
    for (RootShareBalancer& balancer : balancers_) shares.push_back(balancer.choose(call, serial_));
    for (std::size_t r = 0; r < balancers_.size(); ++r) {
      EXPECT_EQ(shares[r], shares[0]) << "rank " << r << " in call " << serial_;
      EXPECT_TRUE(balancers_[r].wants_timing());
      segment_.view().ranks[r].copy_time = pack_call_time(serial_, times[r]);
    }
    const auto took =
        call_time ? call_time(shares[0]) : *std::max_element(times.begin(), times.end());
    for (RootShareBalancer& balancer : balancers_) balancer.finished(took);
    return shares[0];
  }
  const RootShareBalancer& rank(int r) const { return balancers_[static_cast<std::size_t>(r)]; }
  std::uint64_t serial() const { return serial_; }

 private:
  FakeSegment segment_;
  std::vector<RootShareBalancer> balancers_;
  std::uint64_t serial_ = 0;
};

TEST(RootShareBalancer, TheRootPublishesAfterFiveCallsAndEveryoneTakesItFromTheNext) {
  Group group(2);
  const CallShape scatter = rooted(Collective::Scatter, 1 << 20, 2);
  // The root takes twice as long as the other rank: five calls at the default 3/8, the sixth
  // still at it (the root publishes as it starts the call), the seventh at 5/16.
  for (int i = 0; i < 6; ++i) EXPECT_EQ(group.run(scatter, {100us, 50us}), 384) << i;
  EXPECT_EQ(group.rank(0).changes(), 1);
  EXPECT_EQ(group.run(scatter, {100us, 50us}), 320);
  EXPECT_EQ(group.rank(1).changes(), 0);
}

TEST(RootShareBalancer, SharesConvergeWhereBothSidesFinishTogether) {
  // A model of the 2-rank scatter: the root copies its block in 30 us, then its share at
  // 80 us/MiB; the other rank copies the rest at 80 us/MiB. They meet at 50/160 of the block,
  // 320 units (from the default 384).
  Group group(2);
  const CallShape scatter = rooted(Collective::Scatter, 1 << 20, 2);
  std::uint16_t share = 0;
  for (int i = 0; i < 200; ++i) {
    const double part = share / 1024.0;
    const auto root = std::chrono::nanoseconds(static_cast<std::int64_t>(30e3 + 80e3 * part));
    const auto other = std::chrono::nanoseconds(static_cast<std::int64_t>(80e3 * (1 - part)));
    share = group.run(scatter, {root, other});
  }
  EXPECT_NEAR(share, 320, 4);
}

TEST(RootShareBalancer, ABalanceThatReachesZeroStaysThere) {
  // A 1 MiB gather whose root is slow whatever its share: the balance goes
  // to 0 (every rank then copies its own block, only the root exposing) and stays, in long
  // calls and in short ones (where the learner's rounds go on, between one plan and itself).
  for (const auto call_time : {80us, 1us}) {
    Group group(2);
    const CallShape gather = rooted(Collective::Gather, 1 << 20, 2);
    const Group::CallTime took = [&](std::uint16_t) { return std::chrono::nanoseconds(call_time); };
    std::vector<std::uint16_t> shares;
    for (int i = 0; i < 200; ++i) shares.push_back(group.run(gather, {90us, 5us}, took));
    EXPECT_TRUE(std::all_of(shares.begin() + 100, shares.end(),
                            [](std::uint16_t share) { return share == 0; }))
        << "call time " << call_time.count() << " us";
  }
}

TEST(RootShareBalancer, EachRootLearnsTheCallsItRootsAndClassesStayApart) {
  Group group(3);
  const CallShape from0 = rooted(Collective::Gather, 64 << 10, 3, 0);
  const CallShape from2 = rooted(Collective::Gather, 64 << 10, 3, 2);
  const CallShape bigger = rooted(Collective::Gather, 128 << 10, 3, 0);
  // Root 0 is slow, root 2 fast; calls alternate, with a larger gather between them. Calls
  // without a share (the probes) take twice as long: the roots come back to their shares.
  const Group::CallTime without_twice_as_long = [](std::uint16_t share) {
    return share == 0 ? 2us : 1us;
  };
  std::uint16_t share0 = 0, share2 = 0, share_bigger = 0;
  int bigger_at_default = 0;
  // The last share of each that copied anything (a probe may be under way at the end).
  const auto unless_probe = [](std::uint16_t& kept, std::uint16_t share) {
    if (share != 0) kept = share;
  };
  for (int i = 0; i < 41; ++i) {
    unless_probe(share0, group.run(from0, {90us, 40us, 40us}, without_twice_as_long));
    unless_probe(share2, group.run(from2, {40us, 40us, 10us}, without_twice_as_long));
    share_bigger = group.run(bigger, {80us, 80us, 80us}, without_twice_as_long);
    bigger_at_default += share_bigger == default_root_share(Collective::Gather, 3) ? 1 : 0;
  }
  EXPECT_LT(share0, default_root_share(Collective::Gather, 3));
  EXPECT_GT(share2, default_root_share(Collective::Gather, 3));
  // Balanced: no change, but for at most two probes without a share (kSamples calls each, and
  // one more while the root publishes the way back).
  EXPECT_GE(bigger_at_default, 41 - 2 * (RootShareBalancer::kSamples + 1));
  EXPECT_LT(bigger_at_default, 41);
  EXPECT_GT(group.rank(0).changes(), 0);
  EXPECT_GT(group.rank(2).changes(), 0);
  EXPECT_EQ(group.rank(1).changes(), 0);
}

// Calls of 2 ranks that take `with_share` with a share that copies anything and `without`
// without one; how many of `calls` ran without, and the share of the last.
struct PlanCounts {
  int without = 0;
  std::uint16_t last = 0;
};
PlanCounts run_plans(const CallShape& call, int calls, std::chrono::nanoseconds with_share,
                     std::chrono::nanoseconds without) {
  Group group(2);
  PlanCounts counts;
  const Group::CallTime call_time = [&](std::uint16_t share) {
    return share_bytes(call.size, share) > 0 ? with_share : without;
  };
  for (int i = 0; i < calls; ++i) {
    counts.last = group.run(call, {10us, 10us}, call_time);
    counts.without += share_bytes(call.size, counts.last) > 0 ? 0 : 1;
  }
  return counts;
}

TEST(RootShareBalancer, KeepsCallsWithoutAShareWhenTheyAreFaster) {
  // A 2-rank bcast of 8 KiB that takes 2.0 us with a share and 1.5 us without.
  const PlanCounts counts = run_plans(rooted(Collective::Bcast, 8 << 10, 2), 200, 2us, 1500ns);
  EXPECT_EQ(counts.last, 0);
  // The first batches at the default, then a probe; each probe back to the share loses.
  EXPECT_GT(counts.without, 150);
}

TEST(RootShareBalancer, ProbesWithoutAShareLessOftenWhileTheyLose) {
  // Without a share twice as slow: rounds of the learner (kSharePays) from calls 1, 32, 83,
  // 174 and 345 (rests of 20, 40, 80 and 160 calls after kSamples with the share, kSamples
  // without, and one call on each side while the root publishes), so 5 probes, each of
  // kSamples calls and one more while the root publishes the way back.
  const CallShape scatter = rooted(Collective::Scatter, 64 << 10, 2);
  const PlanCounts counts = run_plans(scatter, 400, 1us, 2us);
  EXPECT_GT(counts.last, 0);
  EXPECT_EQ(counts.without, 5 * (RootShareBalancer::kSamples + 1));
  // A probe that wins by less than kProbeMargin does not count: no switch.
  const PlanCounts close = run_plans(scatter, 400, 1us, 980ns);
  EXPECT_GT(close.last, 0);
  EXPECT_LE(close.without, 5 * (RootShareBalancer::kSamples + 1));
}

TEST(RootShareBalancer, FinishesAProbeWhoseCallsAreLong) {
  // Short calls with a share (3 us) start rounds; the probes without one take 10 us, past
  // kProbeBelow, but still count, so each probe ends, loses, and the share comes back. Rounds
  // from calls 1, 32 and 83 in 100 calls.
  const PlanCounts counts = run_plans(rooted(Collective::Scatter, 64 << 10, 2), 100, 3us, 10us);
  EXPECT_GT(counts.last, 0);
  EXPECT_EQ(counts.without, 3 * (RootShareBalancer::kSamples + 1));
}

TEST(RootShareBalancer, NeverProbesCallsLongEnoughForTheShareToDominate) {
  // 10 us calls: without a share would be faster, but the fixed price of a share is noise there.
  const PlanCounts counts = run_plans(rooted(Collective::Scatter, 1 << 20, 2), 200, 10us, 8us);
  EXPECT_GT(counts.last, 0);
  EXPECT_EQ(counts.without, 0);
}

// Twenty 1 MiB bcasts of 2 ranks in which the root copies for 10 us and the other rank for
// 90 us, the other's time stamped `lag` calls late; the root's changes of the share.
int changes_of_a_slow_other(bool root_learns, std::uint64_t lag) {
  FakeSegment segment(2);
  RootShareBalancer root(segment.view(), 0, root_learns);
  RootShareBalancer other(segment.view(), 1, true);
  const CallShape bcast = rooted(Collective::Bcast, 1 << 20, 2);
  for (std::uint64_t serial = 1; serial <= 20; ++serial) {
    const std::uint16_t share = root.choose(bcast, serial);
    EXPECT_EQ(other.choose(bcast, serial), share);
    segment.view().ranks[0].copy_time = pack_call_time(serial, 10us);
    segment.view().ranks[1].copy_time = pack_call_time(serial - lag, 90us);
    other.finished(90us);
    root.finished(90us);
  }
  return root.changes();
}

TEST(RootShareBalancer, LearnsOnlyFromTimesOfTheCallItselfAndOnlyWhenAskedTo) {
  EXPECT_GT(changes_of_a_slow_other(true, 0), 0);
  EXPECT_EQ(changes_of_a_slow_other(true, 1), 0);   // the other rank's time is an older call's
  EXPECT_EQ(changes_of_a_slow_other(false, 0), 0);  // the root keeps the default
}

}  // namespace
}  // namespace multilane::runtime::shm
