// Waiting on a SyncWord: polling (pausing or yielding the core), then sleeping on the futex;
// publishers that fence, and publishers that leave the fence to the sleeper.
#include "runtime/shm/sync_word.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "runtime/shm/asymmetric_fence.hpp"

namespace multilane::runtime::shm {
namespace {

using namespace std::chrono_literals;

// Publishes `value` on `word`, with a fence or without (the sleeper fences then).
void publish_as(const WaitPolicy& policy, SyncWord& word, std::uint32_t value) {
  if (policy.publishers_unfenced) return publish_unfenced(word, value);
  publish(word, value);
}

// Publishes `value` on `word` from another thread after `delay`.
std::jthread publish_after(const WaitPolicy& policy, SyncWord& word, std::uint32_t value,
                           std::chrono::milliseconds delay) {
  return std::jthread([policy, &word, value, delay] {
    std::this_thread::sleep_for(delay);
    publish_as(policy, word, value);
  });
}

struct Waiting {
  bool yield = false;     // poll with sched_yield instead of a pause
  bool unfenced = false;  // publishers do not fence; the sleeper does (asymmetric_fence.hpp)
};

class SyncWordWait : public ::testing::TestWithParam<Waiting> {
 protected:
  void SetUp() override {
    if (GetParam().unfenced && !register_for_asymmetric_fence()) {
      GTEST_SKIP() << "the kernel offers no membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED)";
    }
  }
  WaitPolicy policy(std::chrono::nanoseconds spin) const {
    WaitPolicy p;
    p.spin = spin;
    p.yield_while_polling = GetParam().yield;
    p.publishers_unfenced = GetParam().unfenced;
    p.timeout = 5000ms;
    p.check_interval = 5ms;
    return p;
  }
};

TEST_P(SyncWordWait, APublishWithinTheSpinIsSeenByPollingAlone) {
  SyncWord word;
  int checks = 0;
  const auto publisher = publish_after(policy(4s), word, 1, 20ms);
  EXPECT_TRUE(wait_until_reached(word, 1, policy(4s), [&] { ++checks; }));
  EXPECT_EQ(checks, 0);  // never slept: checks run only between sleeps
  EXPECT_EQ(word.sleepers, 0u);
}

TEST_P(SyncWordWait, APublishAfterTheSpinWakesTheSleeper) {
  SyncWord word;
  int checks = 0;
  const auto publisher = publish_after(policy(1ms), word, 1, 100ms);
  EXPECT_TRUE(wait_until_reached(word, 1, policy(1ms), [&] { ++checks; }));
  EXPECT_GT(checks, 0);
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

// Two threads hand a turn back and forth, every wait going to sleep at once (no spin), so the
// sleeping path runs thousands of times. A sleeper that is not woken sleeps out its whole
// slice (the check interval, 10 s here) before it looks again: all hand-overs within one
// interval show that every one of them woke the other side.
TEST_P(SyncWordWait, EveryHandOverWakesTheSleepingSide) {
  constexpr std::uint32_t kTurns = 2000;
  SyncWord ping, pong;
  WaitPolicy p = policy(0ns);
  p.check_interval = 10s;
  p.timeout = 30s;
  const auto start = std::chrono::steady_clock::now();
  std::uint32_t answered = 0;
  std::jthread other([&] {
    for (std::uint32_t turn = 1; turn <= kTurns; ++turn) {
      if (!wait_until_reached(ping, turn, p, [] {})) return;
      ++answered;
      publish_as(p, pong, turn);
    }
  });
  std::uint32_t served = 0;
  for (std::uint32_t turn = 1; turn <= kTurns; ++turn) {
    publish_as(p, ping, turn);
    if (!wait_until_reached(pong, turn, p, [] {})) break;
    if (std::chrono::steady_clock::now() - start > p.check_interval) break;  // one was missed
    ++served;
  }
  publish_as(p, ping, kTurns);  // lets the other side finish at once if this one stopped
  other.join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, p.check_interval);
  EXPECT_EQ(served, kTurns);
  EXPECT_EQ(answered, kTurns);
  EXPECT_EQ(ping.sleepers + pong.sleepers, 0u);
}

INSTANTIATE_TEST_SUITE_P(PausingYieldingFencedUnfenced, SyncWordWait,
                         ::testing::Values(Waiting{false, false}, Waiting{true, false},
                                           Waiting{false, true}, Waiting{true, true}),
                         [](const auto& info) {
                           return std::string(info.param.yield ? "Yielding" : "Pausing") +
                                  (info.param.unfenced ? "Unfenced" : "Fenced");
                         });

}  // namespace
}  // namespace multilane::runtime::shm
