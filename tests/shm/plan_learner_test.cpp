// PlanLearner (runtime/shm/plan_learner.hpp): rounds of samples on both plans, a switch only
// past the margin, rests that double while the plan holds, and calls on the wrong plan or
// without a time that do not count. The plans here are the copy chooser's.
#include <gtest/gtest.h>

#include "runtime/shm/copy_chooser.hpp"
#include "runtime/shm/plan_learner.hpp"

namespace multilane::runtime::shm {
namespace {

constexpr PlanLearning kPolicy{.samples = 3, .first_period = 4, .last_period = 16, .margin = 0.1};

// Feeds calls as a group would: each takes the path the learner wants and lasts
// `once_time` or `twice_time` when it is timed. Returns how many calls ran.
int feed(PlanLearner<CopyPath>& learner, int calls, double once_time, double twice_time) {
  for (int i = 0; i < calls; ++i) {
    const CopyPath path = learner.wanted();
    const std::optional<double> time =
        learner.wants_timing() ? std::optional(path == CopyPath::Once ? once_time : twice_time)
                               : std::nullopt;
    learner.finished(path, time);
  }
  return calls;
}

TEST(PlanLearner, TimesBothPlansThenSwitchesToTheFasterOne) {
  PlanLearner<CopyPath> learner(/*start_plan=*/CopyPath::Once, kPolicy);
  EXPECT_EQ(learner.wanted(), CopyPath::Once);
  EXPECT_TRUE(learner.wants_timing());           // learns from the first call on
  feed(learner, 3, 2.0, 1.0);                    // three samples of the current path
  EXPECT_EQ(learner.wanted(), CopyPath::Twice);  // then the other one
  EXPECT_TRUE(learner.wants_timing());
  EXPECT_TRUE(learner.probing());
  feed(learner, 3, 2.0, 1.0);
  EXPECT_EQ(learner.rounds(), 1);
  EXPECT_EQ(learner.switches(), 1);
  EXPECT_EQ(learner.wanted(), CopyPath::Twice);  // twice won
  EXPECT_FALSE(learner.wants_timing());          // and the learner rests
  EXPECT_FALSE(learner.probing());
}

TEST(PlanLearner, TheFirstRoundWaitsForTheFirstRest) {
  PlanLearning policy = kPolicy;
  policy.first_rest = 10;
  PlanLearner<CopyPath> learner(/*start_plan=*/CopyPath::Once, policy);
  int calls = 0;
  while (!learner.wants_timing() && calls < 100) calls += feed(learner, 1, 2.0, 1.0);
  EXPECT_EQ(calls, 10);
  EXPECT_EQ(learner.wanted(), CopyPath::Once);  // the start plan all along
  feed(learner, 6, 2.0, 1.0);                   // then a round as usual
  EXPECT_EQ(learner.rounds(), 1);
  EXPECT_EQ(learner.wanted(), CopyPath::Twice);
}

TEST(PlanLearner, KeepsItsPlanWhenTheOtherIsNotFasterByTheMargin) {
  PlanLearner<CopyPath> learner(/*start_plan=*/CopyPath::Once, kPolicy);
  feed(learner, 6, 1.0, 0.95);  // twice is 5% faster, below the 10% margin
  EXPECT_EQ(learner.rounds(), 1);
  EXPECT_EQ(learner.switches(), 0);
  EXPECT_EQ(learner.wanted(), CopyPath::Once);
}

TEST(PlanLearner, RestsTwiceAsLongAfterEveryRoundThatKeptThePlan) {
  PlanLearner<CopyPath> learner(/*start_plan=*/CopyPath::Twice, kPolicy);
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
  EXPECT_EQ(learner.wanted(), CopyPath::Once);
  EXPECT_EQ(calls_until_next_round(), 4);  // first_period again
}

TEST(PlanLearner, ComparesMediansSoThatOneSlowCallDoesNotDecide) {
  PlanLearner<CopyPath> learner(/*start_plan=*/CopyPath::Once, kPolicy);
  for (const double time : {1.0, 1.0, 1.0}) learner.finished(CopyPath::Once, time);
  for (const double time : {0.5, 9.0, 9.0})
    learner.finished(CopyPath::Twice, time);  // one fast outlier
  EXPECT_EQ(learner.switches(), 0);
  EXPECT_EQ(learner.wanted(), CopyPath::Once);
}

TEST(PlanLearner, IgnoresCallsOnTheOtherPlanAndCallsWithoutATime) {
  PlanLearner<CopyPath> learner(/*start_plan=*/CopyPath::Once, kPolicy);
  learner.finished(CopyPath::Twice, 0.1);  // the call before a change took effect: not a sample
  learner.finished(CopyPath::Once, std::nullopt);  // a rank's time was missing
  learner.finished(CopyPath::Once, 1.0);
  learner.finished(CopyPath::Once, 1.0);
  EXPECT_EQ(learner.wanted(), CopyPath::Once);  // two samples of three so far
  learner.finished(CopyPath::Once, 1.0);
  EXPECT_EQ(learner.wanted(), CopyPath::Twice);
  learner.finished(CopyPath::Once, 1.0);  // the call after the request still ran once
  learner.finished(CopyPath::Twice, 2.0);
  learner.finished(CopyPath::Twice, 2.0);
  EXPECT_EQ(learner.rounds(), 0);
  learner.finished(CopyPath::Twice, 2.0);
  EXPECT_EQ(learner.rounds(), 1);
  EXPECT_EQ(learner.wanted(), CopyPath::Once);
}

TEST(PlanLearner, WithNoRestLearnsAtEveryCall) {
  PlanLearner<CopyPath> learner(/*start_plan=*/CopyPath::Once,
                                {1, 0, 0, -1000});  // always switches
  for (int round = 1; round <= 4; ++round) {
    const CopyPath before = learner.wanted();
    feed(learner, 2, 1.0, 1.0);
    EXPECT_NE(learner.wanted(), before) << "round " << round;
    EXPECT_TRUE(learner.wants_timing());
  }
  EXPECT_EQ(learner.switches(), 4);
}

}  // namespace
}  // namespace multilane::runtime::shm
