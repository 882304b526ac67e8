// GroupRunner (runtime/shm/group_runner.hpp): group ops run in (call, k) order whatever the
// order they become ready in, a cancelled call's queued ops report the reason and do not hold
// up later calls, a job's error reaches its completion, and a caller runs an op on its own
// thread only when it is the next one in order.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/outcome_text.hpp"
#include "runtime/shm/group_runner.hpp"
#include "shm/fork_ranks.hpp"

namespace multilane::runtime::shm {
namespace {

using namespace std::chrono_literals;

GroupRunnerConfig lone_rank() {
  GroupRunnerConfig config;
  config.job_id = testing::unique_job_id();
  config.options.timeout = 5s;
  return config;
}

struct Log {
  std::mutex mutex;
  std::vector<std::string> entries;
  void add(std::string entry) {
    std::lock_guard lock(mutex);
    entries.push_back(std::move(entry));
  }
};

TEST(GroupRunner, RunsOpsInCallOrderWhateverOrderTheyAreSubmittedIn) {
  Log log;
  std::promise<void> finished;
  {
    GroupRunner runner(lone_rank());
    runner.expect(1, 2);
    runner.expect(2, 1);
    auto job = [&log](std::string name) {
      return [&log, name](ShmGroup& group) {
        group.barrier();
        log.add(name);
      };
    };
    auto ok = [](const Outcome& error) { EXPECT_EQ(runtime::testing::text_of(error), ""); };
    runner.submit(2, 0, job("2.0"), [&](const Outcome& error) {
      EXPECT_EQ(runtime::testing::text_of(error), "");
      finished.set_value();
    });
    runner.submit(1, 1, job("1.1"), ok);
    runner.submit(1, 0, job("1.0"), ok);
    ASSERT_EQ(finished.get_future().wait_for(10s), std::future_status::ready);
  }
  EXPECT_EQ(log.entries, (std::vector<std::string>{"1.0", "1.1", "2.0"}));
}

TEST(GroupRunner, CancelledCallReportsItsQueuedOpsAndLetsLaterCallsRun) {
  Log log;
  std::promise<std::string> cancelled;
  std::promise<std::string> later;
  GroupRunner runner(lone_rank());
  runner.expect(1, 2);
  runner.expect(2, 1);
  runner.submit(
      1, 1, [&log](ShmGroup&) { log.add("1.1"); },
      [&](const Outcome& error) { cancelled.set_value(runtime::testing::text_of(error)); });
  runner.submit(
      2, 0, [&log](ShmGroup&) { log.add("2.0"); },
      [&](const Outcome& error) { later.set_value(runtime::testing::text_of(error)); });
  runner.cancel(1, {ErrorKind::peer_gone, "cancelled: peer gone"});
  auto cancelled_error = cancelled.get_future();
  auto later_error = later.get_future();
  ASSERT_EQ(cancelled_error.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(cancelled_error.get(), "cancelled: peer gone");
  ASSERT_EQ(later_error.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(later_error.get(), "");
  EXPECT_EQ(log.entries, (std::vector<std::string>{"2.0"}));
}

TEST(GroupRunner, AJobsErrorReachesItsCompletion) {
  std::promise<std::string> done;
  GroupRunner runner(lone_rank());
  runner.expect(1, 1);
  runner.submit(
      1, 0, [](ShmGroup& group) { group.bcast({}, 3); },
      [&](const Outcome& error) { done.set_value(runtime::testing::text_of(error)); });
  auto error = done.get_future();
  ASSERT_EQ(error.wait_for(10s), std::future_status::ready);
  EXPECT_NE(error.get().find("bcast: root 3 is outside 0..0"), std::string::npos);
}

TEST(GroupRunner, ACallerRunsAnOpHereOnlyWhenItIsTheNextInOrder) {
  Log log;
  GroupRunner runner(lone_rank());
  runner.expect(1, 2);
  runner.expect(2, 1);
  const GroupRunner::Job job = [&log](ShmGroup& group) {
    group.barrier();
    log.add("here");
  };
  Outcome outcome;
  EXPECT_FALSE(runner.run_here(2, 0, job, outcome));  // call 1 comes first
  EXPECT_FALSE(runner.run_here(1, 1, job, outcome));  // op 0 of call 1 comes first
  EXPECT_FALSE(runner.run_here(job, outcome));        // a local call waits for both calls
  outcome = Failure{};
  EXPECT_TRUE(runner.run_here(1, 0, job, outcome));
  EXPECT_EQ(runtime::testing::text_of(outcome), "");
  EXPECT_TRUE(runner.run_here(1, 1, job, outcome));
  EXPECT_FALSE(outcome.has_value());
  std::promise<std::string> submitted;
  runner.submit(
      2, 0, [&log](ShmGroup&) { log.add("runner"); },
      [&](const Outcome& error) { submitted.set_value(runtime::testing::text_of(error)); });
  auto error = submitted.get_future();
  ASSERT_EQ(error.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(error.get(), "");
  EXPECT_EQ(log.entries, (std::vector<std::string>{"here", "here", "runner"}));
  EXPECT_EQ(runner.submitted(), 1U);
  outcome = Failure{};
  EXPECT_TRUE(runner.run_here(job, outcome));  // every expected op has run
  EXPECT_FALSE(outcome.has_value());
}

}  // namespace
}  // namespace multilane::runtime::shm
