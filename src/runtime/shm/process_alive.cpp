#include "runtime/shm/process_alive.hpp"

#include <cerrno>
#include <csignal>
#include <fstream>
#include <string>

namespace multilane::runtime::shm {
namespace {

// The state letter of /proc/<pid>/stat ("4711 (name) S ..."); '?' when it cannot be read. The
// name may contain spaces and parentheses, so the state follows the last ')'.
char process_state(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return '?';
  const auto close = line.rfind(')');
  if (close == std::string::npos || close + 2 >= line.size()) return '?';
  return line[close + 2];
}

}  // namespace

bool process_alive(pid_t pid) {
  if (pid <= 0) return false;
  if (kill(pid, 0) != 0 && errno != EPERM) return false;
  const char state = process_state(pid);
  return state != 'Z' && state != 'X';
}

}  // namespace multilane::runtime::shm
