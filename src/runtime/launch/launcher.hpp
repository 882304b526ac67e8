// runtime/launch/launcher.hpp — starting the N ranks of a job on this host and watching them.
//
// launch_job() is `multilane launch` as a library (also used by `multilane bench`, which
// launches itself, and by the emulated grid, which enters a node's namespace per rank):
//   1. checks the request (1..kMaxLaunchRanks ranks, a program that can be executed, a platform
//      that can hold the ranks) and throws UsageError / PlatformError before starting anything;
//   2. makes a fresh job id and random secret and serves the rendezvous store in-process
//      (rendezvous.hpp) on `rendezvous_bind`;
//   3. starts every rank (launch_process.hpp) with the launcher's environment plus the job's
//      contract variables (job_env.hpp) plus `extra_environment`, bound to a core as `binding`
//      says (rank_binding.hpp);
//   4. waits for all of them. SIGINT, SIGTERM and SIGHUP sent to the launcher are forwarded to
//      every rank (each rank runs in a process group of its own, so the whole rank, children
//      included, gets it).
//
// When a rank fails (exits non-zero or is killed) it is reported at once, through `report`:
//   "rank 3 (pid 4242) was killed by signal 9 (SIGKILL)", "rank 1 (pid 77) exited with code 2".
// The others then get `timeout` + `grace` to finish (they fail on their own within their
// timeout, naming the dead rank); those still running get SIGTERM, and `grace` later SIGKILL.
// A rank that could not be started ends the job the same way, without the wait.
// When a rank ends, whatever else still runs in its process group is killed, so no rank
// process survives the launcher (one that leaves its group with setsid() is beyond reach).
//
// Exit code of the job (LaunchResult::exit_code): 0 when every rank exited with 0; else the
// first failing rank's exit code, or 128 + the signal that killed it (as a shell reports it);
// 127 when a rank could not be started.
//
// The launcher catches signals process-wide while a job runs: one launch_job() at a time per
// process (a second concurrent call throws std::logic_error).
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "runtime/launch/rank_binding.hpp"

namespace multilane::runtime {

inline constexpr int kMaxLaunchRanks = 4096;

struct LaunchSpec {
  int ranks = 1;
  std::vector<std::string> command;  // program and arguments
  std::string platform_file;
  std::chrono::milliseconds timeout{60'000};  // passed to ranks as MULTILANE_TIMEOUT
  bool explain = false;
  std::vector<std::pair<std::string, std::string>> extra_environment;
  // Put in front of the command of a rank, e.g. to enter an emulated node's namespace.
  std::function<std::vector<std::string>(int rank)> command_prefix;
  bool tag_output = false;                  // prefix each output line with "[rank N] "
  RankBinding binding = RankBinding::Auto;  // which core each rank runs on (rank_binding.hpp)
  // After the first failure the others get timeout + grace, then SIGTERM, then after another
  // grace SIGKILL.
  std::chrono::milliseconds grace{5'000};
  // Where the launcher serves the rendezvous ("host:port", port 0: any). Ranks in other
  // network namespaces (an emulated grid) need an address they can all reach.
  std::string rendezvous_bind = "127.0.0.1:0";
  // Receives each failure line as it happens; empty: "multilane launch: <line>" on stderr.
  std::function<void(const std::string& line)> report;
};

struct RankOutcome {
  int rank = 0;
  int pid = -1;        // -1: never started
  int exit_code = -1;  // the exit status of a rank that exited; -1 when a signal ended it
  int signal = 0;      // the signal that ended it, 0 when it exited
};

struct LaunchResult {
  int exit_code = 0;                  // see the header comment
  std::vector<RankOutcome> ranks;     // indexed by rank
  std::vector<std::string> failures;  // the lines reported, in order
};

LaunchResult launch_job(const LaunchSpec& spec);

}  // namespace multilane::runtime
