// tests/emu/plan_test.cpp — the emulator's plan: names, addresses, MACs, shaping, TCP windows,
// limits and the JSON round trip (pure, no root needed).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "emu/addressing.hpp"
#include "emu/names.hpp"
#include "emu/plan.hpp"
#include "multilane/errors.hpp"
#include "multilane/platform_file.hpp"

namespace multilane::emu {
namespace {

using ::testing::HasSubstr;

Platform two_sites(int nodes, int lanes) {
  return make_uniform_platform(2, nodes, lanes, 1, 25e6, 100e-6, 10e-3, 125e6, 0);
}

EmuOptions options(std::string name = "t") {
  EmuOptions o;
  o.name = std::move(name);
  return o;
}

TEST(Addressing, LaneAddressesEncodeLaneSiteAndNode) {
  EXPECT_EQ(format_ipv4(lane_ipv4(0, 0, 0)), "198.18.0.1");
  EXPECT_EQ(format_ipv4(lane_ipv4(1, 3, 0)), "198.18.1.4");
  EXPECT_EQ(format_ipv4(lane_ipv4(0, 0, 1)), "198.18.16.1");
  EXPECT_EQ(format_ipv4(lane_ipv4(15, 253, 31)), "198.19.255.254");
  EXPECT_EQ(format_mac(lane_mac(2, 7, 1)), "02:6d:6c:02:07:01");
}

TEST(Addressing, SiteIsReadBackFromAddressAndMac) {
  for (int site : {0, 1, 15}) {
    for (int node : {0, 5, 253}) {
      for (int lane : {0, 1, 31}) {
        EXPECT_EQ(site_of_ipv4(lane_ipv4(site, node, lane)), site);
        EXPECT_EQ(site_of_mac(lane_mac(site, node, lane).data()), site);
      }
    }
  }
  EXPECT_EQ(site_of_ipv4(0xC0A80001), std::nullopt);   // 192.168.0.1
  EXPECT_EQ(site_of_ipv4(kEmuNetwork), std::nullopt);  // network address: no node 0
  const Mac other{0x52, 0x54, 0x00, 0x01, 0x02, 0x03};
  EXPECT_EQ(site_of_mac(other.data()), std::nullopt);
}

TEST(Names, NamespacesAndValidation) {
  EXPECT_EQ(node_netns("grid", 12), "ml-grid-n12");
  EXPECT_EQ(site_netns("grid", 1), "ml-grid-s1");
  EXPECT_TRUE(is_netns_of("grid", "ml-grid-n0"));
  EXPECT_TRUE(is_netns_of("grid", "ml-grid-s15"));
  EXPECT_FALSE(is_netns_of("grid", "ml-grid2-n0"));
  EXPECT_FALSE(is_netns_of("grid", "ml-grid-n01"));
  EXPECT_FALSE(is_netns_of("grid", "ml-grid-x0"));
  EXPECT_FALSE(is_netns_of("gr", "ml-grid-n0"));
  EXPECT_NO_THROW(check_emulation_name("Grid_2"));
  for (const char* bad : {"", "a-b", "a/b", "a.b", "abcdefghijklmnopqrstuvwxy"}) {
    EXPECT_THROW(check_emulation_name(bad), UsageError) << bad;
  }
  try {
    check_emulation_name("a-b");
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(),
                 "emulation name \"a-b\" is not allowed: use 1 to 24 characters of A-Z a-z 0-9 _");
  }
}

TEST(Plan, NodesLanesAndLinks) {
  const Plan plan = make_plan(two_sites(3, 2), options("g"));
  ASSERT_EQ(plan.sites.size(), 2u);
  ASSERT_EQ(plan.nodes.size(), 6u);
  EXPECT_EQ(plan.sites[1].netns, "ml-g-s1");
  const NodePlan& n4 = plan.nodes[4];  // second node of site 1
  EXPECT_EQ(n4.netns, "ml-g-n4");
  EXPECT_EQ(n4.site, 1);
  ASSERT_EQ(n4.lanes.size(), 2u);
  EXPECT_EQ(n4.lanes[1].node_interface, "lane1");
  EXPECT_EQ(n4.lanes[1].site_interface, "n4l1");
  EXPECT_EQ(n4.lanes[1].address, "198.18.17.2");
  EXPECT_EQ(n4.lanes[1].mac, "02:6d:6c:01:01:01");
  EXPECT_EQ(n4.lanes[1].up.bps, 25e6);
  EXPECT_EQ(n4.lanes[1].down.bps, 25e6);
  ASSERT_EQ(plan.wans.size(), 1u);
  EXPECT_EQ(plan.wans[0].tap_a, "wan1");
  EXPECT_EQ(plan.wans[0].tap_b, "wan0");
  EXPECT_EQ(plan.wans[0].bps, 125e6);
  EXPECT_DOUBLE_EQ(plan.wans[0].latency_s, 10e-3);
  // One bandwidth-delay product of the round trip: 125 MB/s x 20 ms.
  EXPECT_EQ(plan.wans[0].queue_bytes, 2'500'000u);
}

TEST(Plan, QueueFloorAndOverride) {
  EXPECT_EQ(default_wan_queue(125e6, 0, 9000), 32u * 9014);
  EXPECT_EQ(default_wan_queue(0, 0.01, 1500), 32u * 1514);
  EmuOptions o = options();
  o.wan_queue_bytes = 100'000;
  EXPECT_EQ(make_plan(two_sites(1, 1), o).wans[0].queue_bytes, 100'000u);
}

TEST(Plan, LaneShapingCoversTheLongestRoundTrip) {
  const Shaping s = lane_shaping(25e6, 20e-3, 9000);
  EXPECT_EQ(s.bps, 25e6);
  EXPECT_EQ(s.burst_bytes, 18028u);    // two frames beat 0.5 ms (12.5 kB)
  EXPECT_EQ(s.queue_bytes, 500'000u);  // 25 MB/s x 20 ms
  EXPECT_EQ(lane_shaping(25e6, 0, 9000).queue_bytes, 4u * 18028);
}

TEST(Plan, TcpWindowFromTheWanLink) {
  Platform p = two_sites(1, 1);
  EXPECT_EQ(node_tcp_window(p, 0), 0u);  // nothing caps a connection: kernel defaults
  p.wan_links[0].tcp_window_bytes = 65536;
  EXPECT_EQ(node_tcp_window(p, 1), 65536u);
  p.wan_links[0].tcp_window_bytes = 0;
  p.wan_links[0].per_connection_table = {{1, 5e6}};
  EXPECT_EQ(node_tcp_window(p, 0), 100'000u);  // 5 MB/s x 20 ms round trip
  EXPECT_EQ(make_plan(p, options()).nodes[1].tcp_window_bytes, 100'000u);
}

TEST(Plan, LimitsAreReportedByName) {
  auto message = [](const Platform& p, const EmuOptions& o) -> std::string {
    try {
      make_plan(p, o);
    } catch (const UsageError& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_EQ(message(make_uniform_platform(17, 1, 1, 1, 1e6, 0, 0, 1e6, 0), options()),
            "platform uniform has 17 sites; the emulator handles at most 16");
  EXPECT_THAT(message(make_uniform_platform(1, 255, 1, 1, 1e6, 0, 0, 1e6, 0), options()),
              HasSubstr("has 255 nodes; the emulator handles at most 254 per site"));
  EXPECT_THAT(message(make_uniform_platform(1, 1, 33, 1, 1e6, 0, 0, 1e6, 0), options()),
              HasSubstr("has 33 lanes; the emulator handles at most 32"));
  EmuOptions o = options();
  o.mtu = 100;
  EXPECT_EQ(message(two_sites(1, 1), o), "--mtu must be between 576 and 65000, got 100");
  o = options();
  o.wan_loss = 1;
  EXPECT_EQ(message(two_sites(1, 1), o), "--loss must be at least 0 and below 1, got 1");
  o = options();
  o.wan_queue_bytes = 100;
  EXPECT_EQ(message(two_sites(1, 1), o),
            "--queue must hold at least one frame (9014 bytes), got 100");
  EXPECT_THAT(message(two_sites(1, 1), options("no-dash")), HasSubstr("is not allowed"));
}

TEST(Plan, JsonRoundTrip) {
  Platform p = two_sites(2, 2);
  p.wan_links[0].tcp_window_bytes = 32768;
  EmuOptions o = options("rt");
  o.wan_loss = 0.01;
  o.mtu = 1500;
  const Plan plan = make_plan(p, o);
  const Plan back = plan_from_json(nlohmann::json::parse(plan_to_json(plan).dump()));
  EXPECT_EQ(plan_to_json(back), plan_to_json(plan));
  EXPECT_EQ(back.nodes[3].lanes[1].address, plan.nodes[3].lanes[1].address);
  EXPECT_EQ(back.wans[0].loss, 0.01);
  EXPECT_THROW(plan_from_json(nlohmann::json::parse(R"({"name": 3})")), EmuError);
}

TEST(Plan, ExamplePlatformFits) {
  const Platform p = load_platform_file(std::string(MULTILANE_SOURCE_DIR) +
                                        "/examples/platforms/two-sites-4x2.toml");
  const Plan plan = make_plan(p, options());
  EXPECT_EQ(plan.nodes.size(), 8u);
  EXPECT_EQ(plan.nodes[7].lanes[1].address, "198.18.17.4");
  EXPECT_EQ(plan.wans[0].queue_bytes, 2'500'000u);  // 1 Gbit/s x 20 ms
}

}  // namespace
}  // namespace multilane::emu
