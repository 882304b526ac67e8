// The site-aware alltoall (`multilane-sites`): every byte a site sends another crosses the WAN
// exactly once, in one message per lane and direction (where the linear alltoall sends one per
// pair of ranks), lane i to lane i; with uneven blocks (alltoallv) the lanes are balanced by
// bytes; the lane leaders, as the site-aware allgather's, are on nodes of their own.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <utility>
#include <vector>

#include "multilane/algorithms.hpp"
#include "multilane/platform.hpp"
#include "multilane/verify.hpp"
#include "schedule_queries.hpp"

namespace multilane {
namespace {

using testing::sends_of;
using testing::wan_traffic;

// Two sites of 4 nodes with 2 lanes each, one rank per node.
Platform two_sites() {
  return make_uniform_platform(2, 4, 2, 1, 125e6, 50e-6, 10e-3, 1.25e9, 0);
}

int wan_messages(const Schedule& s, const Platform& platform) {
  int messages = 0;
  for (const auto& t : sends_of(s)) messages += platform.site_of(t.from) != platform.site_of(t.to);
  return messages;
}

TEST(AlltoallSites, EachPairOfSitesCrossesOnceInOneMessagePerLane) {
  const Platform platform = two_sites();
  const Schedule s =
      build_schedule(platform, Collective::Alltoall, "multilane-sites", {.size = 1000});
  ASSERT_TRUE(verify_schedule(s, platform).ok());
  const auto [bytes, pairs] = wan_traffic(s, platform);
  EXPECT_EQ(bytes, 2u * 4 * 4 * 1000);  // each site's 16 blocks for the other, once
  EXPECT_EQ(wan_messages(s, platform), 2 * 4);
  for (const auto& [from, to] : pairs) EXPECT_EQ(to, (from + 4) % 8);  // lane i to lane i
  for (const auto& t : sends_of(s)) {
    if (platform.site_of(t.from) != platform.site_of(t.to)) {
      EXPECT_EQ(t.range.length, 4000u);
    }
  }
  const Schedule linear = build_schedule(platform, Collective::Alltoall, "linear", {.size = 1000});
  EXPECT_EQ(wan_traffic(linear, platform).first, bytes);
  EXPECT_EQ(wan_messages(linear, platform), 2 * 4 * 4);

  const Schedule two_lanes = build_schedule(platform, Collective::Alltoall, "multilane-sites",
                                            {.size = 1000, .wan_pairs = 2});
  ASSERT_TRUE(verify_schedule(two_lanes, platform).ok());
  EXPECT_EQ(wan_messages(two_lanes, platform), 2 * 2);
  EXPECT_EQ(wan_traffic(two_lanes, platform).first, bytes);
  EXPECT_EQ(wan_pairs_used(platform, Collective::Alltoall, "multilane-sites", {.size = 1000}), 4);
}

TEST(AlltoallSites, UnevenBlocksAreSplitOverTheLanesByBytes) {
  const Platform platform = two_sites();
  // Site 0 sends 3000 bytes to rank 4 and 1000 to each of ranks 5-7 (spread over its senders):
  // on two lanes, rank 4's blocks go on one and the other three's on the other.
  std::vector<std::uint64_t> counts(64, 10);
  for (int u = 0; u < 4; ++u) {
    counts[static_cast<std::size_t>(u) * 8 + 4] = 750;
    for (int v = 5; v < 8; ++v) counts[static_cast<std::size_t>(u) * 8 + v] = 250;
  }
  const Schedule s = build_schedule(platform, Collective::Alltoallv, "multilane-sites",
                                    {.size = 750, .wan_pairs = 2, .counts = counts});
  ASSERT_TRUE(verify_schedule(s, platform).ok());
  std::map<int, std::uint64_t> from_site0;
  for (const auto& t : sends_of(s)) {
    if (platform.site_of(t.from) == 0 && platform.site_of(t.to) == 1) {
      from_site0[t.from] += t.range.length;
    }
  }
  EXPECT_EQ(from_site0, (std::map<int, std::uint64_t>{{0, 3000}, {1, 3000}}));
}

TEST(AlltoallSites, LaneLeadersAreOnNodesOfTheirOwn) {
  // Two sites of 2 nodes with 2 ranks each (ranks 0 1 | 2 3 | 4 5 | 6 7), two lanes: the
  // leaders are each node's first rank, so both nodes' NICs cross the WAN.
  Platform platform = make_uniform_platform(2, 2, 2, 2, 125e6, 50e-6, 10e-3, 1.25e9, 0);
  platform.place_block(8);
  for (const Collective c : {Collective::Alltoall, Collective::Allgather}) {
    const Schedule s =
        build_schedule(platform, c, "multilane-sites", {.size = 1000, .wan_pairs = 2});
    ASSERT_TRUE(verify_schedule(s, platform).ok()) << to_string(c);
    EXPECT_EQ(wan_traffic(s, platform).second,
              (std::set<std::pair<int, int>>{{0, 4}, {2, 6}, {4, 0}, {6, 2}}))
        << to_string(c);
  }
}

TEST(AlltoallSites, ThreeUnevenSitesAndUnevenCountsVerify) {
  // Three sites of 5 nodes, 13 ranks placed: 5, 5 and 3 per site; then the same ranks
  // shuffled, so that no site's ranks are consecutive.
  for (const bool shuffled : {false, true}) {
    Platform platform = make_uniform_platform(3, 5, 2, 1, 125e6, 50e-6, 10e-3, 1.25e9, 0);
    platform.place_block(13);
    if (shuffled) {
      const auto placed = platform.ranks;
      for (std::size_t i = 0; i < placed.size(); ++i) platform.ranks[i] = placed[i * 5 % 13];
    }
    const int p = platform.num_ranks();
    for (const std::uint64_t size : {0ul, 1ul, 7ul, 1000ul}) {
      std::vector<std::uint64_t> counts(static_cast<std::size_t>(p * p));
      for (std::size_t i = 0; i < counts.size(); ++i) counts[i] = (i * 7919) % (size + 1);
      for (const int pairs : {0, 1, 2}) {
        const Schedule s = build_schedule(platform, Collective::Alltoallv, "multilane-sites",
                                          {.size = size, .wan_pairs = pairs, .counts = counts});
        const VerifyReport report = verify_schedule(s, platform);
        EXPECT_TRUE(report.ok()) << size << " " << pairs << " " << shuffled << ": "
                                 << (report.ok() ? "" : report.errors.front());
      }
    }
  }
}

}  // namespace
}  // namespace multilane
