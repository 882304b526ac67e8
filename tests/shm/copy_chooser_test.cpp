// CopyChooser (runtime/shm/copy_chooser.hpp): the ranks of a group take the same path for every
// learned call in every order the collectives allow, rank 0 learns from the slowest rank's
// time, and calls outside the learned classes follow the limits.
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <random>
#include <vector>

#include "runtime/shm/copy_chooser.hpp"
#include "runtime/shm/layout.hpp"
#include "shm/fake_segment.hpp"

namespace multilane::runtime::shm {
namespace {

using testing::FakeSegment;

CallShape alltoall(std::uint64_t size, int ranks) {
  CallShape call;
  call.collective = Collective::Alltoall;
  call.size = size;
  call.local_size = ranks;
  return call;
}

TEST(CopyChooser, LearnsOnlyAlltoallAndAllgatherOf4KiBTo1MiB) {
  CallShape call = alltoall(4096, 2);
  EXPECT_EQ(copy_choice_class(call), 0u);
  call.size = 4095;
  EXPECT_EQ(copy_choice_class(call), std::nullopt);
  call.size = (1 << 20) - 1;
  EXPECT_EQ(copy_choice_class(call), kCopyChoiceClasses - 1);
  call.size = 1 << 20;
  EXPECT_EQ(copy_choice_class(call), std::nullopt);
  call.collective = Collective::Allgather;
  call.size = 8192;
  EXPECT_EQ(copy_choice_class(call), kCopyChoiceClasses + 1);
  call.collective = Collective::Bcast;
  EXPECT_EQ(copy_choice_class(call), std::nullopt);
  call.collective = std::nullopt;  // barrier
  EXPECT_EQ(copy_choice_class(call), std::nullopt);
}

TEST(CopyChooser, ChoiceWordsRoundTrip) {
  for (const CopyChoice choice : {CopyChoice{true, false, true, false, 17},
                                  CopyChoice{true, true, false, true, (1ull << 59) + 3}}) {
    const CopyChoice back = unpack_choice(pack(choice));
    EXPECT_TRUE(back.valid);
    EXPECT_EQ(back.old_once, choice.old_once);
    EXPECT_EQ(back.new_once, choice.new_once);
    EXPECT_EQ(back.timing, choice.timing);
    EXPECT_EQ(back.from_serial, choice.from_serial);
    EXPECT_EQ(back.once_at(choice.from_serial - 1), choice.old_once);
    EXPECT_EQ(back.once_at(choice.from_serial), choice.new_once);
  }
  EXPECT_EQ(pack(CopyChoice{}), 0u);
  EXPECT_FALSE(unpack_choice(0).valid);
}

// Two ranks run a random program of learned alltoall calls and unlearned calls in random
// interleavings, as far as the collectives allow: a rank finishes a learned call only after
// every rank entered it; an unlearned call (a pipelined bcast from rank 0) lets rank 0 run
// ahead. Rank 0 switches paths at every chance. Every learned call must take one path on
// both ranks.
TEST(CopyChooser, RanksAgreeOnEveryCallInEveryAllowedOrder) {
  constexpr int kRanks = 2;
  constexpr PlanLearning kAlwaysSwitch{1, 0, 0, -1000};
  std::mt19937 random(7);
  for (int program = 0; program < 50; ++program) {
    FakeSegment segment(kRanks);
    std::vector<CopyChooser> choosers;
    for (int r = 0; r < kRanks; ++r) choosers.emplace_back(segment.view(), r, true, kAlwaysSwitch);
    const int calls = 60;
    std::vector<bool> learned(calls);
    for (auto&& l : learned) l = random() % 3 != 0;
    std::vector<std::vector<int>> path(kRanks, std::vector<int>(calls, -1));
    std::vector<int> next(kRanks, 0);         // the call each rank enters next
    std::vector<bool> inside(kRanks, false);  // entered `next`, not finished it
    const auto may_finish = [&](int r) {
      const int call = next[r];
      if (!learned[static_cast<std::size_t>(call)]) return true;
      for (int o = 0; o < kRanks; ++o) {
        if (next[o] < call || (next[o] == call && !inside[o])) return false;
      }
      return true;
    };
    while (next[0] < calls || next[1] < calls) {
      const int r = static_cast<int>(random() % kRanks);
      if (next[r] >= calls) continue;
      const int call = next[r];
      const auto serial = static_cast<std::uint64_t>(call + 1);
      if (!inside[r]) {
        inside[r] = true;
        if (learned[static_cast<std::size_t>(call)]) {
          path[r][call] = choosers[r].choose(alltoall(8192, kRanks), serial, false);
        }
      } else if (may_finish(r)) {
        const bool timed = choosers[r].wants_timing();
        choosers[r].finished(timed ? std::optional(std::chrono::nanoseconds(1000)) : std::nullopt,
                             8192 * kRanks);
        inside[r] = false;
        ++next[r];
      }
    }
    for (int call = 0; call < calls; ++call) {
      ASSERT_EQ(path[0][call], path[1][call]) << "program " << program << ", call " << call + 1;
    }
    EXPECT_GT(choosers[0].switches(), 5) << "program " << program;
  }
}

// Rank 0 finishes both paths in 1 us; rank 1 needs 10 us copying once and 2 us copying twice.
// The learner must see rank 1's times and move to twice.
TEST(CopyChooser, LearnsFromTheSlowestRank) {
  FakeSegment segment(2);
  CopyChooser rank0(segment.view(), 0, true, {3, 0, 0, 0.05});
  CopyChooser rank1(segment.view(), 1, true, {3, 0, 0, 0.05});
  bool last = true;
  for (std::uint64_t serial = 1; serial <= 40; ++serial) {
    const bool once = rank0.choose(alltoall(65536, 2), serial, true);
    ASSERT_EQ(rank1.choose(alltoall(65536, 2), serial, true), once) << serial;
    const auto time = [&](bool timed, int micros) {
      return timed ? std::optional(std::chrono::nanoseconds(micros * 1000)) : std::nullopt;
    };
    rank1.finished(time(rank1.wants_timing(), once ? 10 : 2), 131072);
    rank0.finished(time(rank0.wants_timing(), 1), 131072);
    last = once;
  }
  EXPECT_GE(rank0.switches(), 1);
  EXPECT_FALSE(last);
}

TEST(CopyChooser, OtherCallsAndDisabledChoosersFollowTheLimits) {
  FakeSegment segment(2);
  CopyChooser learning(segment.view(), 0, true, {1, 0, 0, -1000});
  const CopyChooser disabled(segment.view(), 0, false, {1, 0, 0, -1000});
  CallShape bcast = alltoall(65536, 2);
  bcast.collective = Collective::Bcast;
  EXPECT_TRUE(learning.learns(alltoall(65536, 2), true));
  EXPECT_FALSE(learning.learns(bcast, true));
  EXPECT_FALSE(learning.learns(alltoall(8, 2), true));       // below the classes
  EXPECT_FALSE(learning.learns(alltoall(65536, 2), false));  // cannot copy once
  EXPECT_FALSE(disabled.learns(alltoall(65536, 2), true));
  // A call that passes leaves nothing to time and nothing to learn from.
  for (std::uint64_t serial = 1; serial <= 10; ++serial) {
    learning.pass();
    EXPECT_FALSE(learning.wants_timing());
    learning.finished(std::nullopt, 65536);
  }
  EXPECT_EQ(learning.rounds(), 0);
}

}  // namespace
}  // namespace multilane::runtime::shm
