// generate_platform: shape, names and figures of a generated platform, its argument checks,
// its TOML round trip, and the readable summary of a small one.
#include <gtest/gtest.h>

#include "multilane/errors.hpp"
#include "multilane/platform_file.hpp"
#include "platform_test_support.hpp"

namespace multilane {
namespace {

TEST(Generate, ShapeNamesAndFigures) {
  GenerateOptions o;
  o.sites = 3;
  o.nodes = 4;
  o.lanes = 2;
  o.cores = 3;
  o.wan_connection_bps = 31.25e6;
  const Platform p = generate_platform(o);
  EXPECT_EQ(p.name, "generated-3x4x2x3");
  EXPECT_EQ(p.num_sites(), 3);
  EXPECT_EQ(p.nodes.size(), 12u);
  EXPECT_EQ(p.nodes[5].name, "site1-1");
  EXPECT_EQ(p.nodes[5].lanes.size(), 2u);
  EXPECT_EQ(p.nodes[5].lanes[1].up_bps, 125e6);
  EXPECT_EQ(p.num_ranks(), 36);
  EXPECT_EQ(p.wan_links.size(), 3u);  // every pair of sites
  EXPECT_EQ(p.wan_links[0].per_connection_bps(1), 31.25e6);
  EXPECT_EQ(p.sites[2].lan_latency_s, 50e-6);
}

TEST(Generate, RoundTripsThroughToml) {
  GenerateOptions o;
  o.cores = 2;
  o.lane_bps = 25e6;
  o.lan_latency_s = 1.234567e-5;
  o.wan_latency_s = 0.0105;
  o.wan_aggregate_bps = 1.0 / 3.0 * 1e9;
  o.wan_connection_bps = 31.25e6;
  const Platform p = generate_platform(o);
  const std::string text = platform_to_toml(p);
  EXPECT_NE(text.find("nodes = 16\n"), std::string::npos) << text;  // written compactly
  testing::expect_same_platform(parse_platform(text, "generated.toml"), p);
}

TEST(Generate, RejectsOutOfRangeOptions) {
  const auto error = [](auto change) {
    GenerateOptions o;
    change(o);
    try {
      generate_platform(o);
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_EQ(error([](auto& o) { o.sites = 0; }), "sites must be between 1 and 4096, got 0");
  EXPECT_EQ(error([](auto& o) { o.lanes = 65; }), "lanes must be between 1 and 64, got 65");
  EXPECT_EQ(error([](auto& o) { o.cores = 0; }), "cores must be between 1 and 1024, got 0");
  EXPECT_EQ(error([](auto& o) {
              o.sites = 4096;
              o.nodes = 65536;
            }),
            "sites x nodes x cores (ranks) must be between 1 and 4194304, got 268435456");
  EXPECT_EQ(error([](auto& o) { o.lane_bps = 0; }), "lane bandwidth must be positive, got 0");
  EXPECT_EQ(error([](auto& o) { o.wan_latency_s = -1; }),
            "WAN latency must be zero or positive, got -1");
}

TEST(Describe, SmallPlatformExactly) {
  GenerateOptions o;
  o.nodes = 3;
  o.wan_connection_bps = 31.25e6;
  const Platform p = generate_platform(o);
  EXPECT_EQ(describe_platform(p),
            "platform generated-2x3x2x1 (generated): 2 sites, 6 nodes, 6 ranks\n"
            "sites:\n"
            "  site site0: 3 nodes, LAN latency 50 us, shared memory 32 Gbit/s copy / 1 us sync, "
            "one copy from 8 KiB (32 Gbit/s + 1.5 us), reduces 16 Gbit/s\n"
            "    site0-0 .. site0-2: 1 core, 2 lanes of 1 Gbit/s\n"
            "  site site1: 3 nodes, LAN latency 50 us, shared memory 32 Gbit/s copy / 1 us sync, "
            "one copy from 8 KiB (32 Gbit/s + 1.5 us), reduces 16 Gbit/s\n"
            "    site1-0 .. site1-2: 1 core, 2 lanes of 1 Gbit/s\n"
            "WAN links:\n"
            "  site0 <-> site1: latency 10 ms one-way, aggregate 10 Gbit/s, at most 250 Mbit/s "
            "per connection\n"
            "    b_WAN(P): P=1 250 Mbit/s, P=2 250 Mbit/s, P=3 250 Mbit/s\n"
            "placement: 6 ranks on 6 cores, block (cores of a node filled in order)\n"
            "  site0: 3 ranks (0-2)\n"
            "  site1: 3 ranks (3-5)\n");
}

}  // namespace
}  // namespace multilane
