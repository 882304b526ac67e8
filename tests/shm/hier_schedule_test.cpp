// The two-level (hier-shm) schedules as data: they verify on every shape the sweep does not
// cover (ranks of a node that are not consecutive, uneven nodes, every root), the verifier
// catches group calls that disagree, and the simulator costs them.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>

#include "multilane/algorithms.hpp"
#include "multilane/model.hpp"
#include "multilane/platform_file.hpp"
#include "multilane/sim.hpp"
#include "multilane/verify.hpp"
#include "schedule/group_call.hpp"

namespace multilane {
namespace {

// Nodes of the given core counts on one site; ranks dealt round robin over the nodes (so the
// ranks of a node are not consecutive) when `round_robin`, else block-wise.
Platform smp_platform(const std::vector<int>& cores, bool round_robin) {
  Platform p;
  p.name = round_robin ? "smp-round-robin" : "smp-block";
  const int site = p.add_site("site", 20e-6);
  int total = 0;
  for (std::size_t n = 0; n < cores.size(); ++n) {
    p.add_node(site, "n" + std::to_string(n), cores[n], 1, 125e6);
    total += cores[n];
  }
  if (!round_robin) {
    p.place_block(total);
    return p;
  }
  std::vector<int> used(cores.size(), 0);
  while (static_cast<int>(p.ranks.size()) < total) {
    for (std::size_t n = 0; n < cores.size(); ++n) {
      if (used[n] < cores[n]) p.ranks.push_back({static_cast<int>(n), used[n]++});
    }
  }
  return p;
}

const char* const kAlgorithms[] = {"hier-shm", "hier-shm-vdg"};

TEST(HierSchedule, EveryCollectiveVerifiesOnEveryShapeAndRoot) {
  const std::vector<std::vector<int>> shapes = {{1}, {4}, {3, 3}, {1, 4, 2}, {2, 1, 1, 3}};
  int verified = 0;
  for (const bool round_robin : {false, true}) {
    for (const auto& shape : shapes) {
      const Platform platform = smp_platform(shape, round_robin);
      for (const Collective c : kGroupCollectives) {
        for (const char* name : kAlgorithms) {
          if (!find_algorithm(c, name)) continue;
          for (int root = 0; root < platform.num_ranks(); ++root) {
            for (const std::uint64_t size : {0ull, 1ull, 1000ull}) {
              const Schedule s = build_schedule(platform, c, name, {root, size});
              const VerifyReport report = verify_schedule(s, platform);
              ASSERT_TRUE(report.ok())
                  << platform.name << " " << to_string(c) << " " << name << " root " << root
                  << " size " << size << ": " << report.errors.front();
              ++verified;
            }
          }
        }
      }
    }
  }
  EXPECT_GT(verified, 500);
}

TEST(HierSchedule, UsesOneGroupCallPerNodeForBcast) {
  const Platform platform = smp_platform({3, 3}, false);
  const Schedule s = build_schedule(platform, Collective::Bcast, "hier-shm", {0, 4096});
  for (int r = 0; r < 6; ++r) {
    int groups = 0;
    for (const Op& op : s.program(r)) groups += is_group_op(op.kind) ? 1 : 0;
    EXPECT_EQ(groups, 1) << "rank " << r;
  }
  // Only the leaders (ranks 0 and 3) use the network.
  for (int r : {1, 2, 4, 5}) EXPECT_EQ(s.program(r).size(), 1u) << "rank " << r;
}

Schedule bcast_on_two_nodes(Platform& platform) {
  platform = smp_platform({3, 3}, false);
  return build_schedule(platform, Collective::Bcast, "hier-shm", {0, 1000});
}

Op& group_op_of(Schedule& s, int rank) {
  for (std::uint32_t g = s.rank_begin[rank]; g < s.rank_begin[rank + 1]; ++g) {
    if (is_group_op(s.ops[g].kind)) return s.ops[g];
  }
  throw std::logic_error("no group op");
}

std::string first_error(const Schedule& s, const Platform& platform) {
  const VerifyReport report = verify_schedule(s, platform);
  return report.ok() ? "" : report.errors.front();
}

TEST(HierSchedule, VerifierNamesAMemberWithAnotherRoot) {
  Platform platform;
  Schedule s = bcast_on_two_nodes(platform);
  group_op_of(s, 2).peer = 1;
  EXPECT_NE(first_error(s, platform)
                .find("group call #0 on node n0: member 2 names root rank 1 "
                      "but member 0 names root rank 0"),
            std::string::npos)
      << first_error(s, platform);
}

TEST(HierSchedule, VerifierNamesAMemberRunningAnotherCollective) {
  Platform platform;
  Schedule s = bcast_on_two_nodes(platform);
  group_op_of(s, 4).kind = OpKind::GroupGather;
  EXPECT_NE(first_error(s, platform)
                .find("member 1 runs group-gather but member 0 runs "
                      "group-bcast"),
            std::string::npos)
      << first_error(s, platform);
}

TEST(HierSchedule, VerifierRejectsARootOnAnotherNode) {
  Platform platform;
  Schedule s = bcast_on_two_nodes(platform);
  group_op_of(s, 4).peer = 0;
  EXPECT_NE(first_error(s, platform)
                .find("rank 4 op #0 (group-bcast, root rank 0) names group "
                      "root rank 0, which is on node n0"),
            std::string::npos)
      << first_error(s, platform);
}

TEST(HierSchedule, VerifierCatchesALeaderThatDoesNotWaitForTheNetwork) {
  Platform platform;
  Schedule s = bcast_on_two_nodes(platform);
  group_op_of(s, 3).deps_count = 0;  // node 1's leader shares the message before it has it
  EXPECT_FALSE(first_error(s, platform).empty());
}

TEST(HierSchedule, VerifierCatchesAMissingGroupOp) {
  Platform platform;
  Schedule s = bcast_on_two_nodes(platform);
  Op& op = group_op_of(s, 5);  // rank 5 copies instead of joining the call
  op.kind = OpKind::Copy;
  op.range = {Buffer::Recv, 0, 500};
  op.source = {Buffer::Recv, 500, 500};
  EXPECT_NE(first_error(s, platform)
                .find("rank 3 takes part in 1 group calls but rank 5 on the same node takes part "
                      "in 0"),
            std::string::npos)
      << first_error(s, platform);
}

TEST(HierSchedule, LoweringKeepsEveryByteAndTheSimulatorCostsIt) {
  for (const bool round_robin : {false, true}) {
    const Platform platform = smp_platform({3, 2}, round_robin);
    for (const Collective c : kGroupCollectives) {
      const Schedule s = build_schedule(platform, c, "hier-shm", {1, 777});
      const Schedule lowered = lower_group_ops(s, platform);
      EXPECT_FALSE(has_group_ops(lowered));
      const VerifyReport report = verify_schedule(lowered, platform);
      EXPECT_TRUE(report.ok()) << to_string(c) << ": " << report.errors.front();
      EXPECT_GT(simulate(s, platform).time_s, 0) << to_string(c);
    }
  }
}

// The closed forms (model/hier_forms.cpp) and the simulator (group calls lowered to intra-node
// transfers) describe the same two levels: they agree within a factor of two, and both see
// the shared memory (slower copies make both slower).
TEST(HierSchedule, ClosedFormAgreesWithTheSimulator) {
  Platform platform = smp_platform({3, 3}, false);
  for (const Collective c : kGroupCollectives) {
    const BuildParams params{0, 1 << 20};
    const double modelled = model_time(platform, c, "hier-shm", params);
    const double simulated =
        simulate(build_schedule(platform, c, "hier-shm", params), platform).time_s;
    EXPECT_GT(modelled / simulated, 0.5) << to_string(c);
    EXPECT_LT(modelled / simulated, 2.0) << to_string(c);
  }
  Platform slow_memory = platform;
  slow_memory.sites[0].shm.copy_bps /= 16;
  slow_memory.sites[0].shm.single_copy_bps /= 16;
  const BuildParams params{0, 1 << 20};
  EXPECT_GT(model_time(slow_memory, Collective::Bcast, "hier-shm", params),
            model_time(platform, Collective::Bcast, "hier-shm", params));
  EXPECT_GT(
      simulate(build_schedule(slow_memory, Collective::Bcast, "hier-shm", params), slow_memory)
          .time_s,
      simulate(build_schedule(platform, Collective::Bcast, "hier-shm", params), platform).time_s);
}

// Group calls from the site's single_copy_from on copy every byte once, as the runtime does:
// with the copy bandwidths equal, the model and the simulator both find a 1 MiB call faster
// than with single copy turned off ("never"), and a call below the threshold costs the same
// either way. On two nodes the simulator may hide the intra-node part behind the network
// (alltoall overlaps both), so there it must only be no slower.
TEST(HierSchedule, SingleCopyCostsOneCopyInTheModelAndTheSimulator) {
  for (const std::vector<int>& shape : {std::vector<int>{4}, std::vector<int>{3, 3}}) {
    Platform once = smp_platform(shape, false);
    once.sites[0].shm.single_copy_bps = once.sites[0].shm.copy_bps;
    once.sites[0].shm.single_copy_from = 16 << 10;
    Platform twice = once;
    twice.sites[0].shm.single_copy_from = 0;
    const auto model = [](const Platform& p, Collective c, std::uint64_t size) {
      return model_time(p, c, "hier-shm", {0, size});
    };
    const auto sim = [](const Platform& p, Collective c, std::uint64_t size) {
      return simulate(build_schedule(p, c, "hier-shm", {0, size}), p).time_s;
    };
    const bool one_node = shape.size() == 1;
    for (const Collective c : kGroupCollectives) {
      const std::string what = fmt::format("{} on {} nodes", to_string(c), shape.size());
      EXPECT_LT(model(once, c, 1 << 20), model(twice, c, 1 << 20)) << what;
      if (one_node) {
        EXPECT_LT(sim(once, c, 1 << 20), sim(twice, c, 1 << 20)) << what;
      } else {
        EXPECT_LE(sim(once, c, 1 << 20), sim(twice, c, 1 << 20)) << what;
      }
      EXPECT_EQ(model(once, c, 1000), model(twice, c, 1000)) << what;
      EXPECT_EQ(sim(once, c, 1000), sim(twice, c, 1000)) << what;
    }
  }
}

// One node of two ranks, copied once: the closed forms' single-copy terms, to the byte.
TEST(HierSchedule, SingleCopyClosedFormsOnOneNode) {
  Platform p = smp_platform({2}, false);
  SharedMemory& shm = p.sites[0].shm;
  shm.copy_bps = 10e9;
  shm.sync_latency_s = 1e-6;
  shm.single_copy_bps = 5e9;
  shm.single_copy_latency_s = 2e-6;
  const double s = 1 << 20;
  const auto model = [&](Collective c) { return model_time(p, c, "hier-shm", {0, 1 << 20}); };
  // The root's share is where the root and the other rank finish together (the runtime learns
  // it): bcast half the message, scatter and gather (s/5e9 - s/10e9) x 5e9 / 2 = s/4, where
  // the root's own block (s/10e9) and a quarter (2 us + s/4/5e9) take as long as the other's
  // three quarters (2 us + 3s/4/5e9).
  const double d_half = 2e-6 + s / 2 / 5e9;  // a direct copy of half the message
  EXPECT_DOUBLE_EQ(model(Collective::Bcast), 1e-6 + d_half);
  const double balanced = 1e-6 + 2e-6 + 0.75 * s / 5e9;
  EXPECT_DOUBLE_EQ(model(Collective::Scatter), balanced);
  EXPECT_DOUBLE_EQ(model(Collective::Gather), balanced);
  const double exchange = std::max(1e-6, s / 10e9) + 2e-6 + s / 5e9;
  EXPECT_DOUBLE_EQ(model(Collective::Allgather), exchange);
  EXPECT_DOUBLE_EQ(model(Collective::Alltoall), exchange);
  // A root whose own block costs more than the other's copy takes no share.
  shm.copy_bps = 2e9;
  EXPECT_DOUBLE_EQ(model(Collective::Scatter), 1e-6 + s / 2e9);
}

// Across a WAN the flat tree of plain hier-shm sends the remote nodes their blocks one after
// the other: a scatter waits for the WAN latency once, a gather once per remote node (each
// receive starts when the one before has arrived). The closed form says the same as the
// simulator, on even and uneven nodes.
TEST(HierSchedule, FlatTreeAcrossAWanCostsWhatTheSimulatorSays) {
  const std::string grid = R"(
name = "two-sites"
[defaults]
lanes = 2
lane_bandwidth = "1Gbit/s"
lan_latency = "50us"
[[site]]
name = "a"
nodes = 3
cores = 2
[[site]]
name = "b"
nodes = 4
cores = 3
[[wan]]
between = ["a", "b"]
latency = "5ms"
bandwidth = "1Gbit/s"
connection_bandwidth = "250Mbit/s"
)";
  const Platform platform = parse_platform(grid, "two-sites.toml");
  const BuildParams params{0, 64 << 10};
  double times[2] = {};
  for (const Collective c : {Collective::Scatter, Collective::Gather}) {
    const double modelled = model_time(platform, c, "hier-shm", params);
    const double simulated =
        simulate(build_schedule(platform, c, "hier-shm", params), platform).time_s;
    EXPECT_NEAR(modelled / simulated, 1.0, 0.02) << to_string(c);
    times[c == Collective::Gather ? 1 : 0] = simulated;
  }
  // The gather pays the 5 ms of the WAN for each of the 4 remote nodes, the scatter once.
  EXPECT_NEAR(times[1] - times[0], 3 * 5e-3, 1e-3);
}

}  // namespace
}  // namespace multilane
