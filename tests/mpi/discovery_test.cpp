// Discovery's pure parts: choosing lanes among the interfaces, clustering round trips into
// sites, and the platform they make.
#include <gtest/gtest.h>

#include "mpi/discovered_platform.hpp"
#include "mpi/lane_discovery.hpp"
#include "mpi/site_clustering.hpp"
#include "multilane/errors.hpp"

namespace multilane::mpi {
namespace {

LocalLane interface(std::string name, std::string address, double bps = 1.25e9) {
  LocalLane lane;
  lane.interface = std::move(name);
  lane.address = std::move(address);
  lane.bps = bps;
  return lane;
}

std::vector<std::string> addresses(const std::vector<LocalLane>& lanes) {
  std::vector<std::string> out;
  for (const LocalLane& lane : lanes) out.push_back(lane.address);
  return out;
}

const std::vector<LocalLane> kUp = {interface("eth0", "10.0.0.7"),
                                    interface("docker0", "172.17.0.1"),
                                    interface("ib0", "198.18.1.7"), interface("ib1", "198.18.2.7")};

TEST(LaneDiscovery, ByDefaultEveryInterfaceButContainerBridges) {
  EXPECT_EQ(addresses(select_lanes(kUp, "")),
            (std::vector<std::string>{"10.0.0.7", "198.18.1.7", "198.18.2.7"}));
}

TEST(LaneDiscovery, NamesAndAddressPrefixesPickLanesInTheKernelsOrder) {
  EXPECT_EQ(addresses(select_lanes(kUp, "ib1,ib0")),
            (std::vector<std::string>{"198.18.2.7", "198.18.1.7"}));
  EXPECT_EQ(addresses(select_lanes(kUp, "198.18.")),
            (std::vector<std::string>{"198.18.1.7", "198.18.2.7"}));
  EXPECT_EQ(addresses(select_lanes(kUp, "ib0,198.18.")),
            (std::vector<std::string>{"198.18.1.7", "198.18.2.7"}));
  EXPECT_EQ(addresses(select_lanes(kUp, "docker0")), (std::vector<std::string>{"172.17.0.1"}));
}

TEST(LaneDiscovery, AnEntryThatMatchesNothingSaysWhatIsUp) {
  try {
    select_lanes(kUp, "eth0,eth7");
    ADD_FAILURE() << "eth7 is not up";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(),
                 "MULTILANE_LANES=\"eth0,eth7\": \"eth7\" matches no interface that is up with an "
                 "IPv4 address (up: eth0 10.0.0.7, docker0 172.17.0.1, ib0 198.18.1.7, ib1 "
                 "198.18.2.7)");
  }
}

TEST(LaneDiscovery, LanesTravelAsTextAndBack) {
  const std::vector<LocalLane> lanes = {interface("ib0", "198.18.1.7", 3.125e9),
                                        interface("ib1", "198.18.2.7", 1.25e9)};
  const std::string text = lanes_text(lanes);
  EXPECT_EQ(text, "198.18.1.7@3125000000,198.18.2.7@1250000000");
  const std::vector<LocalLane> back = parse_lanes_text(text);
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].address, "198.18.1.7");
  EXPECT_EQ(back[0].bps, 3.125e9);
  EXPECT_TRUE(parse_lanes_text("").empty());
  EXPECT_THROW(parse_lanes_text("198.18.1.7"), CommunicationError);
  EXPECT_THROW(parse_lanes_text("198.18.1.7@fast"), CommunicationError);
  EXPECT_THROW(parse_lanes_text("@5"), CommunicationError);
}

// `nodes` nodes in sites `site_of_node`: 60 us inside a site plus a little per pair, `wan` ms
// between sites.
RoundTrips grid(const std::vector<int>& site_of_node, double wan_ms) {
  const int n = static_cast<int>(site_of_node.size());
  RoundTrips trips{.nodes = n, .seconds = std::vector<double>(static_cast<std::size_t>(n * n))};
  for (int a = 0; a < n; ++a) {
    for (int b = 0; b < n; ++b) {
      const bool same =
          site_of_node[static_cast<std::size_t>(a)] == site_of_node[static_cast<std::size_t>(b)];
      trips.seconds[static_cast<std::size_t>(a * n + b)] =
          a == b ? 0 : (same ? 60e-6 + 1e-6 * (a + b) : wan_ms * 1e-3 + 1e-5 * (a + b));
    }
  }
  return trips;
}

TEST(SiteClustering, TwoSitesSplitAtTheGapWithTheirLatencies) {
  const SiteClusters c = cluster_sites(grid({0, 0, 0, 0, 1, 1, 1, 1}, 20));
  EXPECT_EQ(c.site_of_node, (std::vector<int>{0, 0, 0, 0, 1, 1, 1, 1}));
  ASSERT_EQ(c.sites(), 2);
  EXPECT_NEAR(c.wan_latency_s[1], 10e-3 + 0.5e-5 * 4, 1e-9);  // nodes 0 and 4: the fastest pair
  EXPECT_EQ(c.wan_latency_s[1], c.wan_latency_s[2]);
  EXPECT_NEAR(c.lan_latency_s[0], (60e-6 + 3e-6) / 2, 1e-6);
}

TEST(SiteClustering, InterleavedSitesAndALoneNodeAreFound) {
  EXPECT_EQ(cluster_sites(grid({0, 1, 2, 0, 1, 2}, 5)).site_of_node,
            (std::vector<int>{0, 1, 2, 0, 1, 2}));
  const SiteClusters lone = cluster_sites(grid({0, 1, 1, 1}, 20));
  EXPECT_EQ(lone.site_of_node, (std::vector<int>{0, 1, 1, 1}));
  EXPECT_EQ(lone.lan_latency_s[0], 0);  // no pair inside: nothing measured
}

TEST(SiteClustering, WithoutATenfoldGapOneSite) {
  EXPECT_EQ(cluster_sites(grid({0, 0, 1, 1}, 0.3)).sites(), 1);  // 0.3 ms: 5x the LAN only
  EXPECT_EQ(cluster_sites(grid({0, 0, 0}, 20)).sites(), 1);
  EXPECT_EQ(cluster_sites(RoundTrips{.nodes = 1, .seconds = {0}}).sites(), 1);
}

TEST(SiteClustering, GapsBelowTheFloorNeverSplit) {
  // 10 us against 150 us: fifteenfold, but both are one machine room.
  RoundTrips trips = grid({0, 0, 1, 1}, 0.15);
  trips.seconds[1] = trips.seconds[4] = 10e-6;
  EXPECT_EQ(cluster_sites(trips).sites(), 1);
}

TEST(DiscoveredPlatform, MeasuredSitesLanesAndLatencies) {
  Discovery found;
  found.hashes = {5, 5, 6, 6, 7, 8};
  found.site_names.assign(6, "");
  found.lanes.assign(6, {interface("", "198.18.0.1", 3.125e9), interface("", "198.18.1.1")});
  found.lanes[2] = {interface("", "198.18.0.3")};
  found.round_trips = grid({0, 0, 1, 1}, 20);
  const Platform p = discovered_platform(found);
  ASSERT_EQ(p.nodes.size(), 4u);
  ASSERT_EQ(p.num_sites(), 2);
  EXPECT_EQ(p.site_of(3), 0);
  EXPECT_EQ(p.site_of(4), 1);
  ASSERT_EQ(p.nodes[0].lanes.size(), 2u);
  EXPECT_EQ(p.nodes[0].lanes[1].address, "198.18.1.1");
  EXPECT_EQ(p.nodes[0].lanes[0].up_bps, 3.125e9);
  ASSERT_EQ(p.nodes[1].lanes.size(), 1u);  // its first rank's lanes
  EXPECT_EQ(p.nodes[1].lanes[0].address, "198.18.0.3");
  ASSERT_EQ(p.wan_links.size(), 1u);
  EXPECT_NEAR(p.wan_links[0].latency_s, 10e-3 + 0.5e-5 * 2, 1e-9);
  EXPECT_NEAR(p.sites[0].lan_latency_s, (60e-6 + 1e-6) / 2, 1e-9);
}

TEST(DiscoveredPlatform, OneNodeKeepsOneLaneWithoutAnAddress) {
  Discovery found;
  found.hashes = {5, 5};
  found.site_names.assign(2, "");
  found.lanes.assign(2, {interface("", "198.18.0.1"), interface("", "198.18.1.1")});
  const Platform p = discovered_platform(found);
  ASSERT_EQ(p.nodes.size(), 1u);
  ASSERT_EQ(p.nodes[0].lanes.size(), 1u);
  EXPECT_EQ(p.nodes[0].lanes[0].address, "");
}

}  // namespace
}  // namespace multilane::mpi
