// tests/runtime/byte_ranges_test.cpp — merged byte ranges.
#include "runtime/tcp/byte_ranges.hpp"

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

TEST(ByteRanges, MissingListsTheUncoveredPartsOfARange) {
  ByteRanges r;
  EXPECT_EQ(r.missing(5, 10), (Ranges{{5, 10}}));
  r.add(10, 10);  // [10, 20)
  r.add(30, 5);   // [30, 35)
  EXPECT_EQ(r.missing(0, 40), (Ranges{{0, 10}, {20, 10}, {35, 5}}));
  EXPECT_EQ(r.missing(12, 5), Ranges{});             // inside a range
  EXPECT_EQ(r.missing(15, 20), (Ranges{{20, 10}}));  // ends inside the next
  EXPECT_EQ(r.missing(20, 10), (Ranges{{20, 10}}));  // between, touching both
  EXPECT_EQ(r.missing(33, 0), Ranges{});
  // Every byte of a range is either covered or missing, once.
  std::uint64_t covered_and_missing = 0;
  for (const ByteRange& gap : r.missing(0, 40)) covered_and_missing += gap.length;
  EXPECT_EQ(covered_and_missing + r.bytes(), 40u);
}

}  // namespace
}  // namespace multilane::runtime
