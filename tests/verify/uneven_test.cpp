// The v-forms (gatherv, scatterv, allgatherv, alltoallv): their buffers and results follow the
// counts, a schedule verified against other counts fails, equal counts give the even
// collective's schedule, and counts of the wrong number are refused with their numbers.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "multilane/algorithms.hpp"
#include "multilane/collective.hpp"
#include "multilane/count_patterns.hpp"
#include "multilane/errors.hpp"
#include "multilane/platform.hpp"
#include "multilane/verify.hpp"

namespace multilane {
namespace {

Platform two_sites(int ranks) {
  Platform p = make_uniform_platform(2, 3, 2, 2, 125e6, 50e-6, 10e-3, 1.25e9, 0);
  p.place_block(ranks);
  return p;
}

TEST(UnevenCollectives, BuffersAndResultsFollowTheCounts) {
  const std::vector<std::uint64_t> counts = {3, 0, 5};
  EXPECT_EQ(buffer_size(Collective::Gatherv, Buffer::Recv, 1, 3, 1, 5, counts), 8u);
  EXPECT_EQ(buffer_size(Collective::Gatherv, Buffer::Recv, 0, 3, 1, 5, counts), 0u);
  EXPECT_EQ(buffer_size(Collective::Gatherv, Buffer::Send, 2, 3, 1, 5, counts), 5u);
  EXPECT_EQ(buffer_size(Collective::Scatterv, Buffer::Send, 1, 3, 1, 5, counts), 8u);
  EXPECT_EQ(buffer_size(Collective::Allgatherv, Buffer::Recv, 0, 3, 0, 5, counts), 8u);
  const auto pieces = expected_result(Collective::Allgatherv, 0, 3, 0, 5, counts);
  ASSERT_EQ(pieces.size(), 2u);  // rank 1's empty block is no piece
  EXPECT_EQ(pieces[1].offset, 3u);
  EXPECT_EQ(pieces[1].length, 5u);
  EXPECT_EQ(pieces[1].origin_rank, 2);
  // Alltoallv, 2 ranks: row = sender. Rank 1 gets 2 bytes from rank 0 (at 0), then its own 4.
  const std::vector<std::uint64_t> pairs = {1, 2, 3, 4};
  EXPECT_EQ(buffer_size(Collective::Alltoallv, Buffer::Send, 1, 2, 0, 4, pairs), 7u);
  EXPECT_EQ(buffer_size(Collective::Alltoallv, Buffer::Recv, 1, 2, 0, 4, pairs), 6u);
  const auto to_one = expected_result(Collective::Alltoallv, 1, 2, 0, 4, pairs);
  ASSERT_EQ(to_one.size(), 2u);
  EXPECT_EQ(to_one[0].origin_offset, 1u);  // after rank 0's 1 byte for rank 0
  EXPECT_EQ(to_one[1].offset, 2u);
  EXPECT_EQ(to_one[1].origin_offset, 3u);  // after its own 3 bytes for rank 0
}

TEST(UnevenCollectives, ASchedulePassesOnlyWithItsOwnCounts) {
  const Platform platform = two_sites(7);
  for (const Collective c :
       {Collective::Gatherv, Collective::Scatterv, Collective::Allgatherv, Collective::Alltoallv}) {
    for (const AlgorithmInfo& a : all_algorithms()) {
      if (a.collective != c) continue;
      const auto counts = pattern_counts(CountsPattern::Ramp, c, 7, 1000);
      Schedule s = build_schedule(platform, c, a.name, {.root = 2, .size = 1000, .counts = counts});
      EXPECT_TRUE(verify_schedule(s, platform).ok()) << to_string(c) << "/" << a.name;
      std::rotate(s.counts.begin(), s.counts.begin() + 1, s.counts.end());
      EXPECT_FALSE(verify_schedule(s, platform).ok()) << to_string(c) << "/" << a.name;
    }
  }
}

TEST(UnevenCollectives, EqualCountsGiveTheEvenCollectivesSchedule) {
  const Platform platform = two_sites(9);
  for (const AlgorithmInfo& a : all_algorithms()) {
    if (!is_uneven(a.collective)) continue;
    const std::size_t n = a.collective == Collective::Alltoallv ? 81 : 9;
    const Schedule uneven = build_schedule(platform, a.collective, a.name,
                                           {.root = 4, .size = 77, .counts = std::vector(n, 77ul)});
    const Schedule even =
        build_schedule(platform, even_form(a.collective), a.name, {.root = 4, .size = 77});
    ASSERT_EQ(uneven.ops.size(), even.ops.size()) << a.name;
    for (std::size_t i = 0; i < even.ops.size(); ++i) {
      EXPECT_EQ(uneven.ops[i].range, even.ops[i].range) << to_string(a.collective) << a.name;
      EXPECT_EQ(uneven.ops[i].peer, even.ops[i].peer);
    }
  }
}

TEST(UnevenCollectives, CountsOfTheWrongNumberAreRefused) {
  const Platform platform = two_sites(4);
  const auto build = [&](Collective c, std::vector<std::uint64_t> counts) {
    try {
      build_schedule(platform, c, "linear", {.size = largest_count(counts), .counts = counts});
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(build(Collective::Gatherv, {1, 2, 3}), "gatherv on 4 ranks needs 4 counts, not 3");
  EXPECT_EQ(build(Collective::Alltoallv, {1, 2, 3, 4}),
            "alltoallv on 4 ranks needs 16 counts (one per pair of ranks), not 4");
  EXPECT_EQ(build(Collective::Gather, {1, 2, 3, 4}),
            "gather has one block size: per-rank counts are for its v-form");
}

TEST(UnevenCollectives, PatternsHaveTheirLargestBlockAtTheSize) {
  for (const CountsPattern pattern : kAllCountsPatterns) {
    for (int p : {1, 2, 7, 130}) {
      for (const Collective c : {Collective::Gatherv, Collective::Alltoallv}) {
        const auto counts = pattern_counts(pattern, c, p, 1000);
        EXPECT_EQ(counts.size(), c == Collective::Alltoallv ? std::size_t(p * p) : std::size_t(p));
        EXPECT_EQ(largest_count(counts), 1000u) << to_string(pattern) << " p=" << p;
      }
    }
  }
  EXPECT_TRUE(pattern_counts(CountsPattern::Ramp, Collective::Gather, 4, 10).empty());
}

}  // namespace
}  // namespace multilane
