// ScheduleRun (runtime/exec/schedule_run.hpp): who owns a collective call while it runs. The
// engine does, from begin_call() to end_call(), so that nothing of a call outlives its engine.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "driving.hpp"
#include "multilane/algorithms.hpp"
#include "runtime/exec/schedule_run.hpp"

namespace multilane::runtime {
namespace {

// Rank 1 of a 2-rank bcast waits for rank 0, which never runs. Ending the engine frees the
// call, `done` included, without calling it.
TEST(ScheduleRun, ACallStillWaitingEndsWithItsEngine) {
  const Platform platform = make_uniform_platform(1, 2, 1, 1, 1e9, 50e-6, 10e-3, 1e10, 1e9);
  const BuildParams params{.root = 0, .size = 1000};
  auto schedule = std::make_shared<const Schedule>(
      build_schedule(platform, Collective::Bcast, "binomial", params));
  auto plan = plan_rank(*schedule, platform, 1);
  std::vector<std::byte> message(1000);
  auto token = std::make_shared<int>(0);
  bool reported = false;
  EngineConfig config;
  config.rank = 1;
  config.size = 2;
  auto engine = std::make_unique<Engine>(config);
  testing::on_driving_thread(*engine, [&] {
    start_schedule_run(
        *engine, schedule, plan, platform, 1, {.send = message, .recv = message},
        {.sequence = 1, .signature = call_signature(*schedule, params), .reduction = {}},
        [token, &reported](const Outcome&) { reported = true; });
  });
  EXPECT_EQ(token.use_count(), 2) << "the running call holds its completion";
  engine.reset();
  EXPECT_EQ(token.use_count(), 1) << "the call outlived its engine";
  EXPECT_FALSE(reported);
}

}  // namespace
}  // namespace multilane::runtime
