// tests/emu/grid_cli_test.cpp — the acceptance sequence through the real `multilane` binary
// (skipped without root): up, status, exec, hostfile, ping, down, and each one's idempotence.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "grid_fixture.hpp"

namespace multilane::emu::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;

class GridCli : public Grid {
 protected:
  CommandResult tool(std::vector<std::string> args) {
    args.insert(args.begin(), tool_path());
    return run_command(args);
  }
};

TEST_F(GridCli, UpStatusExecDownAndTheirRepeats) {
  const std::string platform =
      std::string(MULTILANE_SOURCE_DIR) + "/examples/platforms/two-sites-4x2.toml";
  auto r = tool({"emu", "up", platform, "--name", name_});
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output, fmt::format("emulation \"{0}\" is up: 8 nodes in 2 sites, 1 WAN delay "
                                  "lines; see `multilane emu status --name {0}`\n",
                                  name_));

  r = tool({"emu", "up", platform, "--name", name_});
  EXPECT_EQ(r.status, 2);  // a usage error: it is up already
  EXPECT_THAT(r.output, HasSubstr(fmt::format("emulation \"{}\" is already up", name_)));

  r = tool({"emu", "status", "--name", name_});
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("platform two-sites-4x2"));
  EXPECT_THAT(r.output, HasSubstr("7   west-3"));
  EXPECT_THAT(r.output, HasSubstr("east <-> west: latency 10 ms, rate 1 Gbit/s each way"));
  EXPECT_THAT(r.output, MatchesRegex("(.|\n)*east -> west: frames in [0-9]+ out [0-9]+(.|\n)*"));

  r = tool({"emu", "status"});  // every emulation that is up, this one among them
  EXPECT_EQ(r.status, 0);
  EXPECT_THAT(r.output, HasSubstr(fmt::format("emulation \"{}\"", name_)));

  r = tool(
      {"emu", "exec", "--name", name_, "west-3", "--", "ip", "-br", "address", "show", "lane1"});
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("198.18.17.4/20"));
  r = tool({"emu", "exec", "--name", name_, "198.18.0.2", "--", "sh", "-c", "exit 7"});
  EXPECT_EQ(r.status, 7) << "exec passes the command's exit status on";
  r = tool({"emu", "exec", "--name", name_, "north-0", "--", "true"});
  EXPECT_EQ(r.status, 2);
  EXPECT_THAT(r.output, HasSubstr("has no node \"north-0\"; give a name (east-0, east-1"));

  r = tool({"emu", "hostfile", "--name", name_});
  EXPECT_EQ(r.status, 0);
  EXPECT_THAT(r.output, ::testing::StartsWith("198.18.0.1 slots=1\n198.18.0.2 slots=1\n"));

  r = tool({"emu", "ping", "--name", name_, "east-0", "west-0", "--count", "5"});
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_THAT(r.output, MatchesRegex("east-0 -> west-0 \\(198.18.1.1, lane 0\\): 5 probes of 64 "
                                     "B, 5 answered: rtt min 2[0-9.]+ ms, .*\n"));

  r = tool({"emu", "down", "--name", name_});
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output, fmt::format("emulation \"{0}\" is down: stopped 1 delay lines, deleted 10 "
                                  "network namespaces, removed /run/multilane/{0}\n",
                                  name_));
  r = tool({"emu", "down", "--name", name_});
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.output, fmt::format("emulation \"{}\" is not up; nothing to remove\n", name_));
  r = tool({"emu", "status", "--name", name_});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.output, fmt::format("multilane: emulation \"{}\" is not up\n", name_));
}

TEST_F(GridCli, BadArgumentsAreUsageErrors) {
  const std::string platform =
      std::string(MULTILANE_SOURCE_DIR) + "/examples/platforms/two-sites-4x2.toml";
  auto r = tool({"emu", "up", platform, "--name", name_, "--queue", "12XB"});
  EXPECT_EQ(r.status, 2);
  EXPECT_THAT(r.output, HasSubstr("--queue: size \"12XB\" does not parse"));
  r = tool({"emu", "up", platform, "--name", name_, "--queue", "100"});
  EXPECT_EQ(r.status, 2);
  EXPECT_THAT(r.output, HasSubstr("--queue must hold at least one frame (9014 bytes), got 100"));
  r = tool({"emu", "up", platform, "--name", name_, "--mtu", "100"});
  EXPECT_EQ(r.status, 2);
  expect_nothing_left(name_);  // nothing was built for a rejected command
}

}  // namespace
}  // namespace multilane::emu::testing
