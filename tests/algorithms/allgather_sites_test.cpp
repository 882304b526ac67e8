// The site-aware allgather (`multilane-sites`): every site's bytes cross to every other site
// exactly once, on k node pairs at once, each pair carrying about 1/k of them; with uneven
// blocks (allgatherv) the lanes are balanced by bytes, not by blocks.
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "multilane/algorithms.hpp"
#include "multilane/platform.hpp"
#include "multilane/verify.hpp"
#include "schedule_queries.hpp"

namespace multilane {
namespace {

using testing::sends_of;
using testing::wan_traffic;

// Three sites of 5 nodes, 13 ranks placed: 5, 5 and 3 per site.
Platform three_sites() {
  Platform p = make_uniform_platform(3, 5, 2, 1, 125e6, 50e-6, 10e-3, 1.25e9, 0);
  p.place_block(13);
  return p;
}

TEST(AllgatherSites, EverySitesBytesCrossToEveryOtherSiteOnceOnKLanes) {
  const Platform platform = make_uniform_platform(2, 4, 2, 1, 125e6, 50e-6, 10e-3, 1.25e9, 0);
  const Schedule s =
      build_schedule(platform, Collective::Allgather, "multilane-sites", {.size = 1000});
  ASSERT_TRUE(verify_schedule(s, platform).ok());
  const auto [bytes, pairs] = wan_traffic(s, platform);
  EXPECT_EQ(bytes, 2u * 4 * 1000);  // each site's 4 blocks, once each way
  EXPECT_EQ(pairs.size(), 2u * 4);  // k = 4 pairs, both directions
  for (const auto& [from, to] : pairs) EXPECT_EQ(to, (from + 4) % 8);  // lane i to lane i
  const Schedule two_lanes = build_schedule(platform, Collective::Allgather, "multilane-sites",
                                            {.size = 1000, .wan_pairs = 2});
  EXPECT_EQ(wan_traffic(two_lanes, platform).second.size(), 2u * 2);
  EXPECT_EQ(wan_traffic(two_lanes, platform).first, 2u * 4 * 1000);
}

TEST(AllgatherSites, UnevenBlocksAreSplitOverTheLanesByBytes) {
  const Platform platform = make_uniform_platform(2, 4, 2, 1, 125e6, 50e-6, 10e-3, 1.25e9, 0);
  // Site 0's blocks: 4000, 0, 0, 4000 bytes: two lanes carry 4000 bytes each, not 8000 and 0.
  const std::vector<std::uint64_t> counts = {4000, 0, 0, 4000, 10, 10, 10, 10};
  const Schedule s = build_schedule(platform, Collective::Allgatherv, "multilane-sites",
                                    {.size = 4000, .wan_pairs = 2, .counts = counts});
  ASSERT_TRUE(verify_schedule(s, platform).ok());
  std::vector<std::uint64_t> from_site0(8, 0);
  for (const auto& t : sends_of(s)) {
    if (platform.site_of(t.from) == 0 && platform.site_of(t.to) == 1) {
      from_site0[t.from] += t.range.length;
    }
  }
  EXPECT_EQ(from_site0[0], 4000u);
  EXPECT_EQ(from_site0[1], 4000u);
}

TEST(AllgatherSites, ThreeUnevenSitesVerifyForEveryCountsPattern) {
  const Platform platform = three_sites();
  const int p = platform.num_ranks();
  for (const std::uint64_t size : {0ul, 1ul, 7ul, 1000ul}) {
    std::vector<std::uint64_t> counts(static_cast<std::size_t>(p));
    std::iota(counts.begin(), counts.end(), 0);
    for (auto& c : counts) c = c * size / (p - 1);
    const Schedule s = build_schedule(platform, Collective::Allgatherv, "multilane-sites",
                                      {.size = size, .counts = counts});
    const VerifyReport report = verify_schedule(s, platform);
    EXPECT_TRUE(report.ok()) << size << ": " << (report.ok() ? "" : report.errors.front());
  }
}

}  // namespace
}  // namespace multilane
