// Helpers shared by the platform tests: the error text a call throws, and a field-by-field
// comparison of two platforms (Platform has no operator==; the comparison is exact).
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "multilane/errors.hpp"
#include "multilane/platform.hpp"

namespace multilane::testing {

inline std::string platform_error(auto&& call) {
  try {
    call();
  } catch (const PlatformError& e) {
    return e.what();
  }
  return "(no error)";
}

inline std::string example(const std::string& name) {
  return std::string(MULTILANE_SOURCE_DIR) + "/examples/platforms/" + name;
}

inline void expect_same_platform(const Platform& a, const Platform& b) {
  EXPECT_EQ(a.name, b.name);
  ASSERT_EQ(a.sites.size(), b.sites.size());
  for (std::size_t s = 0; s < a.sites.size(); ++s) {
    EXPECT_EQ(a.sites[s].name, b.sites[s].name);
    EXPECT_EQ(a.sites[s].lan_latency_s, b.sites[s].lan_latency_s);
    EXPECT_EQ(a.sites[s].shm.copy_bps, b.sites[s].shm.copy_bps);
    EXPECT_EQ(a.sites[s].shm.sync_latency_s, b.sites[s].shm.sync_latency_s);
    EXPECT_EQ(a.sites[s].shm.single_copy_from, b.sites[s].shm.single_copy_from);
    EXPECT_EQ(a.sites[s].shm.single_copy_bps, b.sites[s].shm.single_copy_bps);
    EXPECT_EQ(a.sites[s].shm.single_copy_latency_s, b.sites[s].shm.single_copy_latency_s);
    EXPECT_EQ(a.sites[s].nodes, b.sites[s].nodes);
  }
  ASSERT_EQ(a.nodes.size(), b.nodes.size());
  for (std::size_t n = 0; n < a.nodes.size(); ++n) {
    EXPECT_EQ(a.nodes[n].name, b.nodes[n].name);
    EXPECT_EQ(a.nodes[n].site, b.nodes[n].site);
    EXPECT_EQ(a.nodes[n].cores, b.nodes[n].cores);
    ASSERT_EQ(a.nodes[n].lanes.size(), b.nodes[n].lanes.size());
    for (std::size_t l = 0; l < a.nodes[n].lanes.size(); ++l) {
      EXPECT_EQ(a.nodes[n].lanes[l].up_bps, b.nodes[n].lanes[l].up_bps);
      EXPECT_EQ(a.nodes[n].lanes[l].down_bps, b.nodes[n].lanes[l].down_bps);
      EXPECT_EQ(a.nodes[n].lanes[l].address, b.nodes[n].lanes[l].address);
    }
  }
  ASSERT_EQ(a.wan_links.size(), b.wan_links.size());
  for (std::size_t w = 0; w < a.wan_links.size(); ++w) {
    const auto& x = a.wan_links[w];
    const auto& y = b.wan_links[w];
    EXPECT_EQ(x.site_a, y.site_a);
    EXPECT_EQ(x.site_b, y.site_b);
    EXPECT_EQ(x.latency_s, y.latency_s);
    EXPECT_EQ(x.aggregate_bps, y.aggregate_bps);
    EXPECT_EQ(x.tcp_window_bytes, y.tcp_window_bytes);
    ASSERT_EQ(x.per_connection_table.size(), y.per_connection_table.size());
    for (std::size_t i = 0; i < x.per_connection_table.size(); ++i) {
      EXPECT_EQ(x.per_connection_table[i].connections, y.per_connection_table[i].connections);
      EXPECT_EQ(x.per_connection_table[i].bps, y.per_connection_table[i].bps);
    }
  }
  ASSERT_EQ(a.ranks.size(), b.ranks.size());
  for (std::size_t r = 0; r < a.ranks.size(); ++r) {
    EXPECT_EQ(a.ranks[r].node, b.ranks[r].node) << "rank " << r;
    EXPECT_EQ(a.ranks[r].core, b.ranks[r].core) << "rank " << r;
  }
}

}  // namespace multilane::testing
