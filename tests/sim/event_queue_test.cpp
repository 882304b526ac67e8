// The simulator's event queue pops in exactly (time, key) order, like a plain binary heap,
// including events pushed for the current instant while it is being popped.
#include "sim/event_queue.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <queue>
#include <random>
#include <utility>
#include <vector>

namespace multilane::sim {
namespace {

using Reference =
    std::priority_queue<std::pair<double, std::uint64_t>,
                        std::vector<std::pair<double, std::uint64_t>>, std::greater<>>;

// Replays a random run of pushes and pops on both queues, the way the engine uses them: times
// never before the current one, few distinct times (so many ties), and pushes both between
// instants and in the middle of one (some for the current instant itself).
void replay(std::uint32_t seed, int steps, int distinct_times) {
  std::mt19937 rng(seed);
  EventQueue queue;
  Reference reference;
  double now = 0;
  std::uint64_t next_key = 0;
  auto push = [&](double time) {
    // Keys are unique but pushed out of order.
    const std::uint64_t key = (static_cast<std::uint64_t>(rng()) << 20) | next_key++;
    queue.push(time, key);
    reference.emplace(time, key);
  };
  auto later_time = [&] {
    const int step = static_cast<int>(rng() % static_cast<unsigned>(distinct_times));
    return now + step * 0.125e-3 + (rng() % 4 == 0 ? 1e-9 * (rng() % 3) : 0.0);
  };
  for (int i = 0; i < steps; ++i) {
    const int pushes = static_cast<int>(rng() % 4);
    for (int k = 0; k < pushes; ++k) push(later_time());
    if (queue.empty()) {
      ASSERT_TRUE(reference.empty());
      continue;
    }
    now = queue.next_time();
    ASSERT_EQ(now, reference.top().first);
    do {
      const auto e = queue.pop();
      ASSERT_FALSE(reference.empty());
      ASSERT_EQ(e.time, reference.top().first) << "step " << i;
      ASSERT_EQ(e.key, reference.top().second) << "step " << i;
      reference.pop();
      if (rng() % 5 == 0) push(now);  // an event for the instant being popped
      if (rng() % 7 == 0) push(later_time());
    } while (queue.in_instant());
    ASSERT_EQ(queue.size(), reference.size());
  }
  while (!queue.empty()) {
    queue.next_time();
    const auto e = queue.pop();
    ASSERT_EQ(e.time, reference.top().first);
    ASSERT_EQ(e.key, reference.top().second);
    reference.pop();
  }
  EXPECT_TRUE(reference.empty());
}

TEST(EventQueue, PopsInTimeThenKeyOrderWithManyTies) {
  for (std::uint32_t seed = 1; seed <= 20; ++seed) replay(seed, 2000, 3);
}

TEST(EventQueue, PopsInTimeThenKeyOrderWithSpreadTimes) {
  for (std::uint32_t seed = 1; seed <= 20; ++seed) replay(seed, 2000, 100000);
}

TEST(EventQueue, InstantGathersEveryEventOfOneTimeInKeyOrder) {
  EventQueue q;
  q.push(2.0, 5);
  q.push(1.0, 9);
  q.push(2.0, 1);
  q.push(1.0, 3);
  q.push(3.0, 0);
  EXPECT_EQ(q.next_time(), 1.0);
  EXPECT_EQ(q.pop().key, 3u);
  q.push(1.0, 4);  // the current instant, between the popped 3 and the pending 9
  EXPECT_TRUE(q.in_instant());
  EXPECT_EQ(q.pop().key, 4u);
  EXPECT_EQ(q.pop().key, 9u);
  EXPECT_FALSE(q.in_instant());
  EXPECT_EQ(q.next_time(), 2.0);
  EXPECT_EQ(q.pop().key, 1u);
  EXPECT_EQ(q.pop().key, 5u);
  EXPECT_EQ(q.next_time(), 3.0);
  EXPECT_EQ(q.pop().key, 0u);
  EXPECT_TRUE(q.empty());
}

TEST(EventQueue, EarlierTimesCountAsTheCurrentInstant) {
  EventQueue q;
  q.push(5.0, 2);
  EXPECT_EQ(q.next_time(), 5.0);
  q.push(4.0, 1);   // in the past: happens now
  q.push(-0.0, 7);  // likewise
  EXPECT_EQ(q.pop().key, 1u);
  const auto e = q.pop();
  EXPECT_EQ(e.key, 2u);
  EXPECT_EQ(e.time, 5.0);
  EXPECT_EQ(q.pop().key, 7u);
  EXPECT_TRUE(q.empty());
}

TEST(EventQueue, InfiniteTimesComeLast) {
  EventQueue q;
  q.push(std::numeric_limits<double>::infinity(), 1);
  q.push(1e300, 2);
  q.push(0.0, 3);
  EXPECT_EQ(q.next_time(), 0.0);
  EXPECT_EQ(q.pop().key, 3u);
  EXPECT_EQ(q.next_time(), 1e300);
  EXPECT_EQ(q.pop().key, 2u);
  EXPECT_EQ(q.next_time(), std::numeric_limits<double>::infinity());
  EXPECT_EQ(q.pop().key, 1u);
}

}  // namespace
}  // namespace multilane::sim
