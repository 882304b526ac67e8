#include "emu/netns.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "emu/names.hpp"
#include "multilane/emu.hpp"

namespace multilane::emu {

namespace {
std::string netns_path(const std::string& netns) {
  return fmt::format("{}/{}", kNetnsRoot, netns);
}

std::vector<std::string> directory_entries(const std::string& path) {
  std::vector<std::string> names;
  DIR* dir = opendir(path.c_str());
  if (!dir) return names;
  while (dirent* e = readdir(dir)) {
    const std::string name = e->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  closedir(dir);
  std::sort(names.begin(), names.end());
  return names;
}
}  // namespace

NetnsScope::NetnsScope(const std::string& netns) {
  original_ = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
  if (original_ < 0) throw EmuError(fmt::format("open own netns: {}", std::strerror(errno)));
  const int target = open(netns_path(netns).c_str(), O_RDONLY | O_CLOEXEC);
  if (target < 0) {
    const int e = errno;
    close(original_);
    throw EmuError(fmt::format("network namespace {}: {}", netns, std::strerror(e)));
  }
  const int rc = setns(target, CLONE_NEWNET);
  const int e = errno;
  close(target);
  if (rc != 0) {
    close(original_);
    throw EmuError(fmt::format("cannot enter network namespace {}: {}", netns, std::strerror(e)));
  }
}

NetnsScope::~NetnsScope() {
  // Returning to a namespace we came from cannot fail short of the kernel losing it.
  setns(original_, CLONE_NEWNET);
  close(original_);
}

bool netns_exists(const std::string& netns) {
  struct stat st;
  return stat(netns_path(netns).c_str(), &st) == 0;
}

std::vector<std::string> list_netns() {
  return directory_entries(std::string(kNetnsRoot));
}

std::vector<pid_t> pids_in_netns(const std::string& netns) {
  struct stat target;
  std::vector<pid_t> pids;
  if (stat(netns_path(netns).c_str(), &target) != 0) return pids;
  for (const std::string& entry : directory_entries("/proc")) {
    if (entry.find_first_not_of("0123456789") != std::string::npos) continue;
    struct stat st;
    if (stat(fmt::format("/proc/{}/ns/net", entry).c_str(), &st) != 0) continue;
    if (st.st_dev == target.st_dev && st.st_ino == target.st_ino) pids.push_back(std::stoi(entry));
  }
  return pids;
}

void write_sysctl(const std::string& key, const std::string& value) {
  const std::string path = "/proc/sys/" + key;
  std::ofstream out(path);
  out << value << '\n';
  out.flush();
  if (!out) {
    throw EmuError(
        fmt::format("sysctl {} = {}: cannot write {}: {}", key, value, path, std::strerror(errno)));
  }
}

std::string read_sysctl(const std::string& key) {
  std::ifstream in("/proc/sys/" + key);
  std::string value;
  std::getline(in, value);
  if (!in) throw EmuError(fmt::format("sysctl {}: cannot read", key));
  return value;
}

}  // namespace multilane::emu
