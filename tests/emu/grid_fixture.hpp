// tests/emu/grid_fixture.hpp — a fixture for tests that build real emulated grids (root).
//
// SetUp skips the test with the reason when this process cannot run the emulator (not root,
// no network namespaces); every test gets its own emulation name. TearDown runs emu_down
// even when the test failed and asserts that nothing is left: no namespace, no delay-line
// process, no state directory, no interface of ours in the host's namespace.
#pragma once

#include <dirent.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <string>
#include <vector>

#include "emu/names.hpp"
#include "emu/netns.hpp"
#include "emu/process.hpp"
#include "multilane/emu.hpp"
#include "multilane/platform.hpp"

namespace multilane::emu::testing {

inline std::string tool_path() {
  return std::string(MULTILANE_BINARY_DIR) + "/multilane";
}

inline std::vector<std::string> directory(const std::string& path) {
  std::vector<std::string> names;
  if (DIR* dir = opendir(path.c_str())) {
    while (dirent* e = readdir(dir)) {
      const std::string name = e->d_name;
      if (name != "." && name != "..") names.push_back(name);
    }
    closedir(dir);
  }
  return names;
}

inline std::vector<pid_t> delay_line_processes(const std::string& name) {
  std::vector<pid_t> pids;
  for (const std::string& entry : directory("/proc")) {
    if (entry.find_first_not_of("0123456789") != std::string::npos) continue;
    const auto words = process_command_line(std::stoi(entry));
    if (words.size() >= 5 && words[2] == "delay-line" && words[4] == name &&
        process_alive(std::stoi(entry))) {
      pids.push_back(std::stoi(entry));
    }
  }
  return pids;
}

// Interfaces in this (the host's) namespace that look like ours: the emulator never puts any
// there.
inline std::vector<std::string> our_host_interfaces() {
  std::vector<std::string> found;
  for (const std::string& name : directory("/sys/class/net")) {
    std::ifstream mac_file("/sys/class/net/" + name + "/address");
    std::string mac;
    mac_file >> mac;
    if (mac.rfind("02:6d:6c", 0) == 0 || name == "sitebr" || name.rfind("lane", 0) == 0) {
      found.push_back(name);
    }
  }
  return found;
}

inline void expect_nothing_left(const std::string& name) {
  for (const std::string& netns : list_netns()) {
    EXPECT_FALSE(is_netns_of(name, netns)) << "namespace left behind: " << netns;
  }
  EXPECT_TRUE(delay_line_processes(name).empty()) << "delay line left running";
  struct stat st;
  EXPECT_NE(stat(run_dir(name).c_str(), &st), 0) << run_dir(name) << " left behind";
  EXPECT_TRUE(our_host_interfaces().empty()) << "interface in the host namespace";
}

// Two sites of `nodes` nodes with `lanes` lanes each.
inline Platform grid_platform(int nodes, int lanes, double lane_bps, double wan_latency_s,
                              double wan_bps, double tcp_window = 0) {
  Platform p =
      make_uniform_platform(2, nodes, lanes, 1, lane_bps, 50e-6, wan_latency_s, wan_bps, 0);
  p.name = "test-grid";
  p.wan_links[0].tcp_window_bytes = tcp_window;
  return p;
}

class Grid : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string reason = emu_unsupported_reason();
    if (!reason.empty()) GTEST_SKIP() << reason;
    static std::atomic<int> counter{0};
    name_ = fmt::format("t{}x{}", getpid(), counter++);
  }

  void TearDown() override {
    if (name_.empty()) return;  // skipped
    try {
      emu_down(name_);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "emu_down: " << e.what();
    }
    expect_nothing_left(name_);
  }

  void up(const Platform& platform, EmuOptions options = {}) {
    options.name = name_;
    options.delay_line_program = tool_path();
    emu_up(platform, options);
  }

 public:
  // Runs argv inside node `node`'s namespace.
  CommandResult in_node(int node, std::vector<std::string> argv,
                        std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
    std::vector<std::string> command = emu_exec_prefix(name_, node);
    command.insert(command.end(), argv.begin(), argv.end());
    return run_command(command, {}, timeout);
  }

 protected:
  std::string name_;
};

}  // namespace multilane::emu::testing
