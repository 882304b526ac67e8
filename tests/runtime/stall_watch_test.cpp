// tests/runtime/stall_watch_test.cpp — a stream is stalled when its acknowledgements stop for
// longer than the patience's floor and round trips, and only while it has bytes in flight.
#include "runtime/tcp/stall_watch.hpp"

#include <gtest/gtest.h>

namespace multilane::runtime {
namespace {

using namespace std::chrono_literals;

constexpr StallPatience kPatience{20ms, 4};

TEST(StallWatch, StalledOnlyAfterThePatienceWithoutAcknowledgements) {
  StallWatch watch(2);
  const Clock::time_point t0 = Clock::now();
  const StreamProgress waiting{1000, 500, 1ms};  // 500 bytes unacknowledged
  EXPECT_FALSE(watch.stalled(0, waiting, t0, kPatience));
  EXPECT_FALSE(watch.stalled(0, waiting, t0 + 19ms, kPatience));
  EXPECT_TRUE(watch.stalled(0, waiting, t0 + 20ms, kPatience));
  // An acknowledgement restarts the clock.
  const StreamProgress moved{1200, 300, 1ms};
  EXPECT_FALSE(watch.stalled(0, moved, t0 + 25ms, kPatience));
  EXPECT_FALSE(watch.stalled(0, moved, t0 + 44ms, kPatience));
  EXPECT_TRUE(watch.stalled(0, moved, t0 + 45ms, kPatience));
  // The other stream has its own clock.
  EXPECT_FALSE(watch.stalled(1, waiting, t0 + 45ms, kPatience));
}

// A stream that keeps showing `progress` counts as stalled exactly `after` its first sample.
void expect_stalled_after(const StreamProgress& progress, std::chrono::milliseconds after) {
  StallWatch watch(1);
  const Clock::time_point t0 = Clock::now();
  EXPECT_FALSE(watch.stalled(0, progress, t0, kPatience));
  EXPECT_FALSE(watch.stalled(0, progress, t0 + after - 1ms, kPatience));
  EXPECT_TRUE(watch.stalled(0, progress, t0 + after, kPatience));
}

TEST(StallWatch, LongRoundTripsGetMorePatience) {
  expect_stalled_after({0, 500, 30ms}, 120ms);  // 4 round trips
}

TEST(StallWatch, SlowStreamsGetMorePatience) {
  // Paced to two segments per 15 ms, a stream is acknowledged about every 15 ms even at a
  // short round trip.
  StreamProgress paced{0, 500, 1ms};
  paced.segment_pair_time = 15ms;
  expect_stalled_after(paced, 60ms);
}

TEST(StallWatch, NothingInFlightIsNeverStalled) {
  StallWatch watch(1);
  const Clock::time_point t0 = Clock::now();
  const StreamProgress done{1000, 0, 1ms};
  EXPECT_FALSE(watch.stalled(0, done, t0, kPatience));
  EXPECT_FALSE(watch.stalled(0, done, t0 + 10s, kPatience));
  // Bytes written after a quiet spell: the clock starts when they are seen.
  EXPECT_FALSE(watch.stalled(0, {1000, 10, 1ms}, t0 + 11s, kPatience));
  EXPECT_FALSE(watch.stalled(0, {1000, 10, 1ms}, t0 + 11s + 19ms, kPatience));
  EXPECT_TRUE(watch.stalled(0, {1000, 10, 1ms}, t0 + 11s + 20ms, kPatience));
}

TEST(StallWatch, ThePatienceOfEachSampleDecides) {
  StallWatch watch(1);
  const Clock::time_point t0 = Clock::now();
  const StreamProgress waiting{0, 500, 2ms};
  EXPECT_FALSE(watch.stalled(0, waiting, t0, kPatience));
  EXPECT_FALSE(watch.stalled(0, waiting, t0 + 10ms, kPatience));
  // The same silence is a stall for a caller with less patience (10 ms and 2 round trips).
  EXPECT_TRUE(watch.stalled(0, waiting, t0 + 10ms, StallPatience{10ms, 2}));
  EXPECT_FALSE(watch.stalled(0, waiting, t0 + 10ms, StallPatience{10ms, 6}));
}

}  // namespace
}  // namespace multilane::runtime
