// tests/emu/nothing_left_test.cpp — the emulation tests leave nothing behind.
//
// CTest runs every test of test_emu as a process of its own, one at a time (RUN_SERIAL). When
// each such process ends, this environment lists what the emulator could leave on the machine
// and fails the test if any of it belongs to an emulation a test made (names t<pid>x<n>,
// grid_fixture.hpp) whose test process is this one or has ended (killed before its teardown,
// say), whichever test made it: a namespace in `ip netns`, a state directory in
// /run/multilane, a delay-line process, an interface of ours in the host's namespace, or a
// process still inside a test's node namespace. So the last test of a `make test` run checks
// the whole suite, and a leak is reported by the test that made it or by the next one. It only
// reports: removing another run's leftovers is `multilane emu down --name t...`'s job.
// Emulations with other names (a user's, a benchmark's) are not looked at.
#include <gtest/gtest.h>

#include <algorithm>

#include "grid_fixture.hpp"

namespace multilane::emu::testing {
namespace {

// "t<digits>x<digits>".
bool is_test_emulation(const std::string& name) {
  const auto digits_end = [&](std::size_t from) {
    return std::min(name.find_first_not_of("0123456789", from), name.size());
  };
  if (!name.starts_with('t')) return false;
  const std::size_t x = digits_end(1);
  if (x == 1 || x == name.size() || name[x] != 'x') return false;
  const std::size_t end = digits_end(x + 1);
  return end > x + 1 && end == name.size();
}

// A test emulation is left behind once the test process that made it (t<pid>x<n>) is this one
// (at its end) or gone; one of a test process still running elsewhere is in use, not a leak.
bool is_left_behind(const std::string& name) {
  if (!is_test_emulation(name)) return false;
  const pid_t creator = std::stoi(name.substr(1, name.find('x') - 1));
  return creator == getpid() || !process_alive(creator);
}

// "ml-t123x4-n0" -> "t123x4" (namespaces are ml-NAME-n<i> or ml-NAME-s<i>, names.hpp).
std::string emulation_of_netns(const std::string& netns) {
  if (netns.rfind("ml-", 0) != 0) return "";
  const auto dash = netns.rfind('-');
  return dash > 3 ? netns.substr(3, dash - 3) : "";
}

std::vector<std::string> leftovers() {
  std::vector<std::string> found;
  for (const std::string& netns : list_netns()) {
    if (!is_left_behind(emulation_of_netns(netns))) continue;
    found.push_back("namespace " + netns);
    for (const pid_t pid : pids_in_netns(netns)) {
      found.push_back(fmt::format("process {} in {}", pid, netns));
    }
  }
  for (const std::string& name : directory(std::string(kRunRoot))) {
    if (is_left_behind(name)) found.push_back("state " + run_dir(name));
  }
  for (const std::string& entry : directory("/proc")) {
    if (entry.find_first_not_of("0123456789") != std::string::npos) continue;
    const auto words = process_command_line(std::stoi(entry));
    if (words.size() >= 5 && words[2] == "delay-line" && is_left_behind(words[4])) {
      found.push_back(fmt::format("delay line {} of {}", entry, words[4]));
    }
  }
  for (const std::string& interface : our_host_interfaces()) {
    found.push_back("host interface " + interface);
  }
  return found;
}

class NothingLeftBehind : public ::testing::Environment {
 public:
  void TearDown() override {
    if (!emu_unsupported_reason().empty()) return;  // no test could build anything
    for (const std::string& thing : leftovers()) ADD_FAILURE() << "left behind: " << thing;
  }
};

[[maybe_unused]] ::testing::Environment* const environment =
    ::testing::AddGlobalTestEnvironment(new NothingLeftBehind);

TEST(NothingLeft, TestEmulationNamesAreRecognised) {
  EXPECT_TRUE(is_test_emulation("t4242x0"));
  EXPECT_FALSE(is_test_emulation("grid"));
  EXPECT_FALSE(is_test_emulation("t4242x"));
  EXPECT_EQ(emulation_of_netns("ml-t4242x3-n12"), "t4242x3");
  EXPECT_EQ(emulation_of_netns("ml-t4242x3-s0"), "t4242x3");
  EXPECT_EQ(emulation_of_netns("other"), "");
  EXPECT_TRUE(is_left_behind(fmt::format("t{}x0", getpid())));
  EXPECT_FALSE(is_left_behind(fmt::format("t{}x0", getppid())));  // a running process
}

// The check sees a grid that is up: it would fail a test that left this one behind.
using NothingLeftCheck = Grid;
TEST_F(NothingLeftCheck, SeesEverythingOfAGridThatIsUp) {
  up(grid_platform(1, 1, 12.5e6, 1e-3, 12.5e6));
  const auto found = leftovers();
  const auto has = [&](const std::string& thing) {
    return std::find(found.begin(), found.end(), thing) != found.end();
  };
  EXPECT_TRUE(has("namespace ml-" + name_ + "-n0")) << ::testing::PrintToString(found);
  EXPECT_TRUE(has("namespace ml-" + name_ + "-s1")) << ::testing::PrintToString(found);
  EXPECT_TRUE(has("state " + run_dir(name_))) << ::testing::PrintToString(found);
  const auto delay_lines = delay_line_processes(name_);
  ASSERT_EQ(delay_lines.size(), 1u);
  EXPECT_TRUE(has(fmt::format("delay line {} of {}", delay_lines[0], name_)));
}

}  // namespace
}  // namespace multilane::emu::testing
