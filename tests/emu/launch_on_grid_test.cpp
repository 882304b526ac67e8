// tests/emu/launch_on_grid_test.cpp — jobs on an emulated grid through the real `multilane`
// binary (skipped without root): `launch --emu` puts each rank in its node's namespace with
// its node's lane addresses, `bench --emu --check` moves every byte right across the WAN delay
// line, an example program runs, the errors name the cause, and no rank outlives its job.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "grid_fixture.hpp"

namespace multilane::emu::testing {
namespace {

using ::testing::HasSubstr;

class LaunchOnGrid : public Grid {
 protected:
  // Two sites of two nodes, two 200 Mbit/s lanes each, a 400 Mbit/s WAN with 2 ms one way.
  void up_tiny_grid() { up(grid_platform(2, 2, 25e6, 2e-3, 50e6)); }

  CommandResult tool(std::vector<std::string> args) {
    args.insert(args.begin(), tool_path());
    return run_command(args, {}, std::chrono::seconds(60));
  }

  void expect_no_process_in_nodes() {
    for (const EmuNode& node : emu_nodes(name_)) {
      EXPECT_TRUE(pids_in_netns(node.netns).empty())
          << "a process outlived the job in " << node.netns;
    }
  }
};

TEST_F(LaunchOnGrid, EachRankRunsInItsNodesNamespaceOnItsLanes) {
  up_tiny_grid();
  // Each rank prints what it was given and the lane-1 address its namespace really has.
  const auto r = tool({"launch", "--emu", name_, "-n", "4", "--tag-output", "--", "sh", "-c",
                       "echo $MULTILANE_LANE_ADDRESSES $MULTILANE_HOST "
                       "$(ip -br -4 address show lane1 | tr -s ' ' | cut -d' ' -f3)"});
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("[rank 0] 198.18.0.1,198.18.16.1 198.18.0.1 198.18.16.1/20\n"));
  EXPECT_THAT(r.output, HasSubstr("[rank 1] 198.18.0.2,198.18.16.2 198.18.0.2 198.18.16.2/20\n"));
  EXPECT_THAT(r.output, HasSubstr("[rank 2] 198.18.1.1,198.18.17.1 198.18.1.1 198.18.17.1/20\n"));
  EXPECT_THAT(r.output, HasSubstr("[rank 3] 198.18.1.2,198.18.17.2 198.18.1.2 198.18.17.2/20\n"));
  expect_no_process_in_nodes();
}

TEST_F(LaunchOnGrid, CheckedBenchAndExampleRunAcrossTheWan) {
  up_tiny_grid();
  auto r = tool({"bench", "--emu", name_, "-n", "4", "--collective", "bcast", "--algorithm", "all",
                 "--sizes", "1KiB,300KiB", "--iterations", "1", "--repetitions", "1", "--check",
                 "--json"});
  ASSERT_EQ(r.status, 0) << r.output;
  const auto doc = nlohmann::json::parse(r.output.substr(r.output.find('{')));
  ASSERT_EQ(doc["ranks"], 4);
  ASSERT_GE(doc["results"].size(), 8u) << "every algorithm at two sizes";
  for (const auto& row : doc["results"]) {
    EXPECT_TRUE(row["checked"].get<bool>() && row["check_ok"].get<bool>()) << row.dump();
  }
  // The bytes crossed the WAN delay line, so its counters moved.
  EXPECT_THAT(emu_status(name_),
              ::testing::MatchesRegex("(.|\n)*frames in [1-9][0-9]* out [1-9](.|\n)*"));

  r = tool({"launch", "--emu", name_, "-n", "4", "--",
            std::string(MULTILANE_BINARY_DIR) + "/examples/bcast", "1000000", "multilane"});
  ASSERT_EQ(r.status, 0) << r.output;
  for (int rank = 0; rank < 4; ++rank) {
    EXPECT_THAT(r.output, HasSubstr(fmt::format("bcast: rank {} ok\n", rank)));
  }
  expect_no_process_in_nodes();
}

TEST_F(LaunchOnGrid, ErrorsNameTheGridAndItsSize) {
  auto r = tool({"launch", "--emu", name_, "-n", "2", "--", "true"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.output, fmt::format("multilane: --emu {0}: emulation \"{0}\" is not up; start "
                                  "it with multilane emu up PLATFORM --name {0}\n",
                                  name_));
  r = tool({"bench", "--emu", name_, "-n", "2"});
  EXPECT_EQ(r.status, 2);
  EXPECT_THAT(r.output, HasSubstr(fmt::format("emulation \"{}\" is not up", name_)));

  up_tiny_grid();
  r = tool({"launch", "--emu", name_, "-n", "5", "--", "true"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.output, fmt::format("multilane: -n 5 is more than emulation \"{}\" holds: 4 "
                                  "ranks (4 nodes, 4 cores)\n",
                                  name_));
  r = tool({"launch", "--emu", name_, "-n", "2", "--platform",
            std::string(MULTILANE_SOURCE_DIR) + "/examples/platforms/two-sites-4x2.toml", "--",
            "true"});
  EXPECT_EQ(r.status, 2);
  EXPECT_THAT(r.output,
              HasSubstr(fmt::format(
                  "its nodes and lanes differ from those of emulation \"{}\" (4 nodes)", name_)));
}

}  // namespace
}  // namespace multilane::emu::testing
