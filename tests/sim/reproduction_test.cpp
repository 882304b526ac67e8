// The papers' claims, reproduced by simulating the registry's schedules on the example
// platforms (docs/reproduction.md lists the same claims with their commands). Large messages
// use large segments so the op count stays modest under sanitizers.
#include <gtest/gtest.h>

#include <string>

#include "multilane/algorithms.hpp"
#include "multilane/model.hpp"
#include "multilane/platform_file.hpp"
#include "multilane/sim.hpp"
#include "multilane/wan_pairs.hpp"

namespace multilane {
namespace {

constexpr std::uint64_t KiB = 1024, MiB = 1024 * KiB;

Platform load(const std::string& name) {
  return load_platform_file(std::string(MULTILANE_SOURCE_DIR) + "/examples/platforms/" + name);
}

double sim(const Platform& p, Collective c, const std::string& algo, std::uint64_t size,
           std::uint64_t segment = MiB, int pairs = 0) {
  BuildParams bp;
  bp.size = size;
  bp.segment = segment;
  bp.wan_pairs = pairs;
  return simulate(build_schedule(p, c, algo, bp), p).time_s;
}

TEST(ReproductionBroadcast, SingleSite32Large) {
  const Platform p = load("single-site-32.toml");
  const std::uint64_t m = 256 * MiB;
  const double multilane = sim(p, Collective::Bcast, "multilane", m);
  const double binary = sim(p, Collective::Bcast, "binary", m);
  const double binomial = sim(p, Collective::Bcast, "binomial", m);
  const double chain = sim(p, Collective::Bcast, "chain", m);
  EXPECT_GE(binary / multilane, 1.8);
  EXPECT_LE(binary / multilane, 2.2);
  EXPECT_GE(binomial / multilane, 3.5);
  EXPECT_NEAR(chain / multilane, 1.0, 0.10);
}

// The two-tree paper's factor for reduction: two trees reducing one half each take about half
// the time of one pipelined binary tree (float elements, on 32 nodes, 256 MiB).
TEST(ReproductionReduce, TwoTreeHalvesTheBinaryTree) {
  const Platform p = load("single-site-32.toml");
  BuildParams bp{.size = 256 * MiB, .segment = MiB, .element_size = 4};
  const auto time_of = [&](const char* algorithm) {
    return simulate(build_schedule(p, Collective::Reduce, algorithm, bp), p).time_s;
  };
  const double two_tree = time_of("two-tree");
  EXPECT_GE(time_of("binary") / two_tree, 1.8);
  EXPECT_NEAR(time_of("multilane") / two_tree, 1.0, 0.05);
  EXPECT_GE(time_of("binomial") / two_tree, 3.5);
}

TEST(ReproductionBroadcast, SingleSite32Small) {
  const Platform p = load("single-site-32.toml");
  EXPECT_LE(sim(p, Collective::Bcast, "multilane", KiB, KiB) /
                sim(p, Collective::Bcast, "binary", KiB, KiB),
            1.5);
}

TEST(ReproductionBroadcast, TwoSites16x2Large) {
  // On several sites the paper's algorithm is the site-chained one (section 3.2).
  const Platform p = load("two-sites-16x2.toml");
  const std::uint64_t m = 256 * MiB;
  const double multilane = sim(p, Collective::Bcast, "multilane-sites", m);
  EXPECT_GE(sim(p, Collective::Bcast, "binary", m) / multilane, 2.5);
  EXPECT_GE(sim(p, Collective::Bcast, "binomial", m) / multilane, 3.5);
}

// Scatter/gather paper: multilane (P_opt) against single-lane, 4 MiB per rank and larger.
class ReproductionScatterGather : public ::testing::TestWithParam<Collective> {};

TEST_P(ReproductionScatterGather, MultilaneBeatsSingleLane) {
  const Platform p = load("grid-2x32-wan5ms.toml");
  for (std::uint64_t m : {4 * MiB, 16 * MiB}) {
    const double single = sim(p, GetParam(), "single-lane", m);
    const double multi = sim(p, GetParam(), "multilane", m);
    EXPECT_GE(single / multi, 1.5) << to_string(GetParam()) << " " << m << " bytes: single-lane "
                                   << single << " s, multilane " << multi << " s";
  }
}

INSTANTIATE_TEST_SUITE_P(Both, ReproductionScatterGather,
                         ::testing::Values(Collective::Scatter, Collective::Gather));

TEST(ReproductionScatterGather, OptimalPairsIsWithinRange) {
  const Platform p = load("grid-2x32-wan5ms.toml");
  const auto sweep = wan_pairs_sweep(p, 0, 4 * MiB);
  ASSERT_EQ(sweep.size(), 32u);
  const int popt = optimal_wan_pairs(wan_pairs_inputs(p, 0, 1), 4 * MiB);
  EXPECT_GE(popt, 2);  // several pairs pay off when B_WAN > b_WAN
  for (const auto& pt : sweep) EXPECT_GE(pt.time_s, sweep[popt - 1].time_s * (1 - 1e-12));
}

// For contention-free schedules the simulator agrees with the closed forms within 5%.
struct Agreement {
  const char* platform;
  Collective collective;
  const char* algorithm;
  std::uint64_t size;
  std::uint64_t segment;
};

class ModelAgreement : public ::testing::TestWithParam<Agreement> {};

TEST_P(ModelAgreement, WithinFivePercent) {
  const auto& a = GetParam();
  const Platform p = load(a.platform);
  BuildParams bp;
  bp.size = a.size;
  bp.segment = a.segment;
  const double simulated = simulate(build_schedule(p, a.collective, a.algorithm, bp), p).time_s;
  const double modelled = model_time(p, a.collective, a.algorithm, bp);
  EXPECT_NEAR(modelled / simulated, 1.0, 0.05)
      << a.algorithm << " on " << a.platform << ": sim " << simulated << " model " << modelled;
}

INSTANTIATE_TEST_SUITE_P(
    Papers, ModelAgreement,
    ::testing::Values(
        Agreement{"single-site-32.toml", Collective::Bcast, "chain", 64 * MiB, 256 * KiB},
        Agreement{"single-site-32.toml", Collective::Bcast, "binary", 64 * MiB, 256 * KiB},
        Agreement{"single-site-32.toml", Collective::Bcast, "multilane", 64 * MiB, 256 * KiB},
        Agreement{"single-site-32.toml", Collective::Bcast, "binomial", 64 * MiB, 0},
        Agreement{"single-site-32.toml", Collective::Bcast, "vandegeijn", 64 * MiB, 0},
        Agreement{"single-site-32.toml", Collective::Bcast, "multilane", 1 * KiB, 1 * KiB},
        Agreement{"two-sites-16x2.toml", Collective::Bcast, "chain", 64 * MiB, 256 * KiB},
        Agreement{"two-sites-16x2.toml", Collective::Bcast, "binary", 64 * MiB, 256 * KiB},
        Agreement{"two-sites-16x2.toml", Collective::Bcast, "multilane-sites", 64 * MiB, 256 * KiB},
        Agreement{"two-sites-16x2.toml", Collective::Bcast, "site-binomial", 64 * MiB, 0},
        Agreement{"grid-2x32-wan5ms.toml", Collective::Scatter, "single-lane", 4 * MiB, 0},
        Agreement{"grid-2x32-wan5ms.toml", Collective::Scatter, "linear", 4 * MiB, 0},
        Agreement{"single-site-32.toml", Collective::Reduce, "binomial", 64 * MiB, 0},
        Agreement{"single-site-32.toml", Collective::Allreduce, "ring", 16 * MiB, 0},
        Agreement{"two-sites-4x2.toml", Collective::Allreduce, "multilane-sites", 16 * MiB,
                  16 * MiB}),
    [](const auto& info) {
      std::string n = std::string(info.param.platform).substr(0, 6) + "_" +
                      std::string(to_string(info.param.collective)) + "_" + info.param.algorithm +
                      "_" + std::to_string(info.param.size);
      for (char& c : n) {
        if (!isalnum(static_cast<unsigned char>(c))) c = '_';
      }
      return n;
    });

// The SMP paper's two-level sum on 16 nodes x 16 cores: inter-node binomial over the nodes plus
// one shared-memory stage; the flat binomial over all 256 ranks pays log2(16) extra network-
// free but sequential shared-memory steps, so the two-level form is no slower.
TEST(ReproductionSmp, TwoLevelSum) {
  const Platform p = load("smp-16x16.toml");
  BuildParams bp;
  bp.size = 1 * MiB;
  const double two_level = smp_two_level_time(p, Collective::Bcast, "binomial", bp);
  Platform nodes_only = p;
  nodes_only.ranks.clear();
  for (int n = 0; n < static_cast<int>(p.nodes.size()); ++n) nodes_only.ranks.push_back({n, 0});
  const double inter = model_time(nodes_only, Collective::Bcast, "binomial", bp);
  const double flat = sim(p, Collective::Bcast, "binomial", bp.size);
  EXPECT_GT(two_level, inter);
  EXPECT_LT(two_level - inter, 0.1 * inter);  // the shared-memory stage is cheap
  EXPECT_LE(two_level, flat * 1.05);
}

}  // namespace
}  // namespace multilane
