// runtime/shm/process_alive.hpp — whether a process (a rank, a segment's creator) still runs.
//
// kill(pid, 0) alone answers "a process with this id exists", which is also true of a zombie:
// a rank killed by SIGKILL stays a zombie until its parent reaps it. So a process that exists
// is also looked up in /proc and counts as dead when its state is Z (zombie) or X (dead), or
// when it has begun to exit (its memory may already be gone: a copy from it fails).
// A reused pid makes a dead process look alive; callers keep their timeouts for that case.
#pragma once

#include <sys/types.h>

namespace multilane::runtime::shm {

bool process_alive(pid_t pid);

}  // namespace multilane::runtime::shm
