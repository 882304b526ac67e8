// The multi-lane scatter/gather: P pairs across the WAN, shares, the cost model, reversal.
#include <gtest/gtest.h>

#include "multilane/algorithms.hpp"
#include "multilane/errors.hpp"
#include "multilane/wan_pairs.hpp"
#include "schedule_queries.hpp"

namespace multilane {
namespace {

using testing::sends_of;
using testing::wan_traffic;

// The scatter/gather paper's grid: 32 + 32 nodes, 5 ms, ~250 Mbit/s a connection, 1 Gbit/s in all.
Platform paper_grid() {
  return make_uniform_platform(2, 32, 2, 1, 125e6, 50e-6, 5e-3, 125e6, 31.25e6);
}

Schedule build(const Platform& p, Collective c, const char* algorithm, std::uint64_t size,
               int wan_pairs = 0, int root = 0) {
  BuildParams params;
  params.root = root;
  params.size = size;
  params.wan_pairs = wan_pairs;
  return build_schedule(p, c, algorithm, params);
}

TEST(MultilaneScatter, UsesExactlyPPairsAcrossTheWanCarryingEveryRemoteBlockOnce) {
  const auto platform = paper_grid();
  for (int pairs : {1, 4, 7, 32}) {
    const auto s = build(platform, Collective::Scatter, "multilane", 1000, pairs);
    const auto [bytes, wan_pairs] = wan_traffic(s, platform);
    EXPECT_EQ(wan_pairs.size(), static_cast<std::size_t>(pairs));
    EXPECT_EQ(bytes, 32u * 1000u);
    EXPECT_EQ(wan_pairs_used(platform, Collective::Scatter, "multilane",
                             {.size = 1000, .wan_pairs = pairs}),
              pairs);
    std::set<int> senders;
    for (auto [from, to] : wan_pairs) senders.insert(from);
    EXPECT_EQ(senders.size(), static_cast<std::size_t>(pairs));
    EXPECT_TRUE(senders.count(0));  // the root is one of the P senders
  }
}

TEST(MultilaneScatter, SingleLaneIsOneConnection) {
  const auto platform = paper_grid();
  const auto s = build(platform, Collective::Scatter, "single-lane", 1000);
  const auto [bytes, pairs] = wan_traffic(s, platform);
  EXPECT_EQ(pairs.size(), 1u);
  EXPECT_EQ(bytes, 32u * 1000u);
}

TEST(MultilaneScatter, AutoPicksTheCostModelsOptimum) {
  const auto platform = paper_grid();
  const auto inputs = wan_pairs_inputs(platform, 0, 1);
  for (std::uint64_t size : {1024ull, 64ull << 10, 4ull << 20}) {
    const auto s = build(platform, Collective::Scatter, "multilane", size);
    EXPECT_EQ(wan_traffic(s, platform).second.size(),
              static_cast<std::size_t>(optimal_wan_pairs(inputs, size)))
        << size;
    EXPECT_EQ(wan_pairs_used(platform, Collective::Scatter, "multilane", {.size = size}),
              optimal_wan_pairs(inputs, size))
        << size;
  }
  // 250 Mbit/s per connection and 1 Gbit/s in all: four pairs fill the WAN; more pairs
  // only shrink X(P) while b_WAN(P) = B_WAN/P falls as fast, and Y(P) grows with n0 >= n1.
  EXPECT_EQ(optimal_wan_pairs(inputs, 4 << 20), 4);
}

TEST(WanPairsModel, FollowsThePapersFormulas) {
  EXPECT_EQ(wan_pairs_x(32, 1), 32);
  EXPECT_EQ(wan_pairs_x(32, 5), 7);
  EXPECT_EQ(wan_pairs_y(32, 32, 4), 32 + 32 - 1 - 8);  // n0 >= n1
  EXPECT_EQ(wan_pairs_y(16, 32, 4), 32 + 4 - 2);       // n0 < n1
  WanPairsInputs in;
  in.n0 = in.n1 = 32;
  in.wan_latency_s = 5e-3;
  in.lan_bps = 125e6;
  WanLink link;
  link.latency_s = 5e-3;
  link.aggregate_bps = 125e6;
  link.per_connection_table = {{1, 31.25e6}};
  in.link = &link;
  const double m = 1 << 20;
  EXPECT_DOUBLE_EQ(wan_pairs_time(in, 2, 1 << 20), 5e-3 + 16 * m / 31.25e6 + 47 * m / 125e6);
  EXPECT_EQ(max_wan_pairs(in), 32);
}

TEST(Gather, IsTheScatterWithEveryArrowReversed) {
  const auto platform = paper_grid();
  for (const char* algorithm : {"linear", "binomial", "single-lane", "multilane"}) {
    const auto scatter = build(platform, Collective::Scatter, algorithm, 100, 3, 5);
    const auto gather = build(platform, Collective::Gather, algorithm, 100, 3, 5);
    auto scatter_sends = sends_of(scatter);
    auto gather_sends = sends_of(gather);
    ASSERT_EQ(scatter_sends.size(), gather_sends.size()) << algorithm;
    std::multiset<std::pair<int, int>> forward, backward;
    for (const auto& t : scatter_sends) forward.insert({t.from, t.to});
    for (const auto& t : gather_sends) backward.insert({t.to, t.from});
    EXPECT_EQ(forward, backward) << algorithm;
    // Reversing twice gives the original schedule back.
    const auto twice = reverse_schedule(gather, Collective::Scatter, algorithm);
    ASSERT_EQ(twice.ops.size(), scatter.ops.size());
    for (std::size_t i = 0; i < twice.ops.size(); ++i) {
      EXPECT_EQ(twice.ops[i].kind, scatter.ops[i].kind);
      EXPECT_EQ(twice.ops[i].range, scatter.ops[i].range);
      EXPECT_EQ(twice.ops[i].deps_count, scatter.ops[i].deps_count);
    }
    EXPECT_EQ(twice.deps, scatter.deps);
  }
}

TEST(BuildSchedule, RejectsBadParametersNamingThem) {
  const auto platform = paper_grid();
  BuildParams params;
  params.root = 64;
  try {
    build_schedule(platform, Collective::Bcast, "multilane", params);
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "root 64 is out of range: the platform has 64 ranks (0..63)");
  }
  try {
    build_schedule(platform, Collective::Scatter, "fastest", {});
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(),
                 "unknown scatter algorithm \"fastest\": choose one of linear, binomial, "
                 "single-lane, multilane, hier-shm");
  }
  params.root = 0;
  params.segment = 0;
  EXPECT_THROW(build_schedule(platform, Collective::Bcast, "chain", params), UsageError);
}

TEST(Registry, EveryCollectiveHasAlgorithmsWithSummaryAndOrigin) {
  for (auto c : kAllCollectives) EXPECT_FALSE(algorithm_names(c).empty());
  for (const auto& a : all_algorithms()) {
    EXPECT_FALSE(a.summary.empty()) << a.name;
    EXPECT_FALSE(a.origin.empty()) << a.name;
  }
}

}  // namespace
}  // namespace multilane
