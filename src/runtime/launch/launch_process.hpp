// runtime/launch/launch_process.hpp — starting one rank process and describing how it ended.
//
// A rank is started with fork + execve in a process group of its own (its pid), so that the
// launcher can signal the rank and every process it started (a shell's children) at once, and
// so that a terminal's Ctrl-C reaches the launcher only, which forwards it (launcher.hpp).
// In the child, before exec: stdin is /dev/null (ranks run in background process groups and
// must not stop on reading the terminal), every signal is back to its default disposition and
// unblocked, and the child asks for SIGKILL when the launcher dies (PR_SET_PDEATHSIG), so a
// launcher killed outright leaves no rank behind. A rank with a processing unit is bound to it
// (sched_setaffinity; rank_binding.hpp), and runs unbound if the kernel refuses. Everything the
// child runs between fork and exec is async-signal-safe: argument and environment arrays and
// the CPU set are built before the fork.
#pragma once

#include <string>
#include <vector>

namespace multilane::runtime {

struct RankProcess {
  std::vector<std::string> argv;         // argv[0]: a path, resolved with resolve_program()
  std::vector<std::string> environment;  // "NAME=value"
  int stdout_fd = -1;                    // -1: inherit the launcher's
  int stderr_fd = -1;
  int unit = -1;  // the processing unit to bind to; -1: unbound
};

// The path execve needs for `program`: itself when it contains a '/', else the first
// executable file of that name in the directories of `path` (a PATH value). Throws UsageError
// naming the program when there is none ("cannot execute 'x': not found in PATH") or when
// it is not an executable file ("cannot execute './x': Permission denied").
std::string resolve_program(const std::string& program, const std::string& path);

// Starts the process; returns its pid (also its process group). Throws std::runtime_error
// with the reason when fork or exec failed ("cannot execute '/bin/x': Exec format error").
int start_rank_process(const RankProcess& process);

// How a wait status reads: "exited with code 2", "was killed by signal 9 (SIGKILL)".
std::string describe_wait_status(int status);
// "SIGKILL" for 9 ("signal 99" when unknown).
std::string signal_name(int signal);

}  // namespace multilane::runtime
