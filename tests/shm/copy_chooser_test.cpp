// CopyChooser (runtime/shm/copy_chooser.hpp): the ranks of a group take the same path for every
// learned call in every order the collectives allow, whichever rank decides it, the decider
// learns from the slowest rank's time, and calls outside the learned classes follow the limits.
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <random>
#include <vector>

#include "runtime/shm/call_record.hpp"
#include "runtime/shm/copy_chooser.hpp"
#include "runtime/shm/layout.hpp"
#include "shm/fake_segment.hpp"

namespace multilane::runtime::shm {
namespace {

using testing::FakeSegment;

CallShape call_of(Collective collective, std::uint64_t size, int ranks, int root = 0) {
  CallShape call;
  call.collective = collective;
  call.root = root;
  call.size = size;
  call.local_size = ranks;
  return call;
}

CallShape alltoall(std::uint64_t size, int ranks) {
  return call_of(Collective::Alltoall, size, ranks);
}

TEST(CopyChooser, LearnsAlltoallAndAllgatherOf4KiBTo1MiBBcastAndScatterTo64KiB) {
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
  EXPECT_EQ(copy_choice_class(call), 2 * kCopyChoiceClasses + 1);
  call.collective = Collective::Scatter;
  call.size = 65535;
  EXPECT_EQ(copy_choice_class(call), 3 * kCopyChoiceClasses + 3);
  call.size = 65536;  // rooted calls learn below 64 KiB only
  EXPECT_EQ(copy_choice_class(call), std::nullopt);
  call.collective = Collective::Gather;
  EXPECT_EQ(copy_choice_class(call), std::nullopt);
  call.collective = std::nullopt;  // barrier
  EXPECT_EQ(copy_choice_class(call), std::nullopt);
}

TEST(CopyChooser, ChoiceWordsRoundTrip) {
  const CopyChoice twice_then_once{
      {.valid = true, .old_value = CopyPath::Twice, .new_value = CopyPath::Once, .from_serial = 17},
      /*timing=*/false};
  const CopyChoice once_then_twice{{.valid = true,
                                    .old_value = CopyPath::Once,
                                    .new_value = CopyPath::Twice,
                                    .from_serial = (1ull << 59) + 3},
                                   /*timing=*/true};
  for (const CopyChoice choice : {twice_then_once, once_then_twice}) {
    const CopyChoice back = unpack_choice(pack(choice));
    EXPECT_TRUE(back.valid);
    EXPECT_EQ(back.old_value, choice.old_value);
    EXPECT_EQ(back.new_value, choice.new_value);
    EXPECT_EQ(back.timing, choice.timing);
    EXPECT_EQ(back.from_serial, choice.from_serial);
    EXPECT_EQ(back.at(choice.from_serial - 1), choice.old_value);
    EXPECT_EQ(back.at(choice.from_serial), choice.new_value);
  }
  EXPECT_EQ(pack(CopyChoice{}), 0u);
  EXPECT_FALSE(unpack_choice(0).valid);
}

// Three ranks run a random program of learned calls and unlearned ones, in random
// interleavings as far as the collectives allow: a rank finishes a learned alltoall only after
// every rank entered it; a bcast (learned, from a random root, or unlearned, from rank 0) lets
// its root run ahead without bound, and another rank finishes it only after the root entered
// it (it waits for the root's stage). Every decider switches paths at every chance. Every
// learned call must take one path on every rank.
TEST(CopyChooser, RanksAgreeOnEveryCallInEveryAllowedOrder) {
  constexpr int kRanks = 3;
  constexpr PlanLearning kAlwaysSwitch{1, 0, 0, -1000};
  constexpr std::uint64_t kSize = 8192;
  std::mt19937 random(7);
  for (int program = 0; program < 100; ++program) {
    FakeSegment segment(kRanks);
    const SegmentView view = segment.view();
    std::vector<CopyChooser> choosers;
    for (int r = 0; r < kRanks; ++r) choosers.emplace_back(view, r, true, kAlwaysSwitch);
    const int calls = 300;
    std::vector<CallShape> program_calls;
    std::vector<bool> learned;
    for (int c = 0; c < calls; ++c) {
      switch (random() % 5) {
        case 0:
        case 1:
          program_calls.push_back(alltoall(kSize, kRanks));
          learned.push_back(true);
          break;
        case 2:
        case 3:
          program_calls.push_back(
              call_of(Collective::Bcast, kSize, kRanks, static_cast<int>(random() % kRanks)));
          learned.push_back(true);
          break;
        default:
          program_calls.push_back(call_of(Collective::Bcast, 100, kRanks));
          learned.push_back(false);
      }
    }
    std::vector<std::vector<int>> path(kRanks, std::vector<int>(calls, -1));
    std::vector<int> next(kRanks, 0);         // the call each rank enters next
    std::vector<bool> inside(kRanks, false);  // entered `next`, not finished it
    const auto entered = [&](int r, int call) {
      return next[r] > call || (next[r] == call && inside[r]);
    };
    const auto may_finish = [&](int r) {
      const int call = next[r];
      const CallShape& shape = program_calls[static_cast<std::size_t>(call)];
      if (shape.collective == Collective::Bcast)
        return r == shape.root || entered(shape.root, call);
      for (int o = 0; o < kRanks; ++o) {
        if (!entered(o, call)) return false;
      }
      return true;
    };
    while (*std::min_element(next.begin(), next.end()) < calls) {
      const int r = static_cast<int>(random() % kRanks);
      if (next[r] >= calls) continue;
      const int call = next[r];
      const auto serial = static_cast<std::uint64_t>(call + 1);
      if (!inside[r]) {
        inside[r] = true;
        if (learned[static_cast<std::size_t>(call)]) {
          path[r][call] =
              choosers[r].choose(program_calls[static_cast<std::size_t>(call)], serial, false);
        } else {
          choosers[r].pass();
        }
        store_serial(view.ranks[static_cast<std::size_t>(r)], serial);  // as enter_call() does
      } else if (may_finish(r)) {
        const bool timed = choosers[r].wants_timing();
        choosers[r].finished(timed ? std::optional(std::chrono::nanoseconds(1000)) : std::nullopt,
                             kSize * kRanks);
        inside[r] = false;
        ++next[r];
      }
    }
    for (int call = 0; call < calls; ++call) {
      for (int r = 1; r < kRanks; ++r) {
        ASSERT_EQ(path[r][call], path[0][call])
            << "program " << program << ", call " << call + 1 << ", rank " << r;
      }
    }
    // Rank 0 decides alltoall and its own bcasts, ranks 1 and 2 only their bcasts.
    EXPECT_GT(choosers[0].switches(), 20) << "program " << program;
    EXPECT_GT(choosers[1].switches() + choosers[2].switches(), 10) << "program " << program;
  }
}

// A two-copy bcast lets its root run ahead. A root that learns while the other rank has not
// started must not change its path: the other rank would read the word only later, after
// several changes, and find a path that is neither the old nor the new one of its calls. The
// root has no time of the other rank then, so its learner waits; once the other rank catches
// up, learning resumes.
TEST(CopyChooser, ARootFarAheadChangesNothingUntilTheOthersCatchUp) {
  constexpr PlanLearning kAlwaysSwitch{1, 0, 0, -1000};
  FakeSegment segment(2);
  CopyChooser rank0(segment.view(), 0, true, kAlwaysSwitch);
  CopyChooser root(segment.view(), 1, true, kAlwaysSwitch);
  const CallShape bcast = call_of(Collective::Bcast, 8192, 2, /*root=*/1);
  const auto run = [&](CopyChooser& chooser, std::uint64_t serial) {
    const bool once = chooser.choose(bcast, serial, true);
    chooser.finished(
        chooser.wants_timing() ? std::optional(std::chrono::nanoseconds(1000)) : std::nullopt,
        8192);
    return once;
  };
  std::vector<bool> root_paths;
  for (std::uint64_t serial = 1; serial <= 12; ++serial) root_paths.push_back(run(root, serial));
  EXPECT_EQ(root.switches(), 0);
  for (std::uint64_t serial = 1; serial <= 12; ++serial) {
    ASSERT_EQ(run(rank0, serial), root_paths[serial - 1]) << "call " << serial;
  }
  for (std::uint64_t serial = 13; serial <= 40; ++serial) {
    const bool once = run(root, serial);
    ASSERT_EQ(run(rank0, serial), once) << "call " << serial;
  }
  EXPECT_GT(root.switches(), 3);
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
  EXPECT_TRUE(learning.learns(alltoall(65536, 2), true));
  EXPECT_TRUE(learning.learns(call_of(Collective::Bcast, 32768, 2, 1), true));
  EXPECT_FALSE(learning.learns(call_of(Collective::Bcast, 65536, 2, 1), true));
  EXPECT_FALSE(learning.learns(call_of(Collective::Gather, 65536, 2), true));
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
