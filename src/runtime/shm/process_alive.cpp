#include "runtime/shm/process_alive.hpp"

#include <cerrno>
#include <csignal>
#include <fstream>
#include <sstream>
#include <string>

namespace multilane::runtime::shm {
namespace {

// PF_EXITING (include/linux/sched.h): set when a process begins to exit, before it gives up
// its memory; it may take a while longer to become a zombie.
constexpr unsigned long kExitingFlag = 0x4;

// Whether /proc/<pid>/stat ("4711 (name) S ppid pgrp session tty tpgid flags ...") shows a
// process that is exiting or gone: state Z (zombie) or X (dead), or the exiting flag. The name
// may contain spaces and parentheses, so the fields follow the last ')'. Unreadable: not
// known to be exiting.
bool exiting(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  const auto close = line.rfind(')');
  if (close == std::string::npos) return false;
  std::istringstream fields(line.substr(close + 1));
  char state = '?';
  long skipped = 0;
  unsigned long flags = 0;
  fields >> state >> skipped >> skipped >> skipped >> skipped >> skipped >> flags;
  return state == 'Z' || state == 'X' || (fields && (flags & kExitingFlag) != 0);
}

}  // namespace

bool process_alive(pid_t pid) {
  if (pid <= 0) return false;
  if (kill(pid, 0) != 0 && errno != EPERM) return false;
  return !exiting(pid);
}

}  // namespace multilane::runtime::shm
