// tests/emu/probe_on_grid_test.cpp — `multilane platform probe --emu` on a real emulated grid
// (skipped without root): the file it writes recovers the grid's sites, nodes and lanes, the WAN
// latency within 10% and the bandwidths within 20%, and the PMPI library places ranks on it by
// lane address.
#include <gtest/gtest.h>
#include <unistd.h>

#include "grid_fixture.hpp"
#include "multilane/platform_file.hpp"

namespace multilane::emu::testing {
namespace {

class ProbeOnGrid : public Grid {};

TEST_F(ProbeOnGrid, RecoversSitesNodesLanesLatencyAndBandwidths) {
  if (access((std::string(MULTILANE_BINARY_DIR) + "/multilane-probe-openmpi").c_str(), X_OK) != 0) {
    GTEST_SKIP() << "multilane-probe-openmpi is not built (no Open MPI, or the sanitizer build)";
  }
  // Two sites of three nodes, two 200 Mbit/s lanes each, a 600 Mbit/s WAN with 5 ms one way:
  // the three node pairs' lanes (1.2 Gbit/s) can fill the WAN.
  up(grid_platform(3, 2, 25e6, 5e-3, 75e6));
  const std::string file = fmt::format("/tmp/{}-probed.toml", name_);
  const auto r = run_command(
      {tool_path(), "platform", "probe", "--emu", name_, "--output", file, "--seconds", "1"}, {},
      std::chrono::seconds(120));
  ASSERT_EQ(r.status, 0) << r.output;
  const Platform p = load_platform_file(file);
  ASSERT_EQ(p.num_sites(), 2) << r.output;
  ASSERT_EQ(p.nodes.size(), 6u);
  for (const Node& node : p.nodes) {
    ASSERT_EQ(node.lanes.size(), 2u) << node.name;
    for (const Lane& lane : node.lanes) {
      EXPECT_NEAR(lane.up_bps, 25e6, 0.2 * 25e6) << node.name << " " << lane.address;
    }
  }
  EXPECT_EQ(p.sites[0].nodes.size(), 3u);
  ASSERT_EQ(p.wan_links.size(), 1u);
  EXPECT_NEAR(p.wan_links[0].latency_s, 5e-3, 0.1 * 5e-3);
  EXPECT_NEAR(p.wan_links[0].aggregate_bps, 75e6, 0.2 * 75e6) << r.output;
  ASSERT_FALSE(p.wan_links[0].per_connection_table.empty());
  EXPECT_EQ(p.wan_links[0].per_connection_table[0].connections, 1);

  // The PMPI library takes the file: the emulated nodes share one host name, so ranks find their
  // nodes by lane address.
  const std::string build = MULTILANE_BINARY_DIR;
  const auto job = run_command({tool_path(),
                                "emu",
                                "mpirun",
                                "--name",
                                name_,
                                "-n",
                                "6",
                                "--",
                                "-x",
                                "LD_PRELOAD=" + build + "/libmultilane_mpi.so",
                                "-x",
                                "MULTILANE_PLATFORM=" + file,
                                "-x",
                                "MULTILANE_EXPLAIN=1",
                                build + "/bench/mpi_peer",
                                "--collective",
                                "bcast",
                                "--sizes",
                                "64KiB",
                                "--iterations",
                                "1",
                                "--repetitions",
                                "1",
                                "--check"},
                               {}, std::chrono::seconds(120));
  std::remove(file.c_str());
  ASSERT_EQ(job.status, 0) << job.output;
  EXPECT_NE(job.output.find("6 ranks, 6 node(s) of 2 lane(s), 2 site(s)"), std::string::npos)
      << job.output;
  EXPECT_NE(job.output.find("platform: " + file), std::string::npos) << job.output;
}

}  // namespace
}  // namespace multilane::emu::testing
