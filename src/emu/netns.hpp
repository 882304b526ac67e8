// emu/netns.hpp — named network namespaces (the ones `ip netns` keeps in /run/netns).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace multilane::emu {

// Moves the calling thread into a named network namespace and back on destruction. Sockets,
// TAP devices and /proc/sys/net files opened inside belong to that namespace for good.
// Throws EmuError when the namespace does not exist or cannot be entered.
class NetnsScope {
 public:
  explicit NetnsScope(const std::string& netns);
  ~NetnsScope();
  NetnsScope(const NetnsScope&) = delete;
  NetnsScope& operator=(const NetnsScope&) = delete;

 private:
  int original_ = -1;
};

bool netns_exists(const std::string& netns);
// Every name in /run/netns, sorted.
std::vector<std::string> list_netns();
// Processes whose network namespace is `netns` (like `ip netns pids`).
std::vector<pid_t> pids_in_netns(const std::string& netns);

// Writes one sysctl of the calling thread's network namespace, e.g.
// write_sysctl("net/ipv4/tcp_rmem", "4096 131072 262144"). Throws EmuError.
void write_sysctl(const std::string& key, const std::string& value);
std::string read_sysctl(const std::string& key);

}  // namespace multilane::emu
