// Reading platform TOML: inheritance of node figures, explicit nodes and lanes, WAN tables,
// placement, and the exact `FILE:LINE: key: reason` of each kind of mistake.
#include <gtest/gtest.h>

#include <string>

#include "multilane/platform_file.hpp"
#include "platform_test_support.hpp"

namespace multilane {
namespace {

using testing::platform_error;

// Two one-node sites; tests append what they exercise.
const std::string kTwoSites = R"(name = "t"
[defaults]
lane_bandwidth = "1Gbit/s"
lan_latency = "50us"
[[site]]
name = "a"
nodes = 2
[[site]]
name = "b"
nodes = 2
)";

std::string error_of(const std::string& text) {
  return platform_error([&] { parse_platform(text, "t.toml"); });
}

// The single-copy figures come from [defaults] or the site, and "never" turns it off; they
// are written out and read back the same.
TEST(PlatformFile, SingleCopyFigures) {
  const Platform p = parse_platform(R"(name = "once"
[defaults]
lane_bandwidth = "1Gbit/s"
cores = 4
lan_latency = "50us"
shm_single_copy_from = "64KiB"
shm_single_copy_bandwidth = "10GB/s"
[[site]]
name = "a"
nodes = 1
shm_single_copy_latency = "2us"
[[site]]
name = "b"
nodes = 1
shm_single_copy_from = "never"
)",
                                    "once.toml");
  EXPECT_EQ(p.sites[0].shm.single_copy_from, 64u << 10);
  EXPECT_EQ(p.sites[0].shm.single_copy_bps, 10e9);
  EXPECT_EQ(p.sites[0].shm.single_copy_latency_s, 2e-6);
  EXPECT_EQ(p.sites[1].shm.single_copy_from, 0u);
  EXPECT_EQ(p.sites[1].shm.single_copy_latency_s, SharedMemory{}.single_copy_latency_s);
  testing::expect_same_platform(parse_platform(platform_to_toml(p), "written"), p);
  EXPECT_NE(describe_platform(p).find("never one copy"), std::string::npos);
}

TEST(PlatformFile, FiguresInheritFromDefaultsToSiteToNode) {
  const Platform p = parse_platform(R"(name = "inherit"
[defaults]
lanes = 2
lane_bandwidth = "1Gbit/s"
cores = 2
lan_latency = "50us"
[[site]]
name = "a"
lane_up = "2Gbit/s"
shm_copy_bandwidth = "8GB/s"
[[site.node]]
name = "fat"
cores = 8
[[site.node]]
lanes = [{up = "10Gbit/s", down = "5Gbit/s", address = "10.0.0.1"}, {bandwidth = "1Mbit/s"}, {}]
)",
                                    "inherit.toml");
  ASSERT_EQ(p.nodes.size(), 2u);
  EXPECT_EQ(p.source, "inherit.toml");
  const Node& fat = p.nodes[0];
  EXPECT_EQ(fat.name, "fat");
  EXPECT_EQ(fat.cores, 8);
  ASSERT_EQ(fat.lanes.size(), 2u);
  EXPECT_EQ(fat.lanes[1].up_bps, 250e6);
  EXPECT_EQ(fat.lanes[1].down_bps, 125e6);
  const Node& second = p.nodes[1];
  EXPECT_EQ(second.name, "a-1");  // unnamed nodes get SITE-INDEX
  EXPECT_EQ(second.cores, 2);
  ASSERT_EQ(second.lanes.size(), 3u);
  EXPECT_EQ(second.lanes[0].up_bps, 1.25e9);
  EXPECT_EQ(second.lanes[0].down_bps, 625e6);
  EXPECT_EQ(second.lanes[0].address, "10.0.0.1");
  EXPECT_EQ(second.lanes[1].up_bps, 125e3);
  EXPECT_EQ(second.lanes[2].up_bps, 250e6);  // empty entry: the site's lane_up
  EXPECT_EQ(second.lanes[2].down_bps, 125e6);
  EXPECT_EQ(p.sites[0].shm.copy_bps, 8e9);
  EXPECT_EQ(p.sites[0].shm.sync_latency_s, SharedMemory{}.sync_latency_s);
  // Not given: one copy from the runtime's default size, as fast as the site's own copies.
  EXPECT_EQ(p.sites[0].shm.single_copy_from, 8u << 10);
  EXPECT_EQ(p.sites[0].shm.single_copy_bps, 8e9);
  EXPECT_EQ(p.sites[0].shm.single_copy_latency_s, SharedMemory{}.single_copy_latency_s);
  EXPECT_EQ(p.num_ranks(), 10);  // every core, block
  EXPECT_EQ(p.ranks[8].node, 1);
  EXPECT_EQ(p.ranks[8].core, 0);
  // Unlike nodes and lane addresses are written out node by node and read back the same.
  testing::expect_same_platform(parse_platform(platform_to_toml(p), "written"), p);
}

TEST(PlatformFile, WanConnectionTableIsSortedAndInterpolated) {
  const Platform p = parse_platform(kTwoSites + R"(
[[wan]]
between = ["b", "a"]
latency = "10ms"
bandwidth = "10Gbit/s"
[[wan.connection]]
connections = 8
bandwidth = "100Mbit/s"
[[wan.connection]]
connections = 2
bandwidth = "400Mbit/s"
)",
                                    "t.toml");
  const WanLink& wan = p.wan_links.at(0);
  EXPECT_EQ(wan.site_a, 1);
  EXPECT_EQ(wan.site_b, 0);
  ASSERT_EQ(wan.per_connection_table.size(), 2u);
  EXPECT_EQ(wan.per_connection_table[0].connections, 2);
  EXPECT_EQ(wan.per_connection_table[1].connections, 8);
  EXPECT_EQ(wan.connection_cap_bps(1), 50e6);  // clamped to the first point
  EXPECT_EQ(wan.connection_cap_bps(2), 50e6);
  EXPECT_EQ(wan.connection_cap_bps(5), 31.25e6);  // halfway between 400 and 100 Mbit/s
  EXPECT_EQ(wan.connection_cap_bps(100), 12.5e6);
  EXPECT_EQ(wan.per_connection_bps(5), 31.25e6);
  EXPECT_EQ(wan.per_connection_bps(200), 1.25e9 / 200);  // the aggregate's share is smaller
  EXPECT_EQ(p.wan_between(0, 1), &wan);
}

TEST(PlatformFile, TcpWindowCapsAConnection) {
  const Platform p = parse_platform(kTwoSites + R"(
[[wan]]
between = ["a", "b"]
latency = "10ms"
tcp_window = "64KiB"
)",
                                    "t.toml");
  const WanLink& wan = p.wan_links.at(0);
  EXPECT_EQ(wan.tcp_window_bytes, 65536);
  EXPECT_EQ(wan.aggregate_bps, 0);  // omitted: unlimited
  EXPECT_DOUBLE_EQ(wan.per_connection_bps(1), 65536 / 0.02);
  EXPECT_DOUBLE_EQ(wan.per_connection_bps(64), 65536 / 0.02);
}

TEST(PlatformFile, ExplicitPlacementTakesTheNextFreeCore) {
  const Platform p = parse_platform(R"(name = "t"
[[site]]
name = "a"
nodes = 2
cores = 2
lane_bandwidth = "1Gbit/s"
lan_latency = "50us"
[placement]
ranks = 3
nodes = ["a-1", "a-0", "a-1"]
)",
                                    "t.toml");
  ASSERT_EQ(p.num_ranks(), 3);
  EXPECT_EQ(p.ranks[0].node, 1);
  EXPECT_EQ(p.ranks[0].core, 0);
  EXPECT_EQ(p.ranks[1].node, 0);
  EXPECT_EQ(p.ranks[2].node, 1);
  EXPECT_EQ(p.ranks[2].core, 1);
  testing::expect_same_platform(parse_platform(platform_to_toml(p), "again"), p);
}

TEST(PlatformFile, BlockPlacementOfFewerRanks) {
  const Platform p =
      parse_platform(kTwoSites + "[placement]\nranks = 3\nmode = \"block\"\n", "t.toml");
  ASSERT_EQ(p.num_ranks(), 3);
  EXPECT_EQ(p.site_of(2), 1);
}

struct BadCase {
  std::string name;
  std::string text;
  std::string error;
};

class BadPlatform : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadPlatform, GivesExactError) {
  EXPECT_EQ(error_of(GetParam().text), GetParam().error);
}

INSTANTIATE_TEST_SUITE_P(
    Errors, BadPlatform,
    ::testing::Values(
        BadCase{"MissingName", "[[site]]\nname = \"a\"\n", "t.toml:1: name: missing"},
        BadCase{"NoSite", "name = \"x\"\n",
                "t.toml:1: site: missing; a platform needs at least one [[site]] table"},
        BadCase{"SiteNotArray", "name = \"x\"\n[site]\nname = \"a\"\n",
                "t.toml:2: site: expected [[site]] tables (an array of tables)"},
        BadCase{"UnknownRootKey", "name = \"x\"\nsites = 3\n",
                "t.toml:2: sites: unknown key; allowed here: name, defaults, site, wan, placement"},
        BadCase{"UnknownDefaultsKey", "name = \"x\"\n[defaults]\nlane = 2\n",
                "t.toml:3: defaults.lane: unknown key; allowed here: lanes, lane_bandwidth, "
                "lane_up, lane_down, cores, lan_latency, shm_copy_bandwidth, shm_sync_latency, "
                "shm_single_copy_from, shm_single_copy_bandwidth, shm_single_copy_latency, "
                "reduce_bandwidth"},
        BadCase{"UnknownLaneKey",
                kTwoSites + "[[site]]\nname = \"c\"\n[[site.node]]\nlanes = [{speed = 1}]\n",
                "t.toml:14: site[2].node[0].lanes[0].speed: unknown key; allowed here: up, "
                "down, bandwidth, address"},
        BadCase{"SiteWithoutName", "name = \"x\"\n[[site]]\nnodes = 1\n",
                "t.toml:2: site[0].name: missing"},
        BadCase{"NodesAndNodeTables",
                kTwoSites + "[[site]]\nname = \"c\"\nnodes = 1\n[[site.node]]\n",
                "t.toml:13: site[2].nodes: give nodes = COUNT or [[site.node]] tables, not both"},
        BadCase{"NoNodes", kTwoSites + "[[site]]\nname = \"c\"\n",
                "t.toml:11: site[2].nodes: missing; give nodes = COUNT or [[site.node]] tables"},
        BadCase{"LanesNotAnInteger",
                kTwoSites + "[[site]]\nname = \"c\"\nnodes = 1\nlanes = \"2\"\n",
                "t.toml:14: site[2].lanes: expected an integer, got \"2\""},
        BadCase{"ZeroCores", kTwoSites + "[[site]]\nname = \"c\"\nnodes = 1\ncores = 0\n",
                "t.toml:14: site[2].cores: must be between 1 and 65536, got 0"},
        BadCase{
            "SingleCopyFromZero",
            kTwoSites + "[[site]]\nname = \"c\"\nnodes = 1\nshm_single_copy_from = \"0\"\n",
            "t.toml:14: site[2].shm_single_copy_from: must be a positive size, or \"never\"; got "
            "\"0\""},
        BadCase{"EmptyLaneList", kTwoSites + "[[site]]\nname = \"c\"\n[[site.node]]\nlanes = []\n",
                "t.toml:14: site[2].node[0].lanes: must list at least 1 lane"},
        BadCase{"BandwidthAndUp",
                kTwoSites + "[[site]]\nname = \"c\"\nnodes = 1\nlane_up = \"1Gbit/s\"\n"
                            "lane_bandwidth = \"1Gbit/s\"\n",
                "t.toml:15: site[2].lane_bandwidth: give lane_bandwidth or lane_up/lane_down, "
                "not both"},
        BadCase{"OnlyLaneUp",
                "name = \"x\"\n[[site]]\nname = \"a\"\nnodes = 1\nlan_latency = \"1us\"\n"
                "lane_up = \"1Gbit/s\"\n",
                "t.toml:2: site[0].lane_down: missing; give lane_bandwidth (or lane_up and "
                "lane_down) on the node, its site or in [defaults]"},
        BadCase{"BandwidthWithoutUnit",
                kTwoSites + "[[site]]\nname = \"c\"\nnodes = 1\nlane_bandwidth = 1000\n",
                "t.toml:14: site[2].lane_bandwidth: expected a quoted quantity with a unit, like "
                "\"1Gbit/s\"; got 1000"},
        BadCase{"WanBetweenOneSite", kTwoSites + "[[wan]]\nbetween = [\"a\"]\nlatency = \"1ms\"\n",
                "t.toml:12: wan[0].between: expected two site names, like [\"tokyo\", \"osaka\"]"},
        BadCase{"WanWithoutLatency", kTwoSites + "[[wan]]\nbetween = [\"a\", \"b\"]\n",
                "t.toml:11: wan[0].latency: missing; give the one-way latency, like \"10ms\""},
        BadCase{"WanTwice",
                kTwoSites + "[[wan]]\nbetween = [\"a\", \"b\"]\nlatency = \"1ms\"\n"
                            "[[wan]]\nbetween = [\"b\", \"a\"]\nlatency = \"1ms\"\n",
                "t.toml:15: wan[1].between: a second link between \"b\" and \"a\""},
        BadCase{"WanZeroBandwidth",
                kTwoSites + "[[wan]]\nbetween = [\"a\", \"b\"]\nlatency = \"1ms\"\n"
                            "bandwidth = \"0MB/s\"\n",
                "t.toml:14: wan[0].bandwidth: must be positive, got \"0MB/s\""},
        BadCase{"WanZeroWindow",
                kTwoSites + "[[wan]]\nbetween = [\"a\", \"b\"]\nlatency = \"1ms\"\n"
                            "tcp_window = \"0\"\n",
                "t.toml:14: wan[0].tcp_window: must be positive, got \"0\""},
        BadCase{"ConnectionPointTwice",
                kTwoSites + "[[wan]]\nbetween = [\"a\", \"b\"]\nlatency = \"1ms\"\n"
                            "[[wan.connection]]\nconnections = 2\nbandwidth = \"1MB/s\"\n"
                            "[[wan.connection]]\nconnections = 2\nbandwidth = \"2MB/s\"\n",
                "t.toml:18: wan[0].connection[1].connections: connections = 2 given twice "
                "(first at line 14)"},
        BadCase{"ConnectionPointWithoutBandwidth",
                kTwoSites + "[[wan]]\nbetween = [\"a\", \"b\"]\nlatency = \"1ms\"\n"
                            "[[wan.connection]]\nconnections = 2\n",
                "t.toml:14: wan[0].connection[0].bandwidth: missing"},
        BadCase{"ConnectionBandwidthAndTable",
                kTwoSites + "[[wan]]\nbetween = [\"a\", \"b\"]\nlatency = \"1ms\"\n"
                            "connection_bandwidth = \"1MB/s\"\n"
                            "[[wan.connection]]\nconnections = 2\nbandwidth = \"1MB/s\"\n",
                "t.toml:14: wan[0].connection_bandwidth: give connection_bandwidth or "
                "[[wan.connection]] tables, not both"},
        BadCase{"PlacementMode", kTwoSites + "[placement]\nmode = \"cyclic\"\n",
                "t.toml:12: placement.mode: unknown placement mode \"cyclic\"; allowed: block"},
        BadCase{"PlacementModeAndNodes",
                kTwoSites + "[placement]\nmode = \"block\"\nnodes = [\"a-0\"]\n",
                "t.toml:12: placement.mode: give mode or an explicit nodes list, not both"},
        BadCase{"PlacementCountMismatch", kTwoSites + "[placement]\nranks = 2\nnodes = [\"a-0\"]\n",
                "t.toml:12: placement.ranks: ranks = 2 but nodes lists 1 ranks"},
        BadCase{"PlacementZeroRanks", kTwoSites + "[placement]\nranks = 0\n",
                "t.toml:12: placement.ranks: must be at least 1, got 0"},
        BadCase{"DuplicateGeneratedNode",
                kTwoSites + "[[site]]\nname = \"c\"\n[[site.node]]\nname = \"a-1\"\n",
                "t.toml:14: site[2].node[0].name: duplicate node name \"a-1\" (first at line 7)"}),
    [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace multilane
