#include "runtime/shm/process_alive.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>

namespace multilane::runtime::shm {
namespace {

// PF_EXITING (include/linux/sched.h): set when a process begins to exit, before it gives up
// its memory; it may take a while longer to become a zombie.
constexpr unsigned long kExitingFlag = 0x4;

// Whether /proc/<pid>/stat ("4711 (name) S ppid pgrp session tty tpgid flags ...") shows a
// process that is exiting or gone: state Z (zombie) or X (dead), or the exiting flag. The name
// may contain spaces and parentheses, so the fields follow the last ')'. Unreadable: not
// known to be exiting. Read into a buffer on the stack: a rank that waits long for a
// descheduled peer looks every check interval, inside calls that allocate nothing.
bool exiting(pid_t pid) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
  const int file = ::open(path, O_RDONLY | O_CLOEXEC);
  if (file < 0) return false;
  char line[1024];
  const ssize_t got = ::read(file, line, sizeof line - 1);
  ::close(file);
  if (got <= 0) return false;
  line[got] = '\0';
  const char* close = std::strrchr(line, ')');
  if (close == nullptr) return false;
  char state = '?';
  long skipped = 0;
  unsigned long flags = 0;
  const int fields = std::sscanf(close + 1, " %c %ld %ld %ld %ld %ld %lu", &state, &skipped,
                                 &skipped, &skipped, &skipped, &skipped, &flags);
  return state == 'Z' || state == 'X' || (fields == 7 && (flags & kExitingFlag) != 0);
}

}  // namespace

bool process_alive(pid_t pid) {
  if (pid <= 0) return false;
  if (kill(pid, 0) != 0 && errno != EPERM) return false;
  return !exiting(pid);
}

}  // namespace multilane::runtime::shm
