// Waiting on a SyncWord: polling (pausing or yielding the core), then sleeping on the futex.
#include "runtime/shm/sync_word.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

namespace multilane::runtime::shm {
namespace {

using namespace std::chrono_literals;

// Publishes `value` on `word` from another thread after `delay`.
std::jthread publish_after(SyncWord& word, std::uint32_t value, std::chrono::milliseconds delay) {
  return std::jthread([&word, value, delay] {
    std::this_thread::sleep_for(delay);
    publish(word, value);
  });
}

class SyncWordWait : public ::testing::TestWithParam<bool> {
 protected:
  WaitPolicy policy(std::chrono::nanoseconds spin) const {
    WaitPolicy p;
    p.spin = spin;
    p.yield_while_polling = GetParam();
    p.timeout = 5000ms;
    p.check_interval = 5ms;
    return p;
  }
};

TEST_P(SyncWordWait, APublishWithinTheSpinIsSeenByPollingAlone) {
  SyncWord word;
  int checks = 0;
  const auto publisher = publish_after(word, 1, 20ms);
  EXPECT_TRUE(wait_until_reached(word, 1, policy(4s), [&] { ++checks; }));
  EXPECT_EQ(checks, 0);  // never slept: checks run only between sleeps
  EXPECT_EQ(word.sleepers, 0u);
}

// The publisher waits until the waiter sleeps on the word (past its spin of 1 ms) and only then
// publishes: the sleeper wakes and sees it, however the two threads are scheduled.
TEST_P(SyncWordWait, APublishAfterTheSpinWakesTheSleeper) {
  SyncWord word;
  bool saw_a_sleeper = false;
  std::jthread publisher([&] {
    const auto give_up = std::chrono::steady_clock::now() + 5s;
    auto sleepers = [&] { return std::atomic_ref<std::uint32_t>(word.sleepers).load(); };
    while (sleepers() == 0 && std::chrono::steady_clock::now() < give_up) {
      std::this_thread::sleep_for(1ms);
    }
    saw_a_sleeper = sleepers() > 0;
    publish(word, 1);
  });
  EXPECT_TRUE(wait_until_reached(word, 1, policy(1ms), [] {}));
  publisher.join();
  EXPECT_TRUE(saw_a_sleeper);
  EXPECT_EQ(word.sleepers, 0u);
}

TEST_P(SyncWordWait, AValueNeverReachedTimesOut) {
  SyncWord word;
  publish(word, 1);
  WaitPolicy p = policy(1ms);
  p.timeout = 30ms;
  EXPECT_FALSE(wait_until_reached(word, 2, p, [] {}));
  EXPECT_TRUE(wait_until_reached(word, 1, p, [] {}));  // already reached: no wait
}

INSTANTIATE_TEST_SUITE_P(PausingAndYielding, SyncWordWait, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "Yielding" : "Pausing"; });

}  // namespace
}  // namespace multilane::runtime::shm
