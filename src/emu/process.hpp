// emu/process.hpp — running the helpers the emulator drives (`ip`, `tc`) and its daemons.
//
// Every wait is bounded: a command that outlives its timeout is killed and reported; a daemon
// that does not report ready in time is killed and reported with the tail of its log.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

namespace multilane::emu {

struct CommandResult {
  int status = 0;      // exit status, or 128 + signal
  std::string output;  // stdout and stderr, interleaved
};

// Runs argv[0] (searched in PATH) with `input` on its stdin. Throws EmuError when it cannot be
// started or outlives `timeout` (it is killed then). It is also killed if this thread dies.
CommandResult run_command(const std::vector<std::string>& argv, std::string_view input = {},
                          std::chrono::milliseconds timeout = std::chrono::seconds(20));

// Same, and throws EmuError "`ip -n x link add ...`: exit status 2: <output>" unless it exits 0.
std::string run_checked(const std::vector<std::string>& argv, std::string_view input = {},
                        std::chrono::milliseconds timeout = std::chrono::seconds(20));

// "ip -n x link add ..." — argv joined for messages.
std::string join_command(const std::vector<std::string>& argv);

// Starts argv as a daemon (own session, reparented to init, stdin /dev/null, stdout and stderr
// appended to `log_path`) with a pipe on file descriptor `ready_fd` on which it writes
// "ready\n" once serving, or a line of error text. Returns its pid. Throws EmuError (with the
// daemon's message or log tail) when it fails or does not report within `timeout` (the caller
// cleans up: a late daemon is found by its command line, see emu_down).
pid_t spawn_daemon(const std::vector<std::string>& argv, const std::string& log_path, int ready_fd,
                   std::chrono::milliseconds timeout);

// True while `pid` exists and is not a zombie.
bool process_alive(pid_t pid);
// The NUL-separated command line of `pid` as words (empty when gone).
std::vector<std::string> process_command_line(pid_t pid);
// Sends SIGTERM, waits up to `grace` for each to go, then SIGKILLs the rest and waits again.
// Returns the pids that are still alive afterwards (normally none).
std::vector<pid_t> terminate_processes(const std::vector<pid_t>& pids,
                                       std::chrono::milliseconds grace);

// Absolute path of this process's executable (/proc/self/exe resolved).
std::string own_executable();

}  // namespace multilane::emu
