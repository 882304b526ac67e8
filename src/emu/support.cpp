// emu_unsupported_reason(): can this process build network namespaces, TAPs and qdiscs?
#include <fcntl.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "multilane/emu.hpp"

namespace multilane {

namespace {

constexpr int kCapNetAdmin = 12;
constexpr int kCapSysAdmin = 21;

bool has_capability(int capability) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("CapEff:", 0) == 0) {
      const unsigned long long mask = std::stoull(line.substr(7), nullptr, 16);
      return (mask >> capability) & 1;
    }
  }
  return false;
}

bool in_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/sbin:/usr/bin:/sbin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (access((dir + "/" + program).c_str(), X_OK) == 0) return true;
  }
  return false;
}

// A child tries to make a network namespace of its own: the only sure test (containers and
// seccomp filters may forbid it to root).
bool can_unshare_network() {
  const pid_t child = fork();
  if (child < 0) return false;
  if (child == 0) _exit(unshare(CLONE_NEWNET) == 0 ? 0 : 1);
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

}  // namespace

std::string emu_unsupported_reason() {
  if (!has_capability(kCapNetAdmin) || !has_capability(kCapSysAdmin)) {
    return "multilane emu needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN) to create network "
           "namespaces; run it as root";
  }
  if (access("/proc/self/ns/net", F_OK) != 0 || !can_unshare_network()) {
    return "this system does not allow new network namespaces (CONFIG_NET_NS, or a container "
           "or seccomp policy forbids unshare(CLONE_NEWNET))";
  }
  if (access("/dev/net/tun", R_OK | W_OK) != 0) {
    return "/dev/net/tun is missing: the WAN delay line needs TAP devices (CONFIG_TUN)";
  }
  if (!in_path("ip") || !in_path("tc")) {
    return "`ip` and `tc` are missing: install the Debian package iproute2";
  }
  return "";
}

void require_emu_support(std::string_view context) {
  if (const std::string reason = emu_unsupported_reason(); !reason.empty()) {
    throw EmuError(std::string(context) + reason);
  }
}

}  // namespace multilane
