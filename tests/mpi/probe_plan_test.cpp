// The platform probe's plan (tools/probe/link_tests.hpp): which leaders measure what, and how
// the figures fill in the platform.
#include <gtest/gtest.h>

#include "multilane/platform.hpp"
#include "probe/link_tests.hpp"

namespace multilane::probe {
namespace {

// Sites of 3 and 2 nodes, 2 lanes each, two ranks per node (placed block-wise: node n holds
// ranks 2n and 2n+1).
Platform two_sites() {
  Platform p = make_uniform_platform(1, 3, 2, 2, 1.25e9, 20e-6, 5e-3, 1.25e9, 0);
  const int west = p.add_site("west", 20e-6);
  p.add_node(west, "w0", 2, 2, 1.25e9);
  p.add_node(west, "w1", 2, 2, 1.25e9);
  WanLink link;
  link.latency_s = 5e-3;
  p.connect_all_sites(link);
  p.ranks.clear();
  p.place_block(10);
  return p;
}

TEST(ProbePlan, LeadersMeasureLanesInEachSiteThenTheWanOnceAndAllAtOnce) {
  const Platform p = two_sites();
  const std::vector<LinkTest> tests = plan_link_tests(p, 4);
  ASSERT_EQ(tests.size(), 4u);
  EXPECT_EQ(tests[0].kind, LinkTestKind::Lanes);
  ASSERT_EQ(tests[0].flows.size(), 1u);
  EXPECT_EQ(tests[0].flows[0].sender, 0);  // node 0's first rank
  EXPECT_EQ(tests[0].flows[0].receiver, 2);
  EXPECT_EQ(tests[0].flows[0].lanes, 2);
  EXPECT_EQ(tests[0].flows[0].streams, 1);
  EXPECT_EQ(tests[1].kind, LinkTestKind::Lanes);
  EXPECT_EQ(tests[1].flows[0].sender, 6);
  EXPECT_EQ(tests[2].kind, LinkTestKind::WanOneStream);
  EXPECT_EQ(tests[2].flows[0].receiver, 6);
  EXPECT_EQ(tests[2].flows[0].lanes, 1);
  EXPECT_EQ(tests[2].flows[0].streams, 1);
  EXPECT_EQ(tests[3].kind, LinkTestKind::WanAll);
  ASSERT_EQ(tests[3].flows.size(), 2u);  // as many pairs as the smaller site has nodes
  EXPECT_EQ(tests[3].flows[1].sender, 2);
  EXPECT_EQ(tests[3].flows[1].receiver, 8);
  EXPECT_EQ(tests[3].flows[1].streams, 4);
  EXPECT_EQ(tests[3].describe(p), "all of site0 -> west: 16 stream(s)");
}

TEST(ProbePlan, FiguresFillLanesAndTheWanTable) {
  Platform p = two_sites();
  const std::vector<LinkTest> tests = plan_link_tests(p, 4);
  apply_link_figures(p, tests, {200e6, 100e6, 30e6, 160e6});
  EXPECT_EQ(p.nodes[1].lanes[1].up_bps, 100e6);  // site0: 200 MB/s over two lanes
  EXPECT_EQ(p.nodes[4].lanes[0].down_bps, 50e6);
  const WanLink& link = p.wan_links[0];
  EXPECT_EQ(link.aggregate_bps, 160e6);
  ASSERT_EQ(link.per_connection_table.size(), 2u);
  EXPECT_EQ(link.per_connection_table[0].connections, 1);
  EXPECT_EQ(link.per_connection_table[0].bps, 30e6);
  EXPECT_EQ(link.per_connection_table[1].connections, 16);
  EXPECT_EQ(link.per_connection_table[1].bps, 10e6);
}

TEST(ProbePlan, OneNodeHasNothingToMeasure) {
  Platform p = make_uniform_platform(1, 1, 1, 4, 1.25e9, 20e-6, 5e-3, 1.25e9, 0);
  EXPECT_TRUE(plan_link_tests(p, 4).empty());
}

}  // namespace
}  // namespace multilane::probe
