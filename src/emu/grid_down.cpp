// emu_down(): removes everything an emulation owns, whatever state it was left in.
#include <dirent.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "emu/names.hpp"
#include "emu/netns.hpp"
#include "emu/process.hpp"
#include "emu/state.hpp"
#include "multilane/emu.hpp"

namespace multilane {

namespace emu {
namespace {

constexpr auto kGrace = std::chrono::milliseconds(1500);

std::vector<std::string> namespaces_of(std::string_view name) {
  std::vector<std::string> out;
  for (const std::string& netns : list_netns()) {
    if (is_netns_of(name, netns)) out.push_back(netns);
  }
  return out;
}

// Delay lines are found by their command line (`PROGRAM emu delay-line --name NAME ...`), so
// one whose pid file was never written — `up` killed at the wrong moment — is found too.
std::vector<pid_t> delay_lines_of(std::string_view name) {
  std::vector<pid_t> pids;
  DIR* proc = opendir("/proc");
  if (!proc) return pids;
  while (dirent* e = readdir(proc)) {
    const std::string entry = e->d_name;
    if (entry.find_first_not_of("0123456789") != std::string::npos) continue;
    const auto words = process_command_line(std::stoi(entry));
    if (words.size() >= 5 && words[1] == "emu" && words[2] == "delay-line" &&
        words[3] == "--name" && words[4] == name) {
      pids.push_back(std::stoi(entry));
    }
  }
  closedir(proc);
  return pids;
}

void stop(const std::vector<pid_t>& pids, const std::string& what,
          std::vector<std::string>& report) {
  if (pids.empty()) return;
  const auto left = terminate_processes(pids, kGrace);
  report.push_back(fmt::format("stopped {} {}", pids.size() - left.size(), what));
  if (!left.empty()) {
    throw EmuError(fmt::format("{} {} did not stop (pid {} first)", left.size(), what, left[0]));
  }
}

void delete_namespaces(const std::vector<std::string>& namespaces,
                       std::vector<std::string>& report) {
  if (namespaces.empty()) return;
  std::string batch;
  for (const std::string& netns : namespaces) batch += fmt::format("netns delete {}\n", netns);
  run_command({"ip", "-force", "-batch", "-"}, batch);
  std::vector<std::string> left;
  for (const std::string& netns : namespaces) {
    if (netns_exists(netns)) left.push_back(netns);
  }
  report.push_back(fmt::format("deleted {} network namespaces", namespaces.size() - left.size()));
  if (!left.empty()) {
    throw EmuError(fmt::format("could not delete network namespace {}", left.front()));
  }
}

}  // namespace
}  // namespace emu

std::vector<std::string> emu_down(std::string_view name) {
  using namespace emu;
  check_emulation_name(name);
  require_emu_support();
  std::vector<std::string> report;
  const auto namespaces = namespaces_of(name);
  std::vector<pid_t> inside;
  for (const std::string& netns : namespaces) {
    for (pid_t pid : pids_in_netns(netns)) {
      if (pid != getpid()) inside.push_back(pid);
    }
  }
  stop(inside, "processes inside its namespaces", report);
  stop(delay_lines_of(name), "delay lines", report);
  delete_namespaces(namespaces, report);
  if (state_exists(name)) {
    remove_state(name);
    report.push_back(fmt::format("removed {}", run_dir(name)));
  }
  return report;
}

}  // namespace multilane
