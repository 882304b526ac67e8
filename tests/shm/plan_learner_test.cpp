// CopyPathLearner (runtime/shm/copy_path_learner.hpp): rounds of samples on both paths, a
// switch only past the margin, rests that double while the path holds, and calls on the wrong
// path or without a time that do not count.
#include <gtest/gtest.h>

#include "runtime/shm/copy_path_learner.hpp"

namespace multilane::runtime::shm {
namespace {

constexpr CopyLearning kPolicy{/*samples=*/3, /*first_period=*/4, /*last_period=*/16,
                               /*margin=*/0.1};

// Feeds calls as a group would: each takes the path the learner wants and lasts
// `once_time` or `twice_time` when it is timed. Returns how many calls ran.
int feed(CopyPathLearner& learner, int calls, double once_time, double twice_time) {
  for (int i = 0; i < calls; ++i) {
    const bool once = learner.wanted_once();
    const std::optional<double> time =
        learner.wants_timing() ? std::optional(once ? once_time : twice_time) : std::nullopt;
    learner.finished(once, time);
  }
  return calls;
}

TEST(CopyPathLearner, TimesBothPathsThenSwitchesToTheFasterOne) {
  CopyPathLearner learner(/*start_once=*/true, kPolicy);
  EXPECT_TRUE(learner.wanted_once());
  EXPECT_TRUE(learner.wants_timing());  // learns from the first call on
  feed(learner, 3, 2.0, 1.0);           // three samples of the current path
  EXPECT_FALSE(learner.wanted_once());  // then the other one
  EXPECT_TRUE(learner.wants_timing());
  feed(learner, 3, 2.0, 1.0);
  EXPECT_EQ(learner.rounds(), 1);
  EXPECT_EQ(learner.switches(), 1);
  EXPECT_FALSE(learner.wanted_once());   // twice won
  EXPECT_FALSE(learner.wants_timing());  // and the learner rests
}

TEST(CopyPathLearner, KeepsItsPathWhenTheOtherIsNotFasterByTheMargin) {
  CopyPathLearner learner(/*start_once=*/true, kPolicy);
  feed(learner, 6, 1.0, 0.95);  // twice is 5% faster, below the 10% margin
  EXPECT_EQ(learner.rounds(), 1);
  EXPECT_EQ(learner.switches(), 0);
  EXPECT_TRUE(learner.wanted_once());
}

TEST(CopyPathLearner, RestsTwiceAsLongAfterEveryRoundThatKeptThePath) {
  CopyPathLearner learner(/*start_once=*/false, kPolicy);
  const auto calls_until_next_round = [&] {
    int calls = 0;
    while (!learner.wants_timing()) calls += feed(learner, 1, 5.0, 1.0);
    return calls;
  };
  feed(learner, 6, 5.0, 1.0);  // round 1 keeps twice
  EXPECT_EQ(calls_until_next_round(), 8);
  feed(learner, 6, 5.0, 1.0);
  EXPECT_EQ(calls_until_next_round(), 16);
  feed(learner, 6, 5.0, 1.0);
  EXPECT_EQ(calls_until_next_round(), 16);  // last_period
  EXPECT_EQ(learner.rounds(), 3);
  EXPECT_EQ(learner.switches(), 0);
  // The machine changes: once becomes faster; the next round finds it and rests briefly.
  feed(learner, 6, 1.0, 5.0);
  EXPECT_EQ(learner.switches(), 1);
  EXPECT_TRUE(learner.wanted_once());
  EXPECT_EQ(calls_until_next_round(), 4);  // first_period again
}

TEST(CopyPathLearner, ComparesMediansSoThatOneSlowCallDoesNotDecide) {
  CopyPathLearner learner(/*start_once=*/true, kPolicy);
  for (const double time : {1.0, 1.0, 1.0}) learner.finished(true, time);
  for (const double time : {0.5, 9.0, 9.0}) learner.finished(false, time);  // one fast outlier
  EXPECT_EQ(learner.switches(), 0);
  EXPECT_TRUE(learner.wanted_once());
}

TEST(CopyPathLearner, IgnoresCallsOnTheOtherPathAndCallsWithoutATime) {
  CopyPathLearner learner(/*start_once=*/true, kPolicy);
  learner.finished(false, 0.1);          // the call before a change took effect: not a sample
  learner.finished(true, std::nullopt);  // a rank's time was missing
  learner.finished(true, 1.0);
  learner.finished(true, 1.0);
  EXPECT_TRUE(learner.wanted_once());  // two samples of three so far
  learner.finished(true, 1.0);
  EXPECT_FALSE(learner.wanted_once());
  learner.finished(true, 1.0);  // the call after the request still ran once
  learner.finished(false, 2.0);
  learner.finished(false, 2.0);
  EXPECT_EQ(learner.rounds(), 0);
  learner.finished(false, 2.0);
  EXPECT_EQ(learner.rounds(), 1);
  EXPECT_TRUE(learner.wanted_once());
}

TEST(CopyPathLearner, WithNoRestLearnsAtEveryCall) {
  CopyPathLearner learner(/*start_once=*/true, {1, 0, 0, -1000});  // always switches
  for (int round = 1; round <= 4; ++round) {
    const bool before = learner.wanted_once();
    feed(learner, 2, 1.0, 1.0);
    EXPECT_EQ(learner.wanted_once(), !before) << "round " << round;
    EXPECT_TRUE(learner.wants_timing());
  }
  EXPECT_EQ(learner.switches(), 4);
}

}  // namespace
}  // namespace multilane::runtime::shm
