// The measured route: classes of calls, the exploration of each class and its agreement, and
// the tuning file the decisions are kept in.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <vector>

#include "mpi/call_class.hpp"
#include "mpi/measured_route.hpp"
#include "mpi/placement_key.hpp"
#include "mpi/route_tuning.hpp"
#include "multilane/errors.hpp"

namespace multilane::mpi {
namespace {

TEST(CallClass, TheRootDoesNotCountAndBytesGoByPowersOfTwo) {
  const Reduction none;
  EXPECT_EQ(classify(WrappedCall::Bcast, 1024, none), classify(WrappedCall::Bcast, 2047, none));
  EXPECT_NE(classify(WrappedCall::Bcast, 1024, none), classify(WrappedCall::Bcast, 2048, none));
  EXPECT_NE(classify(WrappedCall::Bcast, 0, none), classify(WrappedCall::Bcast, 1, none));
  EXPECT_NE(classify(WrappedCall::Bcast, 64, none), classify(WrappedCall::Scatter, 64, none));
  const Reduction sum{ElementType::Float, ReduceOp::Sum};
  const Reduction max{ElementType::Float, ReduceOp::Max};
  EXPECT_NE(classify(WrappedCall::Allreduce, 64, sum), classify(WrappedCall::Allreduce, 64, max));
  // A reduction's type and operation mean nothing to a bcast.
  EXPECT_EQ(classify(WrappedCall::Bcast, 64, sum), classify(WrappedCall::Bcast, 64, max));
  for (const CallClass c :
       {classify(WrappedCall::Allreduce, 3000, sum), classify(WrappedCall::Barrier, 1, none)}) {
    EXPECT_EQ(CallClass::from_key(c.key()), c);
  }
}

TEST(CallClass, DescribedInTheUsersWords) {
  const Reduction sum{ElementType::Float, ReduceOp::Sum};
  EXPECT_EQ(describe(classify(WrappedCall::Bcast, 1, {})), "MPI_Bcast of 1 B-2 B");
  EXPECT_EQ(describe(classify(WrappedCall::Bcast, 0, {})), "MPI_Bcast of 0 B");
  EXPECT_EQ(describe(classify(WrappedCall::Allreduce, 3000, sum)),
            "MPI_Allreduce of 2 KiB-4 KiB of float, sum");
  EXPECT_EQ(describe(classify(WrappedCall::Scatter, 16u << 20, {})),
            "MPI_Scatter of 16 MiB-32 MiB");
  EXPECT_EQ(describe(classify(WrappedCall::Barrier, 1, {})), "MPI_Barrier");
  EXPECT_EQ(describe(classify(WrappedCall::Allgatherv, 3000, {})), "MPI_Allgatherv of 2 KiB-4 KiB");
  EXPECT_EQ(describe(classify(WrappedCall::Alltoallv, 0, {})), "MPI_Alltoallv (sizes per rank)");
}

TEST(CallClass, GathervScattervAndAlltoallvAreOneClassOfAnySize) {
  for (WrappedCall call : {WrappedCall::Gatherv, WrappedCall::Scatterv, WrappedCall::Alltoallv}) {
    EXPECT_EQ(classify(call, 0, {}), classify(call, 1u << 20, {})) << call_name(call);
  }
  EXPECT_NE(classify(WrappedCall::Allgatherv, 64, {}), classify(WrappedCall::Allgatherv, 128, {}));
  EXPECT_NE(classify(WrappedCall::Gatherv, 0, {}), classify(WrappedCall::Scatterv, 0, {}));
}

// The ranks of one communicator in one process: `times[rank][call]` is what each rank measures.
// Every rank's agreement is the mean over the ranks, as PMPI_Allreduce(SUM) / size makes it.
struct Ranks {
  std::vector<Exploration> explorations;
  std::vector<std::vector<double>> times;
  int agreements = 0;

  // Runs the class's calls on every rank in lockstep; returns each rank's decision.
  std::vector<ClassDecision> run() {
    const std::size_t n = explorations.size();
    std::vector<std::optional<ClassDecision>> decided(n);
    for (std::size_t call = 0; call < times[0].size(); ++call) {
      // Each rank records; agreement happens at the same call on every rank, so the values
      // are gathered first and each rank gets the mean.
      std::vector<std::vector<double>> offered(n);
      for (std::size_t r = 0; r < n; ++r) {
        if (decided[r]) continue;
        Exploration probe = explorations[r];
        struct Capture {
          std::vector<double>* into;
        } capture{&offered[r]};
        probe.record(times[r][call], {.function =
                                          [](void* context, double* values, int count) {
                                            auto* c = static_cast<Capture*>(context);
                                            c->into->assign(values, values + count);
                                          },
                                      .context = &capture});
      }
      std::vector<double> mean;
      for (const auto& values : offered) {
        if (mean.empty()) mean.assign(values.size(), 0.0);
        for (std::size_t i = 0; i < values.size(); ++i) mean[i] += values[i] / n;
      }
      if (!mean.empty()) ++agreements;
      for (std::size_t r = 0; r < n; ++r) {
        if (decided[r]) continue;
        struct Give {
          const std::vector<double>* values;
        } give{&mean};
        decided[r] = explorations[r].record(times[r][call],
                                            {.function =
                                                 [](void* context, double* values, int count) {
                                                   auto* g = static_cast<Give*>(context);
                                                   std::copy(g->values->begin(),
                                                             g->values->begin() + count, values);
                                                 },
                                             .context = &give});
      }
      if (decided[0]) break;
    }
    std::vector<ClassDecision> out;
    for (const auto& d : decided) {
      EXPECT_TRUE(d.has_value());
      out.push_back(d.value_or(ClassDecision{}));
    }
    return out;
  }
};

// The MPI library's block, and the calls of an exploration of one multilane candidate.
constexpr int kMpiBlockCalls = kMpiDroppedLongCalls + kBlockCalls - 1;
constexpr int kOneCandidateCalls = kMpiBlockCalls + kBlockCalls;

// Times per call for the order MPI x 4, ml x 3 (then ml2 x 3...); `first` is each block's
// dropped calls.
std::vector<double> in_blocks(double mpi, double multilane, double first = 1.0,
                              std::vector<double> more = {}) {
  std::vector<double> t(kMpiDroppedLongCalls, first);
  t.insert(t.end(), kBlockCalls - 1, mpi);
  more.insert(more.begin(), multilane);
  for (const double kept : more) {
    t.push_back(first);
    t.insert(t.end(), kBlockCalls - 1, kept);
  }
  return t;
}

// A short class's times: the MPI library's block, then multilane's, each `dropped` x 4 first.
std::vector<double> short_blocks(std::array<double, kShortKeptCalls> mpi,
                                 std::array<double, kShortKeptCalls> multilane,
                                 std::array<double, kShortDroppedCalls> dropped = {1, 1, 1, 1}) {
  std::vector<double> t(dropped.begin(), dropped.end());
  t.insert(t.end(), mpi.begin(), mpi.end());
  t.insert(t.end(), dropped.begin(), dropped.end());
  t.insert(t.end(), multilane.begin(), multilane.end());
  return t;
}

TEST(MeasuredRoute, EachCandidateRunsInABlockOfItsOwnTheMpiLibraryFirst) {
  Exploration e(2);
  EXPECT_EQ(e.most_calls(), 10);
  std::vector<int> order;
  for (int call = 0; call < e.most_calls(); ++call) {
    order.push_back(e.next());
    e.record(1.0, {.function = [](void*, double*, int) {}, .context = nullptr});
  }
  const int mpi = Exploration::kMpi;
  EXPECT_EQ(order, (std::vector<int>{mpi, mpi, mpi, mpi, 0, 0, 0, 1, 1, 1}));
}

TEST(MeasuredRoute, TheFastestOfMultilanesCandidatesIsKept) {
  // The model's second choice is the faster: it is the one kept, and the decision says so.
  Ranks second{.explorations = std::vector<Exploration>(1, Exploration(2)),
               .times = {in_blocks(10, 8, 1000, {5})}};
  ClassDecision d = second.run()[0];
  EXPECT_EQ(d.choice, RouteChoice::Multilane);
  EXPECT_EQ(d.candidate, 1);
  EXPECT_DOUBLE_EQ(d.multilane_s, 5);
  // The first is pruned (above twice the MPI library's time) and the second is kept.
  Ranks pruned{.explorations = std::vector<Exploration>(1, Exploration(2)),
               .times = {{1000, 1000, 10, 10, /* pruned: */ 1000, 25, /* kept: */ 1000, 7, 7}}};
  d = pruned.run()[0];
  EXPECT_EQ(d.choice, RouteChoice::Multilane);
  EXPECT_EQ(d.candidate, 1);
  EXPECT_EQ(pruned.explorations[0].calls(), 4 + 2 + 3);  // the pruned block ends at its 2nd call
  // Neither gains 10%: the MPI library keeps the class.
  Ranks neither{.explorations = std::vector<Exploration>(1, Exploration(2)),
                .times = {in_blocks(10, 9.5, 1000, {9.2})}};
  d = neither.run()[0];
  EXPECT_EQ(d.choice, RouteChoice::Mpi);
  EXPECT_DOUBLE_EQ(d.multilane_s, 9.2);  // the better of the two is shown
}

TEST(MeasuredRoute, MultilaneIsKeptForAGainOfTenPercentAndTheFirstCallsAreDropped) {
  // The first call of each candidate (1 s here, a connection set-up) does not count.
  Ranks faster{.explorations = std::vector<Exploration>(1), .times = {in_blocks(10, 8.9, 1000)}};
  const ClassDecision d = faster.run()[0];
  EXPECT_EQ(d.choice, RouteChoice::Multilane);
  EXPECT_EQ(d.source, DecisionSource::Measured);
  EXPECT_DOUBLE_EQ(d.mpi_s, 10);
  EXPECT_DOUBLE_EQ(d.multilane_s, 8.9);
  Ranks marginal{.explorations = std::vector<Exploration>(1), .times = {in_blocks(10, 9.5)}};
  EXPECT_EQ(marginal.run()[0].choice, RouteChoice::Mpi);
}

TEST(MeasuredRoute, TheMpiLibrarysFirstFourCallsAreDroppedItsSteadyStateIsRated) {
  // Open MPI's reduce of 256 KiB on 4 ranks of one node, its first calls at the size (us):
  // rated by its calls from the second, multilane's 80 would look 11% faster; its steady 58 is
  // faster than multilane's 80.
  const std::vector<double> times =
      short_blocks({58, 60, 58, 57}, {80, 80, 80, 80}, {290, 161, 90, 90});
  Ranks ranks{.explorations = {Exploration(1, kShortBlockCalls)}, .times = {times}};
  const ClassDecision d = ranks.run()[0];
  EXPECT_EQ(d.choice, RouteChoice::Mpi);
  EXPECT_DOUBLE_EQ(d.mpi_s, 58);
  EXPECT_DOUBLE_EQ(d.multilane_s, 80);
}

TEST(MeasuredRoute, AShortClassKeepsFourCallsABlockAndOneDelayedCallDoesNotDecide) {
  EXPECT_EQ(block_calls(1024 * 1024 - 1), kShortBlockCalls);
  EXPECT_EQ(block_calls(1024 * 1024), kBlockCalls);
  // Four kept calls a block: the MPI library's second kept call was delayed (40 for 5);
  // multilane's 5.2 is no gain over the MPI library's median of 5, whatever that one call cost.
  const std::vector<double> times = short_blocks({5, 5, 40, 5}, {5.2, 5.2, 5.2, 5.2});
  Ranks ranks{.explorations = {Exploration(1, kShortBlockCalls)}, .times = {times}};
  const ClassDecision d = ranks.run()[0];
  const int calls = 2 * kShortBlockCalls;
  EXPECT_EQ(ranks.explorations[0].most_calls(), calls);
  EXPECT_EQ(ranks.explorations[0].calls(), calls);
  EXPECT_EQ(d.choice, RouteChoice::Mpi);
  EXPECT_DOUBLE_EQ(d.mpi_s, 5);
  EXPECT_DOUBLE_EQ(d.multilane_s, 5.2);
  // A delayed multilane call does not rule multilane out either.
  const std::vector<double> slow_call = short_blocks({5, 5, 5, 5}, {4, 40, 4, 4});
  Ranks again{.explorations = {Exploration(1, kShortBlockCalls)}, .times = {slow_call}};
  EXPECT_EQ(again.run()[0].choice, RouteChoice::Multilane);
  // Nor when the delayed call is its first kept one, on one rank of two (a time slice of 4 ms
  // for a call of 4 us).
  const std::vector<double> sliced = short_blocks({5, 5, 5, 5}, {4000, 4, 4, 4});
  const std::vector<double> steady = short_blocks({5, 5, 5, 5}, {4, 4, 4, 4});
  Ranks two{.explorations = {Exploration(1, kShortBlockCalls), Exploration(1, kShortBlockCalls)},
            .times = {sliced, steady}};
  EXPECT_EQ(two.run()[0].choice, RouteChoice::Multilane);
}

TEST(MeasuredRoute, AShortClassAgreesOnceItsDecisionAndIsNeverPrunedMidBlock) {
  // Multilane at 800x the MPI library's time: a long class ends the block at its first kept
  // call; a short class's block runs to its end, with no agreement before the decision (an MPI
  // library collective, which would delay the kept calls after it).
  const std::vector<double> slow = short_blocks({5, 5, 5, 5}, {4000, 4000, 4000, 4000});
  Ranks both{.explorations = {Exploration(1, kShortBlockCalls), Exploration(1, kShortBlockCalls)},
             .times = {slow, slow}};
  const ClassDecision out = both.run()[0];
  EXPECT_EQ(out.choice, RouteChoice::Mpi);
  EXPECT_EQ(out.source, DecisionSource::Measured);
  EXPECT_DOUBLE_EQ(out.multilane_s, 4000);
  EXPECT_EQ(both.agreements, 1);  // calls that agreed: the last one
  EXPECT_EQ(both.explorations[0].calls(), both.explorations[0].most_calls());
  // The same times in a long class: pruned on its first kept call.
  Ranks long_class{.explorations = std::vector<Exploration>(2),
                   .times = {in_blocks(5, 4000), in_blocks(5, 4000)}};
  EXPECT_EQ(long_class.run()[0].source, DecisionSource::Pruned);
  EXPECT_EQ(long_class.explorations[0].calls(), kMpiBlockCalls + 2);
}

TEST(MeasuredRoute, TheMeanOverTheRanksDecidesForEveryRank) {
  // Rank 0 alone sees multilane faster; rank 1 sees it slower. Both must decide alike.
  Ranks ranks{.explorations = std::vector<Exploration>(2),
              .times = {in_blocks(10, 5), in_blocks(10, 15)}};
  const auto decisions = ranks.run();
  EXPECT_EQ(decisions[0].choice, RouteChoice::Mpi);
  EXPECT_EQ(decisions[1].choice, RouteChoice::Mpi);
  EXPECT_DOUBLE_EQ(decisions[0].multilane_s, 10);
  EXPECT_EQ(ranks.agreements, 2);  // the prune check and the decision
}

TEST(MeasuredRoute, ACollectiveThatFreesMostRanksEarlyIsRatedByItsAverageRank) {
  // The MPI library's reduce: the root waits 40, three non-roots leave after 2 (mean 11.5).
  // Multilane's holds every rank for 20: its slowest rank is faster, its average rank is not.
  Ranks ranks{.explorations = std::vector<Exploration>(4),
              .times = {in_blocks(40, 20), in_blocks(2, 20), in_blocks(2, 20), in_blocks(2, 20)}};
  const auto decisions = ranks.run();
  for (const ClassDecision& d : decisions) EXPECT_EQ(d.choice, RouteChoice::Mpi);
  EXPECT_DOUBLE_EQ(decisions[0].mpi_s, 11.5);
  EXPECT_DOUBLE_EQ(decisions[0].multilane_s, 20);
}

TEST(MeasuredRoute, ACandidateAtTwiceTheMpiLibrarysTimeIsPrunedEarly) {
  Ranks ranks{.explorations = std::vector<Exploration>(2),
              .times = {in_blocks(10, 25), in_blocks(10, 18)}};
  const auto decisions = ranks.run();
  EXPECT_EQ(decisions[0].choice, RouteChoice::Mpi);
  EXPECT_EQ(decisions[0].source, DecisionSource::Pruned);
  EXPECT_EQ(ranks.explorations[0].calls(), kMpiBlockCalls + 2);
  EXPECT_EQ(ranks.explorations[1].calls(), kMpiBlockCalls + 2);
}

TEST(MeasuredRoute, ExplorationIsBoundedPerCommunicator) {
  MeasuredRoutes routes;
  for (std::uint64_t key = 0; key < kMostExploredClasses; ++key) {
    ASSERT_NE(routes.for_blocking_call(key, true), nullptr);
  }
  EXPECT_EQ(routes.for_blocking_call(kMostExploredClasses, true), nullptr);
  EXPECT_NE(routes.for_blocking_call(0, true), nullptr);  // known classes go on
  MeasuredRoutes frozen;
  EXPECT_EQ(frozen.for_blocking_call(7, false), nullptr);
  frozen.adopt(7, {.choice = RouteChoice::Multilane, .source = DecisionSource::TuningFile});
  ASSERT_NE(frozen.decided(7), nullptr);
  EXPECT_EQ(frozen.decided(7)->choice, RouteChoice::Multilane);
  EXPECT_EQ(frozen.decided(8), nullptr);
}

// Runs `entry`'s blocking calls as dispatch.cpp does, each candidate taking the time given
// (one rank: its times are the agreed ones); returns the routes taken.
std::vector<RouteChoice> run_calls(MeasuredRoutes::Entry& entry, std::uint64_t calls, double mpi_s,
                                   double multilane_s) {
  std::vector<RouteChoice> routes;
  const Agreement alone{.function = [](void*, double*, int) {}, .context = nullptr};
  for (std::uint64_t call = 0; call < calls; ++call) {
    if (!entry.explores_next_call()) {
      const RouteChoice run = entry.decision->choice;
      routes.push_back(run);
      const bool timed = entry.times_decided_call();
      if (timed) {
        if (auto d = entry.record_steady(run == RouteChoice::Mpi ? mpi_s : multilane_s, alone)) {
          entry.settle(*d);
        }
      }
      continue;
    }
    const RouteChoice run = entry.exploration.next_route();
    routes.push_back(run);
    if (auto d = entry.exploration.record(run == RouteChoice::Mpi ? mpi_s : multilane_s, alone)) {
      entry.settle(*d);
    }
  }
  return routes;
}

// The index of the first call on the MPI library's route (the size when there is none).
std::size_t first_mpi_call(const std::vector<RouteChoice>& routes) {
  return static_cast<std::size_t>(std::find(routes.begin(), routes.end(), RouteChoice::Mpi) -
                                  routes.begin());
}

// Runs a loop of calls of class `key` on one rank until the class is decided: each iteration
// does `work_s` of the program's work, then the call, which takes `own_s` of the route taken
// and leaves the ranks skewed, so that the work after it takes `skew_s` of that route more.
// Returns the decision.
struct LoopRoute {
  double own_s;
  double skew_s;
};
ClassDecision decide_in_a_loop(std::uint64_t key, double work_s, LoopRoute mpi, LoopRoute ml) {
  MeasuredRoutes routes;
  MeasuredRoutes::Entry& entry = *routes.for_blocking_call(key, true);
  entry.explore({"hier-shm"});
  const Agreement alone{.function = [](void*, double*, int) {}, .context = nullptr};
  using Clock = std::chrono::steady_clock;
  Clock::time_point now{std::chrono::seconds(1)};
  const auto later = [&](double s) { now += std::chrono::nanoseconds(std::llround(s * 1e9)); };
  double skew_s = 0;
  const WrappedCall wrapped = CallClass::from_key(key).call;
  for (int call = 0; call < 100; ++call) {
    later(work_s + skew_s);
    const LoopRoute& r = entry.exploration.next_route() == RouteChoice::Mpi ? mpi : ml;
    const Clock::time_point started = now;
    later(r.own_s);
    skew_s = r.skew_s;
    if (auto d = entry.exploration.record(entry.rating(wrapped, started, now), alone)) return *d;
  }
  ADD_FAILURE() << "undecided after 100 calls";
  return {};
}

TEST(MeasuredRoute, ABarrierIsRatedByTheIntervalBetweenItsCallsOthersByTheirOwnTime) {
  const std::uint64_t barrier = classify(WrappedCall::Barrier, 0, {}).key();
  const std::uint64_t bcast = classify(WrappedCall::Bcast, 8, {}).key();
  // Multilane's barrier is faster by its own time, but the work after it pays for the skew it
  // leaves: the iteration is slower, and the MPI library keeps the barrier.
  const LoopRoute mpi{.own_s = 10e-6, .skew_s = 0};
  const LoopRoute skewing{.own_s = 2e-6, .skew_s = 20e-6};
  const ClassDecision kept = decide_in_a_loop(barrier, 100e-6, mpi, skewing);
  EXPECT_EQ(kept.choice, RouteChoice::Mpi);
  EXPECT_NEAR(kept.mpi_s, 110e-6, 1e-9);
  EXPECT_NEAR(kept.multilane_s, 122e-6, 1e-9);
  // Rated by its own time, as every other call is, the same route would have won.
  EXPECT_EQ(decide_in_a_loop(bcast, 100e-6, mpi, skewing).choice, RouteChoice::Multilane);
  // A barrier that saves most of the iteration (MPICH's, 8 ms with more ranks than cores,
  // against multilane's 5 us) is taken.
  const ClassDecision taken =
      decide_in_a_loop(barrier, 3e-6, {.own_s = 8e-3, .skew_s = 0}, {.own_s = 5e-6, .skew_s = 0});
  EXPECT_EQ(taken.choice, RouteChoice::Multilane);
  EXPECT_NEAR(taken.multilane_s, 8e-6, 1e-9);
}

TEST(MeasuredRoute, TheClassesTheMpiLibraryKeptAreMeasuredAgainOnceTheBarrierIsMultilanes) {
  MeasuredRoutes routes;
  const std::uint64_t kept = classify(WrappedCall::Bcast, 8, {}).key();
  const std::uint64_t pruned = classify(WrappedCall::Scatter, 8, {}).key();
  const std::uint64_t served = classify(WrappedCall::Bcast, 1 << 20, {}).key();
  const std::uint64_t by_default = classify(WrappedCall::Gather, 8, {}).key();
  const std::uint64_t barrier = classify(WrappedCall::Barrier, 0, {}).key();
  routes.adopt(kept, {.choice = RouteChoice::Mpi, .source = DecisionSource::Measured});
  routes.adopt(pruned, {.choice = RouteChoice::Mpi, .source = DecisionSource::Pruned});
  routes.adopt(served, {.choice = RouteChoice::Multilane, .source = DecisionSource::Measured});
  routes.adopt(by_default, {.choice = RouteChoice::Mpi, .source = DecisionSource::Default});
  routes.adopt(barrier, {.choice = RouteChoice::Multilane, .source = DecisionSource::Measured});
  // A class whose exploration is under way (its MPI library's block started), and one met but
  // not yet called.
  const std::uint64_t exploring = classify(WrappedCall::Allgather, 8, {}).key();
  const std::uint64_t unstarted = classify(WrappedCall::Alltoall, 8, {}).key();
  MeasuredRoutes::Entry& under_way = *routes.for_blocking_call(exploring, true);
  under_way.explore({"hier-shm"});
  const Agreement none{.function = [](void*, double*, int) {}, .context = nullptr};
  for (int call = 0; call < kShortDroppedCalls + 2; ++call) under_way.exploration.record(1, none);
  routes.for_blocking_call(unstarted, true);
  routes.measure_mpi_classes_again();
  EXPECT_EQ(routes.for_blocking_call(exploring, true)->exploration.calls(), 0);
  EXPECT_EQ(routes.for_blocking_call(unstarted, true)->exploration.calls(), 0);
  EXPECT_EQ(routes.decided(kept), nullptr);
  EXPECT_EQ(routes.decided(pruned), nullptr);
  ASSERT_NE(routes.decided(served), nullptr);
  ASSERT_NE(routes.decided(by_default), nullptr);
  ASSERT_NE(routes.decided(barrier), nullptr);
  // The next blocking call of a class measured again starts its exploration from the MPI
  // library's block.
  MeasuredRoutes::Entry& again = *routes.for_blocking_call(kept, true);
  EXPECT_TRUE(again.explores_next_call());
  EXPECT_EQ(again.exploration.calls(), 0);
  EXPECT_FALSE(again.unfinished().has_value());  // nothing to write until it starts
}

TEST(MeasuredRoute, AMultilaneDecisionIsMeasuredAgainAtCall64And512) {
  MeasuredRoutes::Entry entry;
  entry.decision = ClassDecision{.choice = RouteChoice::Multilane,
                                 .source = DecisionSource::TuningFile,
                                 .from_tuning_file = true};
  // Multilane still wins: the route stays, with multilane's block at calls 64-66 (counted
  // from 1), going on from the route's steady state, and the MPI library's at 67-70.
  auto routes = run_calls(entry, kFirstRecheck - 1 + kOneCandidateCalls, 10, 5);
  const std::vector<RouteChoice> tail(routes.end() - kOneCandidateCalls, routes.end());
  std::vector<RouteChoice> blocks(kBlockCalls, RouteChoice::Multilane);
  blocks.insert(blocks.end(), kMpiBlockCalls, RouteChoice::Mpi);
  EXPECT_EQ(tail, blocks);
  EXPECT_EQ(std::count(routes.begin(), routes.end(), RouteChoice::Mpi), kMpiBlockCalls);
  ASSERT_TRUE(entry.decision);
  EXPECT_EQ(entry.decision->choice, RouteChoice::Multilane);
  EXPECT_EQ(entry.decision->source, DecisionSource::Remeasured);
  EXPECT_FALSE(entry.decision->from_tuning_file);
  // In the steady state the MPI library is faster: the re-check at call 512 hands it over.
  routes = run_calls(entry, 600, 4, 5);
  // Calls 71-511 on multilane, the re-check's blocks at 512-518, then the MPI library.
  const auto on_multilane = kFirstRecheck * kRecheckGrowth - kFirstRecheck - 1 + kBlockCalls;
  EXPECT_EQ(std::count(routes.begin(), routes.end(), RouteChoice::Multilane), on_multilane);
  EXPECT_EQ(routes.back(), RouteChoice::Mpi);
  EXPECT_EQ(entry.decision->choice, RouteChoice::Mpi);
  EXPECT_DOUBLE_EQ(entry.decision->mpi_s, 4);
  EXPECT_DOUBLE_EQ(entry.decision->multilane_s, 5);
}

TEST(MeasuredRoute, AReCheckThatHandsTheClassToTheMpiLibraryIsCheckedInItsSteadyState) {
  MeasuredRoutes::Entry entry;
  entry.decision = ClassDecision{.choice = RouteChoice::Multilane,
                                 .source = DecisionSource::TuningFile,
                                 .from_tuning_file = true};
  // The re-check at call 64 rates the MPI library at 1 by its medians, multilane at 5.
  run_calls(entry, kFirstRecheck - 1 + kOneCandidateCalls, 1, 5);
  ASSERT_TRUE(entry.decision);
  EXPECT_EQ(entry.decision->choice, RouteChoice::Mpi);
  EXPECT_EQ(entry.decision->source, DecisionSource::Measured);
  EXPECT_TRUE(awaits_steady_check(*entry.decision));
  // Its steady calls average 20, four times multilane's rating: the class goes back.
  const int window = kSteadySkippedCalls + kSteadyWindowCalls;
  auto routes = run_calls(entry, window, 20, 5);
  EXPECT_EQ(std::count(routes.begin(), routes.end(), RouteChoice::Mpi), window);
  EXPECT_EQ(entry.decision->choice, RouteChoice::Multilane);
  EXPECT_EQ(entry.decision->source, DecisionSource::Remeasured);
  EXPECT_DOUBLE_EQ(entry.decision->mpi_s, 20);
  EXPECT_DOUBLE_EQ(entry.decision->multilane_s, 5);
  // Multilane's route again, until the next re-check, at call 512 of the route.
  routes = run_calls(entry, 100, 20, 5);
  EXPECT_EQ(std::count(routes.begin(), routes.end(), RouteChoice::Multilane), 100);
}

TEST(MeasuredRoute, AModelledGainOfSevenTimesIsMeasuredAgainSevenTimesLater) {
  MeasuredRoutes::Entry entry;
  entry.decision = ClassDecision{.choice = RouteChoice::Multilane,
                                 .source = DecisionSource::Model,
                                 .mpi_s = 7,
                                 .multilane_s = 1};
  const auto routes = run_calls(entry, 7 * kFirstRecheck - 1 + kOneCandidateCalls, 7, 1);
  EXPECT_EQ(std::count(routes.begin(), routes.end(), RouteChoice::Mpi), kMpiBlockCalls);
  EXPECT_EQ(first_mpi_call(routes), 7 * kFirstRecheck - 1 + kBlockCalls);
  EXPECT_EQ(entry.decision->source, DecisionSource::Remeasured);
}

// The re-check of a class that the tuning file says made `calls_before` calls, after `calls`
// calls of this run: what the file is told this run made, and the route of the next run's
// first call.
struct NextRun {
  std::uint64_t counted;
  bool rechecks_first;
};
NextRun run_then_next(std::uint64_t calls_before, std::uint64_t calls) {
  const ClassDecision decided{.choice = RouteChoice::Multilane,
                              .source = DecisionSource::TuningFile,
                              .from_tuning_file = true,
                              .calls = calls_before};
  MeasuredRoutes run;
  run.adopt(1, decided);
  run_calls(*run.for_blocking_call(1, true), calls, 10, 5);
  const std::uint64_t counted = run.entries().at(1).calls_this_run();
  MeasuredRoutes next;
  ClassDecision carried = decided;
  carried.calls = calls_before + counted;
  next.adopt(1, carried);
  MeasuredRoutes::Entry& entry = *next.for_blocking_call(1, true);
  run_calls(entry, 1, 10, 5);
  return {counted, entry.rechecking};
}

// The calls a re-check of class 1 takes.
std::uint64_t recheck_calls() {
  MeasuredRoutes routes;
  MeasuredRoutes::Entry& entry = *routes.for_blocking_call(1, true);
  entry.explore({"auto"});
  return static_cast<std::uint64_t>(entry.exploration.most_calls());
}

TEST(MeasuredRoute, AReCheckTheRunEndsIsDueAtTheNextRunsStartIfTheRunCouldHaveFinishedIt) {
  // From call 60: calls 61-63 on multilane, the re-check from the 64th. A run that called the
  // class more often than a re-check takes but ended one call short of finishing it has the
  // next run do it at once.
  const std::uint64_t recheck = recheck_calls();
  const NextRun redo = run_then_next(60, 3 + recheck - 1);
  EXPECT_EQ(redo.counted, 3u);
  EXPECT_TRUE(redo.rechecks_first);
  // A run of 3 + 2 calls could not have: the re-check waits for the 512th call.
  const NextRun wait = run_then_next(60, 3 + 2);
  EXPECT_EQ(wait.counted, 4u);
  EXPECT_FALSE(wait.rechecks_first);
  // A re-check that finished is not done again.
  const NextRun done = run_then_next(60, 3 + recheck);
  EXPECT_EQ(done.counted, 4u);
  EXPECT_FALSE(done.rechecks_first);
}

TEST(MeasuredRoute, AnExplorationTheRunEndsLeavesTheClassToTheMpiLibraryUntilItsCount) {
  const Agreement alone{.function = [](void*, double*, int) {}, .context = nullptr};
  MeasuredRoutes first;
  MeasuredRoutes::Entry& exploring = *first.for_blocking_call(1, true);
  ASSERT_TRUE(exploring.explores_next_call());
  exploring.explore({"auto"});
  const int calls = kShortDroppedCalls + 1;  // the run ends after one kept MPI call
  for (int call = 0; call < calls; ++call) {
    ASSERT_FALSE(exploring.exploration.record(call == calls - 1 ? 3e-6 : 9e-6, alone));
  }
  const std::optional<ClassDecision> unfinished = exploring.unfinished();
  ASSERT_TRUE(unfinished);
  EXPECT_EQ(unfinished->choice, RouteChoice::Mpi);
  EXPECT_EQ(unfinished->source, DecisionSource::Unfinished);
  EXPECT_DOUBLE_EQ(unfinished->mpi_s, 3e-6);
  EXPECT_EQ(unfinished->calls, static_cast<std::uint64_t>(calls));
  // The next runs: the MPI library's until the class's 64th call, which explores it anew.
  MeasuredRoutes next;
  next.adopt(1, *unfinished);
  MeasuredRoutes::Entry& decided = *next.for_blocking_call(1, true);
  for (auto call = static_cast<std::uint64_t>(calls) + 1; call < kFirstRecheck; ++call) {
    ASSERT_FALSE(decided.explores_next_call()) << "call " << call;
  }
  EXPECT_EQ(decided.calls_this_run(), kFirstRecheck - 1 - static_cast<std::uint64_t>(calls));
  EXPECT_TRUE(decided.explores_next_call());
  EXPECT_FALSE(decided.decision);
  EXPECT_EQ(decided.exploration.calls(), 0);
  // Ended again at once: its count goes on from the 63 calls before.
  decided.explore({"auto"});
  decided.exploration.record(9e-6, alone);
  EXPECT_EQ(decided.unfinished()->calls, kFirstRecheck);
  // A decided class, or one that never explored, has nothing unfinished.
  const MeasuredRoutes::Entry untouched;
  EXPECT_FALSE(untouched.unfinished());
}

TEST(MeasuredRoute, AFirstMeasurementsGainDoesNotPutOffTheReMeasurement) {
  // Seven times faster on the job's first calls, as read from a tuning file and as decided in
  // this run: measured again at call 64 all the same.
  for (const bool from_file : {true, false}) {
    MeasuredRoutes::Entry entry;
    entry.decision = ClassDecision{.choice = RouteChoice::Multilane,
                                   .source = DecisionSource::Measured,
                                   .mpi_s = 7,
                                   .multilane_s = 1,
                                   .from_tuning_file = from_file};
    const auto routes = run_calls(entry, kFirstRecheck - 1 + kOneCandidateCalls, 7, 1);
    EXPECT_EQ(std::count(routes.begin(), routes.end(), RouteChoice::Mpi), kMpiBlockCalls);
    EXPECT_EQ(first_mpi_call(routes), kFirstRecheck - 1 + kBlockCalls);
    EXPECT_EQ(entry.decision->source, DecisionSource::Remeasured);
  }
}

TEST(MeasuredRoute, CallsOfEarlierRunsCountTowardsTheReMeasurement) {
  // The tuning file says 60 calls were made on the route: the 4th call of this run is the
  // 64th, and starts the re-check; a count past 64 waits for the 512th.
  MeasuredRoutes routes;
  routes.adopt(1, ClassDecision{.choice = RouteChoice::Multilane,
                                .source = DecisionSource::TuningFile,
                                .from_tuning_file = true,
                                .calls = 60});
  MeasuredRoutes::Entry& entry = *routes.for_blocking_call(1, true);
  const auto first = run_calls(entry, 4, 10, 5);
  EXPECT_EQ(std::count(first.begin(), first.end(), RouteChoice::Mpi), 0);
  EXPECT_TRUE(entry.rechecking);
  routes.adopt(2, ClassDecision{.choice = RouteChoice::Multilane, .calls = 70});
  MeasuredRoutes::Entry& later = *routes.for_blocking_call(2, true);
  const auto up_to_511 = run_calls(later, 441, 10, 5);
  EXPECT_EQ(std::count(up_to_511.begin(), up_to_511.end(), RouteChoice::Mpi), 0);
  EXPECT_EQ(later.decided_calls - later.calls_before, 441u);  // this run's, for the file
  EXPECT_FALSE(later.rechecking);
  run_calls(later, 1, 10, 5);  // the 512th
  EXPECT_TRUE(later.rechecking);
}

TEST(MeasuredRoute, AnMpiDecisionIsNotMeasuredAgainOnceCheckedInItsSteadyState) {
  MeasuredRoutes::Entry entry;
  entry.decision = ClassDecision{.choice = RouteChoice::Mpi, .mpi_s = 10, .multilane_s = 9.5};
  const auto routes = run_calls(entry, 5000, 10, 1);
  EXPECT_EQ(std::count(routes.begin(), routes.end(), RouteChoice::Mpi), 5000);
  EXPECT_EQ(entry.decision->source, DecisionSource::Remeasured);
  EXPECT_DOUBLE_EQ(entry.decision->mpi_s, 10);
  EXPECT_TRUE(kept_for_the_run(*entry.decision));
}

// The steady check of `decision` in a class of `block` calls a block, over calls that take
// `times` (by call, from the first on the route); returns the decision after the last, and
// whether each call was timed.
std::pair<ClassDecision, std::vector<bool>> check_steadily(ClassDecision decision,
                                                           const std::vector<double>& times,
                                                           int block = kBlockCalls) {
  MeasuredRoutes::Entry entry;
  entry.block = block;
  entry.decision = decision;
  std::vector<bool> timed;
  const Agreement alone{.function = [](void*, double*, int) {}, .context = nullptr};
  for (const double t : times) {
    EXPECT_FALSE(entry.explores_next_call());
    timed.push_back(entry.times_decided_call());
    if (!timed.back()) continue;
    if (auto d = entry.record_steady(t, alone)) entry.settle(*d);
  }
  return {*entry.decision, timed};
}

TEST(MeasuredRoute, AnMpiDecisionWhoseSteadyCallsAverageTwiceMultilanesGoesToMultilane) {
  // MPICH's bcast of 4 B on 4 ranks of 2 cores: rated 1.1 us by the median of its explored
  // calls (multilane 1.3), it holds a core for a time slice in some of its calls later.
  const ClassDecision explored{.choice = RouteChoice::Mpi, .mpi_s = 1.1e-6, .multilane_s = 1.3e-6};
  const int window = kSteadySkippedCalls + kSteadyWindowCalls;
  std::vector<double> times(window, 1.1e-6);
  times[kSteadySkippedCalls - 1] = 1.0;  // timed for a barrier's interval, not counted
  times[10] = 4e-3 / 12 * 0.01;          // steady: a mean of 1.1 us and a little
  auto [kept, timed] = check_steadily(explored, times);
  EXPECT_EQ(kept.choice, RouteChoice::Mpi);
  EXPECT_EQ(kept.source, DecisionSource::Measured);  // one window of four
  EXPECT_EQ(kept.steady_calls, kSteadyWindowCalls);
  const double steady_s = (11 * 1.1e-6 + 4e-3 / 12 * 0.01) / 12;
  EXPECT_NEAR(kept.mpi_s, steady_s, 1e-12);
  const auto first_timed = std::find(timed.begin(), timed.end(), true) - timed.begin();
  EXPECT_EQ(first_timed, kSteadySkippedCalls - 1);
  // One call in twelve held for 4 ms: a mean of 335 us, and the class goes to multilane.
  times[10] = 4e-3;
  const ClassDecision moved = check_steadily(explored, times).first;
  EXPECT_EQ(moved.choice, RouteChoice::Multilane);
  EXPECT_EQ(moved.source, DecisionSource::Remeasured);
  EXPECT_DOUBLE_EQ(moved.multilane_s, 1.3e-6);
  // A decision that is not one by block medians for the MPI library is not checked.
  for (const ClassDecision& other :
       {ClassDecision{.choice = RouteChoice::Mpi, .source = DecisionSource::Remeasured},
        ClassDecision{.choice = RouteChoice::Mpi, .source = DecisionSource::Pruned},
        ClassDecision{.choice = RouteChoice::Mpi, .source = DecisionSource::Default}}) {
    const auto [same, none] = check_steadily(other, times);
    EXPECT_EQ(same.source, other.source);
    EXPECT_EQ(std::count(none.begin(), none.end(), true), 0);
  }
}

TEST(MeasuredRoute, TheSteadyCheckPoolsItsWindowsOverRunsUntilFortyEightCalls) {
  const ClassDecision explored{.choice = RouteChoice::Mpi, .mpi_s = 1e-6, .multilane_s = 2e-6};
  // A run of 50 calls at 1 us: three windows of four calls skipped and twelve timed, pooled.
  auto [after, timed] = check_steadily(explored, std::vector<double>(50, 1e-6));
  // The calls after a window's agreement are not timed (the fourth starts a barrier's interval).
  const int window = kSteadySkippedCalls + kSteadyWindowCalls;
  EXPECT_TRUE(timed[window - 1]);
  EXPECT_FALSE(timed[window]);
  EXPECT_FALSE(timed[window + kSteadySkippedCalls - 2]);
  EXPECT_TRUE(timed[window + kSteadySkippedCalls - 1]);
  EXPECT_EQ(after.choice, RouteChoice::Mpi);
  EXPECT_EQ(after.source, DecisionSource::Measured);
  EXPECT_EQ(after.steady_calls, 3 * kSteadyWindowCalls);
  EXPECT_DOUBLE_EQ(after.mpi_s, 1e-6);
  // The next run's window is pooled with them: one call of its twelve held for 4 ms makes
  // the pooled mean 84 us, past twice multilane's 2 us.
  std::vector<double> next(window, 1e-6);
  next[kSteadySkippedCalls + 5] = 4e-3;
  const ClassDecision moved = check_steadily(after, next).first;
  EXPECT_EQ(moved.choice, RouteChoice::Multilane);
  EXPECT_EQ(moved.source, DecisionSource::Remeasured);
  EXPECT_EQ(moved.steady_calls, 0u);  // multilane's time is its rating: no steady mean yet
  EXPECT_NEAR(moved.mpi_s, (47 * 1e-6 + 4e-3) / 48, 1e-12);
  // Without it, the fourth window ends the check: the MPI library keeps the class.
  const ClassDecision checked = check_steadily(after, std::vector<double>(next.size(), 1e-6)).first;
  EXPECT_EQ(checked.choice, RouteChoice::Mpi);
  EXPECT_EQ(checked.source, DecisionSource::Remeasured);
  EXPECT_TRUE(kept_for_the_run(checked));
  const auto [same, none] = check_steadily(checked, next);
  EXPECT_EQ(std::count(none.begin(), none.end(), true), 0);
}

TEST(MeasuredRoute, AShortMultilaneDecisionWhoseSteadyMeanReachesTheMpiLibrarysGoesBack) {
  // OSU's gather of 1 B on 4 ranks of 2 cores: hier-shm rated 1.89 us by block medians against
  // the MPI library's 2.47 us, and its calls average 2.89 us.
  const ClassDecision explored{.choice = RouteChoice::Multilane,
                               .algorithm = "hier-shm",
                               .mpi_s = 2.47e-6,
                               .multilane_s = 1.89e-6};
  const int window = kSteadySkippedCalls + kSteadyWindowCalls;
  auto [back, timed] =
      check_steadily(explored, std::vector<double>(window, 2.89e-6), kShortBlockCalls);
  EXPECT_EQ(back.choice, RouteChoice::Mpi);
  EXPECT_EQ(back.source, DecisionSource::Remeasured);
  EXPECT_TRUE(back.algorithm.empty());
  EXPECT_DOUBLE_EQ(back.mpi_s, 2.47e-6);
  EXPECT_NEAR(back.multilane_s, 2.89e-6, 1e-15);
  EXPECT_EQ(back.steady_calls, 0u);  // the MPI library's time is its rating
  EXPECT_TRUE(kept_for_the_run(back));
  EXPECT_EQ(std::count(timed.begin(), timed.end(), true), kSteadyWindowCalls + 1);
  // Below the MPI library's time, three windows pool (36 calls), and multilane keeps it.
  const ClassDecision kept =
      check_steadily(explored, std::vector<double>(3 * window, 2.0e-6), kShortBlockCalls).first;
  EXPECT_EQ(kept.choice, RouteChoice::Multilane);
  EXPECT_EQ(kept.algorithm, "hier-shm");
  EXPECT_EQ(kept.source, DecisionSource::Remeasured);
  EXPECT_EQ(kept.steady_calls, kMultilaneSteadyCalls);
  EXPECT_NEAR(kept.multilane_s, 2.0e-6, 1e-15);
  const auto after =
      check_steadily(kept, std::vector<double>(window, 9.0), kShortBlockCalls).second;
  EXPECT_EQ(std::count(after.begin(), after.end(), true), 0);
  // The third window at twice the MPI library's time after two at 2 us: a mean of 2.67 us.
  std::vector<double> late(3 * window, 2.0e-6);
  for (int i = 2 * window + kSteadySkippedCalls; i < 3 * window; ++i) late[i] = 4.0e-6;
  const ClassDecision late_back = check_steadily(explored, late, kShortBlockCalls).first;
  EXPECT_EQ(late_back.choice, RouteChoice::Mpi);
  EXPECT_NEAR(late_back.multilane_s, 8.0e-6 / 3, 1e-15);
}

TEST(MeasuredRoute, OnlyAShortMultilaneDecisionByBlocksIsCheckedInItsSteadyState) {
  const int window = kSteadySkippedCalls + kSteadyWindowCalls;
  const std::vector<double> slow(window, 1.0);
  const ClassDecision by_blocks{
      .choice = RouteChoice::Multilane, .mpi_s = 1e-3, .multilane_s = 0.5e-3};
  // A long class (1 MiB or more): its calls' medians and means agree.
  const auto [long_class, none] = check_steadily(by_blocks, slow);
  EXPECT_EQ(long_class.choice, RouteChoice::Multilane);
  EXPECT_EQ(std::count(none.begin(), none.end(), true), 0);
  // Priced by the model, or from a tuning file written by hand.
  for (const DecisionSource source : {DecisionSource::Model, DecisionSource::TuningFile}) {
    ClassDecision other = by_blocks;
    other.source = source;
    const auto [same, untimed] = check_steadily(other, slow, kShortBlockCalls);
    EXPECT_EQ(same.choice, RouteChoice::Multilane);
    EXPECT_EQ(std::count(untimed.begin(), untimed.end(), true), 0);
  }
  // The MPI library's steady check moved it to multilane: checked, against the MPI library's
  // steady mean.
  ClassDecision moved = by_blocks;
  moved.source = DecisionSource::Remeasured;
  EXPECT_EQ(check_steadily(moved, slow, kShortBlockCalls).first.choice, RouteChoice::Mpi);
}

TEST(MeasuredRoute, TheSteadyCheckOfAMultilaneRouteLeavesItsReChecksOnTime) {
  MeasuredRoutes::Entry entry;
  entry.block = kShortBlockCalls;
  entry.decision = ClassDecision{
      .choice = RouteChoice::Multilane, .algorithm = "hier-shm", .mpi_s = 10, .multilane_s = 5};
  const Agreement alone{.function = [](void*, double*, int) {}, .context = nullptr};
  int timed = 0;
  for (std::uint64_t call = 1; call < kFirstRecheck; ++call) {
    ASSERT_FALSE(entry.explores_next_call()) << call;
    if (!entry.times_decided_call()) continue;
    ++timed;
    if (auto d = entry.record_steady(5, alone)) entry.settle(*d);
  }
  // Three windows, each timed from the call that starts its first interval.
  EXPECT_EQ(timed, 3 * (kSteadyWindowCalls + 1));
  EXPECT_EQ(entry.decision->steady_calls, kMultilaneSteadyCalls);
  EXPECT_TRUE(entry.explores_next_call());  // the 64th: the re-check
  EXPECT_TRUE(entry.rechecking);
  EXPECT_FALSE(entry.times_decided_call());
}

TEST(PlacementKey, DependsOnWhereRanksRunNotOnNames) {
  Platform a = make_uniform_platform(2, 2, 1, 2, 1e9, 1e-5, 1e-3, 1e8, 1);
  Platform b = a;
  b.name = "other";
  for (auto& site : b.sites) site.name += "-renamed";
  EXPECT_EQ(placement_key(a).fingerprint, placement_key(b).fingerprint);
  EXPECT_EQ(placement_key(a).words, "8 ranks on 4 nodes of 2 sites");
  Platform c = make_uniform_platform(1, 4, 1, 2, 1e9, 1e-5, 1e-3, 1e8, 1);
  EXPECT_NE(placement_key(a).fingerprint, placement_key(c).fingerprint);
  EXPECT_EQ(placement_key(a).fingerprint.size(), 16u);
}

TEST(RouteTuning, WrittenAndReadBackWithTheShmTablesKept) {
  RouteTuning tuning;
  tuning.others = "[[shm]]\ncollective = \"bcast\"\nmax_size = 65536\n";
  PlacementRoutes p{.mpi_library = "Open MPI v4.1.4, \"quoted\"",
                    .multilane_version = "0.1.0",
                    .placement = "4 ranks on 1 node of 1 site",
                    .fingerprint = "0123456789abcdef",
                    .ranks = 4,
                    .classes = {}};
  const Reduction sum{ElementType::Float, ReduceOp::Sum};
  p.classes[classify(WrappedCall::Allreduce, 4096, sum).key()] = {
      .choice = RouteChoice::Multilane,
      .source = DecisionSource::Measured,
      .algorithm = "ring",
      .mpi_s = 41.25e-6,
      .multilane_s = 18e-6,
      .calls = 140};
  p.classes[classify(WrappedCall::Barrier, 1, {}).key()] = {.choice = RouteChoice::Mpi,
                                                            .source = DecisionSource::Pruned};
  p.classes[classify(WrappedCall::Bcast, 4, {}).key()] = {.choice = RouteChoice::Mpi,
                                                          .source = DecisionSource::Measured,
                                                          .mpi_s = 11.5e-6,
                                                          .multilane_s = 1.25e-6,
                                                          .steady_calls = 24};
  tuning.placements.push_back(p);
  const std::string text = format_route_tuning(tuning);
  EXPECT_NE(text.find("call = \"MPI_Allreduce\"\n  bytes = 4096\n  type = \"float\"\n  op = "
                      "\"sum\"\n  route = \"multilane\"\n  algorithm = \"ring\"\n  source = "
                      "\"measured\"\n  mpi_us = "
                      "41.25\n  multilane_us = 18.00\n  calls = 140\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("route = \"mpi\"\n  source = \"measured\"\n  mpi_us = 11.50\n  "
                      "multilane_us = 1.25\n  steady_calls = 24\n"),
            std::string::npos)
      << text;
  const RouteTuning back = parse_route_tuning(text, "routes.toml");
  ASSERT_EQ(back.placements.size(), 1u);
  EXPECT_TRUE(back.placements[0].same_run(p));
  EXPECT_EQ(back.placements[0].placement, p.placement);
  ASSERT_EQ(back.placements[0].classes.size(), 3u);
  const ClassDecision& steady =
      back.placements[0].classes.at(classify(WrappedCall::Bcast, 4, {}).key());
  EXPECT_TRUE(awaits_steady_check(steady));
  EXPECT_EQ(steady.steady_calls, 24u);
  const ClassDecision& d =
      back.placements[0].classes.at(classify(WrappedCall::Allreduce, 4096, sum).key());
  EXPECT_EQ(d.choice, RouteChoice::Multilane);
  EXPECT_EQ(d.source, DecisionSource::Measured);
  EXPECT_EQ(d.algorithm, "ring");
  EXPECT_TRUE(d.from_tuning_file);
  EXPECT_NEAR(d.mpi_s, 41.25e-6, 1e-12);
  EXPECT_EQ(d.calls, 140u);
  EXPECT_NE(back.others.find("[[shm]]"), std::string::npos) << back.others;
  EXPECT_NE(back.others.find("max_size = 65536"), std::string::npos) << back.others;
}

void expect_tuning_error(const std::string& text, const std::string& message) {
  try {
    parse_route_tuning(text, "routes.toml");
    ADD_FAILURE() << "accepted: " << text;
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), message);
  }
}

TEST(RouteTuning, ErrorsNameTheFileTheLineAndTheKey) {
  const std::string head =
      "[[placement]]\nmpi_library = \"x\"\nmultilane = \"0.1.0\"\nfingerprint = \"f\"\nranks = "
      "2\n";
  expect_tuning_error(head +
                          "[[placement.class]]\ncall = \"MPI_Bcast\"\nbytes = 8\nroute = "
                          "\"fast\"\n",
                      "routes.toml:9: route: \"fast\": must be \"mpi\" or \"multilane\"");
  expect_tuning_error(
      head +
          "[[placement.class]]\ncall = \"MPI_Alltoallv\"\nbytes = 0\nroute = "
          "\"multilane\"\nalgorithm = \"ring\"\n",
      "routes.toml:10: algorithm: must be one of pairwise, linear, multilane-sites");
  expect_tuning_error(head +
                          "[[placement.class]]\ncall = \"MPI_Bcast\"\nbytes = 8\nroute = "
                          "\"multilane\"\ncalls = -3\n",
                      "routes.toml:10: calls: must be a whole number, 0 or more");
  expect_tuning_error(head +
                          "[[placement.class]]\ncall = \"MPI_Bcast\"\nbytes = 8\nroute = "
                          "\"mpi\"\nsteady_calls = 1.5\n",
                      "routes.toml:10: steady_calls: must be a whole number, 0 or more");
  expect_tuning_error(head + "[[placement.class]]\ncall = \"MPI_Bcastt\"\nbytes = 8\n",
                      "routes.toml:7: call: unknown call \"MPI_Bcastt\"");
  expect_tuning_error(head +
                          "[[placement.class]]\ncall = \"MPI_Allreduce\"\nbytes = 8\ntype = "
                          "\"float\"\nroute = \"mpi\"\n",
                      "routes.toml:6: op: missing");
  expect_tuning_error("[[placement]]\nmpi_library = \"x\"\nranks = \"two\"\n",
                      "routes.toml:1: multilane: missing");
  try {
    parse_route_tuning("[[placement]\n", "routes.toml");
    ADD_FAILURE() << "a broken table header was accepted";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("routes.toml:1: ", 0), 0u) << e.what();
  }
}

}  // namespace
}  // namespace multilane::mpi
