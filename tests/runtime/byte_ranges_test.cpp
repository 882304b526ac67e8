// tests/runtime/byte_ranges_test.cpp — merged byte ranges and sharing them out over streams.
#include "runtime/byte_ranges.hpp"

#include <gtest/gtest.h>

namespace multilane::runtime {
namespace {

using Ranges = std::vector<ByteRange>;

TEST(ByteRanges, OverlappingAndTouchingRangesMerge) {
  ByteRanges r;
  r.add(100, 50);  // [100, 150)
  r.add(200, 10);  // [200, 210)
  r.add(0, 0);     // nothing
  EXPECT_EQ(r.ranges(), (Ranges{{100, 50}, {200, 10}}));
  EXPECT_EQ(r.bytes(), 60u);
  r.add(140, 20);  // overlaps the first: [100, 160)
  EXPECT_EQ(r.ranges(), (Ranges{{100, 60}, {200, 10}}));
  r.add(160, 40);  // touches both: one range [100, 210)
  EXPECT_EQ(r.ranges(), (Ranges{{100, 110}}));
  EXPECT_EQ(r.bytes(), 110u);
  r.add(50, 500);  // swallows everything
  EXPECT_EQ(r.ranges(), (Ranges{{50, 500}}));
  EXPECT_EQ(r.bytes(), 500u);
  r.add(120, 10);  // inside: no change
  EXPECT_EQ(r.bytes(), 500u);
  r.clear();
  EXPECT_TRUE(r.empty());
  EXPECT_EQ(r.bytes(), 0u);
}

TEST(ByteRanges, CountsEveryByteOnceInAnyOrder) {
  ByteRanges r;
  for (std::uint64_t i = 0; i < 1000; ++i) r.add((i * 389) % 1000 * 7, 9);  // overlapping
  EXPECT_EQ(r.ranges(), (Ranges{{0, 6993 + 9}}));
  EXPECT_EQ(r.bytes(), 7002u);
}

TEST(ShareOut, SplitsBytesEvenlyInPiecesOfLimitedSize) {
  const auto parts = share_out({{0, 100}, {1000, 50}}, 3, 30);
  // 150 bytes over 3 parts: 50 each, in pieces of at most 30.
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[0], (Ranges{{0, 30}, {30, 20}}));
  EXPECT_EQ(parts[1], (Ranges{{50, 30}, {80, 20}}));
  EXPECT_EQ(parts[2], (Ranges{{1000, 30}, {1030, 20}}));
}

TEST(ShareOut, FewBytesUseFewParts) {
  EXPECT_EQ(share_out({{7, 2}}, 4, 100), (std::vector<Ranges>{{{7, 1}}, {{8, 1}}}));
  EXPECT_TRUE(share_out({}, 4, 100).empty());
  EXPECT_TRUE(share_out({{0, 10}}, 0, 100).empty());
}

}  // namespace
}  // namespace multilane::runtime
