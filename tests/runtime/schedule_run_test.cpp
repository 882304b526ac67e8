// ScheduleRun (runtime/exec/schedule_run.hpp): who owns a collective call while it runs. The
// engine does, from begin_call() to end_call(), so that nothing of a call outlives its engine.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "driving.hpp"
#include "multilane/algorithms.hpp"
#include "runtime/exec/schedule_run.hpp"

namespace multilane::runtime {
namespace {

using namespace std::chrono_literals;

EngineConfig config_of(int rank) {
  EngineConfig config;
  config.rank = rank;
  config.size = 2;
  config.job_id = 0x5eed;
  config.secret = JobSecret::from_text("schedule run test");
  config.timeout = 10s;
  return config;
}

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
  auto engine = std::make_unique<Engine>(config_of(1));
  testing::on_driving_thread(*engine, [&] {
    start_schedule_run(*engine, schedule, plan, platform, 1, {.send = message, .recv = message},
                       {.sequence = 1, .signature = call_signature(*schedule, params)},
                       [token, &reported](const std::string&) { reported = true; });
  });
  EXPECT_EQ(token.use_count(), 2) << "the running call holds its completion";
  engine.reset();
  EXPECT_EQ(token.use_count(), 1) << "the call outlived its engine";
  EXPECT_FALSE(reported);
}

}  // namespace
}  // namespace multilane::runtime
