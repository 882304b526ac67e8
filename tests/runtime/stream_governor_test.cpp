#include "runtime/tcp/stream_governor.hpp"

#include <gtest/gtest.h>

namespace multilane::runtime {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;

constexpr auto kHold = milliseconds(60);

// A short path that needs one stream: 100 MB/s over 0.2 ms with 256 KiB windows.
PathSample short_path() {
  return {100e6, microseconds(200), 256 * 1024};
}

// A long path: 120 MB/s over 21 ms is 2.52 MB in flight, 9.6 windows of 256 KiB, 20 kept.
PathSample long_path() {
  return {120e6, microseconds(21'000), 256 * 1024};
}

TEST(StreamGovernor, StartsWithAtMostTheCrowdLimitAndHalvesOnAStallOncePerHold) {
  StreamGovernor governor({.streams = 64, .adapts = true});
  EXPECT_EQ(governor.in_use(), 16);
  const auto t = Clock::now();
  governor.stalled(t, kHold, short_path());
  EXPECT_EQ(governor.in_use(), 8);
  governor.stalled(t + milliseconds(59), kHold, short_path());  // the same episode
  EXPECT_EQ(governor.in_use(), 8);
  governor.stalled(t + milliseconds(60), kHold, short_path());
  EXPECT_EQ(governor.in_use(), 4);
  for (int i = 2; i < 10; ++i) governor.stalled(t + i * kHold, kHold, short_path());
  EXPECT_EQ(governor.in_use(), 1);
  EXPECT_EQ(StreamGovernor({.streams = 12, .adapts = true}).in_use(), 12);
}

TEST(StreamGovernor, NeverGoesBelowTwiceTheStreamsTheRateNeeds) {
  EXPECT_EQ(StreamGovernor::streams_needed(long_path()), 20);
  StreamGovernor governor({.streams = 64, .adapts = true});
  governor.message_done(false, long_path());  // 16 in use are too few: at once 20
  EXPECT_EQ(governor.in_use(), 20);
  const auto t = Clock::now();
  governor.stalled(t, kHold, long_path());
  EXPECT_EQ(governor.in_use(), 20);
  // A set of fewer streams than the path needs keeps them all.
  StreamGovernor few({.streams = 16, .adapts = true});
  few.stalled(t, kHold, long_path());
  EXPECT_EQ(few.in_use(), 16);
  // Halving stops at the floor.
  StreamGovernor many({.streams = 64, .adapts = true});
  const PathSample fat_path{600e6, microseconds(21'000), 256 * 1024};  // 97 needed
  many.message_done(false, fat_path);
  EXPECT_EQ(many.in_use(), 64);
  many.stalled(t, kHold, long_path());
  EXPECT_EQ(many.in_use(), 32);
  many.stalled(t + kHold, kHold, long_path());
  EXPECT_EQ(many.in_use(), 20);
}

TEST(StreamGovernor, StaysAtTheCrowdLimitUnlessThePathNeedsMore) {
  StreamGovernor governor({.streams = 64, .adapts = true});
  for (int i = 0; i < 5; ++i) governor.message_done(false, short_path());
  EXPECT_EQ(governor.in_use(), 16);
  governor.message_done(false, long_path());
  EXPECT_EQ(governor.in_use(), 20);
  governor.message_done(false, long_path());
  EXPECT_EQ(governor.in_use(), 20);
  governor.message_done(false, short_path());  // the path needs fewer again
  EXPECT_EQ(governor.in_use(), 16);
  governor.message_done(true, long_path());  // a message that stalled does not grow
  EXPECT_EQ(governor.in_use(), 16);
}

TEST(StreamGovernor, AnUnknownWindowNeedsOneStream) {
  EXPECT_EQ(StreamGovernor::streams_needed({100e6, microseconds(20'000), 0}), 1);
  EXPECT_EQ(StreamGovernor::streams_needed({0, microseconds(20'000), 65536}), 1);
}

TEST(StreamGovernor, GrowsByOneAfterEveryMessageWithoutAStallUpToK) {
  StreamGovernor governor({.streams = 8, .adapts = true});
  const auto t = Clock::now();
  governor.stalled(t, kHold, short_path());
  EXPECT_EQ(governor.in_use(), 4);
  governor.message_done(true, short_path());  // the message that stalled
  EXPECT_EQ(governor.in_use(), 4);
  for (int expected = 5; expected <= 8; ++expected) {
    governor.message_done(false, short_path());
    EXPECT_EQ(governor.in_use(), expected);
  }
  governor.message_done(false, short_path());
  EXPECT_EQ(governor.in_use(), 8);
}

TEST(StreamGovernor, DisabledOrSingleStreamKeepsEveryStream) {
  StreamGovernor off({.streams = 16, .adapts = false});
  off.stalled(Clock::now(), kHold, short_path());
  off.message_done(false, short_path());
  EXPECT_EQ(off.in_use(), 16);
  StreamGovernor off_many({.streams = 64, .adapts = false});
  EXPECT_EQ(off_many.in_use(), 64);
  StreamGovernor one({.streams = 1, .adapts = true});
  one.stalled(Clock::now(), kHold, short_path());
  EXPECT_EQ(one.in_use(), 1);
  StreamGovernor none({.streams = 0, .adapts = true});  // treated as one stream
  EXPECT_EQ(none.in_use(), 1);
}

}  // namespace
}  // namespace multilane::runtime
