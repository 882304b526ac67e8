// The incremental fair-sharing step (sim/flows.hpp: per component, with a direct path for a
// flow alone on its resources) gives every flow the rate that a plain global progressive
// filling computes from scratch, through random starts and ends of flows.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <vector>

#include "multilane/platform.hpp"
#include "sim/flows.hpp"
#include "sim/network.hpp"

namespace multilane::sim {
namespace {

// Max-min fair rates with per-flow caps over all flows at once: raise every unfrozen flow's
// rate together until a resource fills or a flow reaches its cap; freeze those; repeat.
std::map<std::uint32_t, double> reference_rates(const Network& net, const Platform& platform,
                                                const std::map<std::uint32_t, Path>& flows) {
  std::map<std::uint32_t, int> connections;  // per WAN direction resource
  for (const auto& [f, p] : flows) {
    if (p.wan != kNone) connections[p.wan] += p.connections;
  }
  std::map<std::uint32_t, double> cap;
  for (const auto& [f, p] : flows) {
    double c = p.fixed_cap_bps;
    if (p.wan != kNone) {
      const auto& link = platform.wan_links[(p.wan - net.wan_base()) / 2];
      c = std::min(c, link.connection_cap_bps(connections[p.wan]) * p.connections);
    }
    cap[f] = c;
  }
  std::map<std::uint32_t, double> rate, left;
  std::map<std::uint32_t, bool> frozen;
  for (const auto& [f, p] : flows) {
    for (int i = 0; i < p.slots; ++i) left[p.resource[i]] = net.capacity(p.resource[i]);
  }
  double level = 0;
  for (std::size_t round = 0; round <= flows.size(); ++round) {
    std::map<std::uint32_t, double> weight;  // unfrozen weight per resource
    for (const auto& [f, p] : flows) {
      if (frozen[f]) continue;
      for (int i = 0; i < p.slots; ++i) weight[p.resource[i]] += p.weight[i];
    }
    if (weight.empty()) break;
    // The next level: the least increase that fills a resource or reaches a cap.
    double next = kInf;
    for (const auto& [r, w] : weight) next = std::min(next, level + left[r] / w);
    for (const auto& [f, p] : flows) {
      if (!frozen[f]) next = std::min(next, cap[f]);
    }
    for (const auto& [r, w] : weight) {
      if (next != kInf) left[r] -= (next - level) * w;
    }
    level = next;
    for (const auto& [f, p] : flows) {
      if (frozen[f]) continue;
      bool stop = cap[f] <= level * (1 + 1e-9);
      for (int i = 0; i < p.slots && !stop; ++i) {
        stop = level == kInf || left[p.resource[i]] <= 1e-9 * net.capacity(p.resource[i]);
      }
      if (stop) {
        frozen[f] = true;
        rate[f] = std::min(cap[f], level);
      }
    }
  }
  return rate;
}

// Two sites of three nodes (two lanes, two cores each); the WAN carries 150 MB/s in all and
// 60 MB/s per connection once 2 or more cross it (100 MB/s for a single one).
Platform test_platform() {
  Platform p = make_uniform_platform(2, 3, 2, 2, 125e6, 50e-6, 5e-3, 150e6, 60e6);
  p.wan_links[0].per_connection_table = {{1, 100e6}, {2, 60e6}};
  return p;
}

void check_rates(const Flows& flows, const Network& net, const Platform& platform,
                 const std::map<std::uint32_t, Path>& active, const char* when) {
  const auto expected = reference_rates(net, platform, active);
  for (const auto& [f, p] : active) {
    const double want = expected.at(f);
    EXPECT_NEAR(flows.rate(f), want, 1e-9 * want) << when << ": flow " << f;
  }
}

TEST(FairShare, MatchesGlobalProgressiveFillingThroughRandomStartsAndEnds) {
  const Platform platform = test_platform();
  const Network net(platform);
  const int ranks = platform.num_ranks();
  for (std::uint32_t seed = 1; seed <= 12; ++seed) {
    std::mt19937 rng(seed);
    Flows flows(net);
    std::map<std::uint32_t, Path> active;
    double now = 0;
    for (int step = 0; step < 60; ++step) {
      now += 1e-3;
      const int starts = static_cast<int>(rng() % 4);
      for (int k = 0; k < starts; ++k) {
        const int from = static_cast<int>(rng() % static_cast<unsigned>(ranks));
        const int to = static_cast<int>(rng() % static_cast<unsigned>(ranks));
        const int lane = static_cast<int>(rng() % 3) - 1;  // -1: striped
        const Path path = from == to ? net.copy_path(from) : net.transfer_path(from, to, lane);
        active[flows.add(path, 1 + rng() % 1000000, now, 0)] = path;
      }
      const int ends = active.empty() ? 0 : static_cast<int>(rng() % 3);
      for (int k = 0; k < ends && !active.empty(); ++k) {
        auto it = std::next(active.begin(), static_cast<long>(rng() % active.size()));
        flows.remove(it->first, now);
        active.erase(it);
      }
      std::map<std::uint32_t, double> before;
      for (const auto& [f, p] : active) before[f] = flows.rate(f);
      flows.reshare(now);
      check_rates(flows, net, platform, active, "after reshare");
      // changed() lists exactly the flows whose rate moved.
      const auto& changed = flows.changed();
      for (const auto& [f, p] : active) {
        const bool listed = std::find(changed.begin(), changed.end(), f) != changed.end();
        if (listed) {
          EXPECT_TRUE(before[f] == 0 || flows.rate(f) != before[f]) << "flow " << f;
        } else {
          EXPECT_NEAR(flows.rate(f), before[f], 1e-12 * before[f]) << "flow " << f;
        }
      }
      if (HasFailure()) return;
    }
  }
}

TEST(FairShare, IsolatedFlowTakesItsNarrowestResourceOrCap) {
  const Platform platform = test_platform();  // ranks 2n and 2n+1 on node n; site 1 from rank 6
  const Network net(platform);
  Flows flows(net);
  // Striped across the WAN: two lanes each way (125 MB/s x 2 at weight 1/2) and two
  // connections of 60 MB/s each: 120 MB/s, below the WAN's 150 MB/s.
  const std::uint32_t wan = flows.add(net.transfer_path(0, 6, -1), 1000, 0, 0);
  // A copy in rank 1's node memory: capped at one core's copy bandwidth.
  const std::uint32_t copy = flows.add(net.copy_path(1), 1000, 0, 0);
  flows.reshare(0);
  EXPECT_DOUBLE_EQ(flows.rate(wan), 120e6);
  EXPECT_DOUBLE_EQ(flows.rate(copy), platform.sites[0].shm.copy_bps);
  // A second WAN flow in the same direction, one connection: each of the three connections
  // is capped at 60 MB/s, so the new flow gets 60 MB/s and the first the WAN's other 90 MB/s.
  const std::uint32_t second = flows.add(net.transfer_path(4, 10, 0), 1000, 0, 0);
  flows.reshare(0);
  EXPECT_NEAR(flows.rate(second), 60e6, 1e-3);
  EXPECT_NEAR(flows.rate(wan), 90e6, 1e-3);
  flows.remove(second, 0);
  flows.reshare(0);
  EXPECT_DOUBLE_EQ(flows.rate(wan), 120e6);
}

}  // namespace
}  // namespace multilane::sim
