// tests/shm/fork_ranks.hpp — runs the ranks of a test in forked processes.
//
// run_ranks(p, fn) forks p children; child i runs fn(i) and reports through a pipe the message
// of the exception it threw (empty when fn returned). Children leave with _exit(), so nothing
// of the test process (gtest, atexit handlers) runs twice. Every child still running after
// `limit` is killed with SIGKILL, so a failing test cannot hang. Children are reaped as soon as
// they exit (the parent polls), so a killed rank does not stay a zombie for long.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace multilane::runtime::shm::testing {

struct RankOutcome {
  pid_t pid = 0;
  bool exited = false;     // returned or threw (as opposed to killed)
  bool threw = false;      // fn threw: `message` is its what()
  int signal = 0;          // the signal that killed the child, if any
  bool timed_out = false;  // killed by run_ranks at the limit
  std::string message;
  bool ok() const { return exited && !threw; }
};

std::vector<RankOutcome> run_ranks(int ranks, const std::function<void(int)>& fn,
                                   std::chrono::milliseconds limit = std::chrono::seconds(20));

// A job id no other test (or test run) uses: the test process's pid and a counter.
std::uint64_t unique_job_id();

// "rank 0: ok; rank 1: threw: ...": for assertion messages.
std::string describe(const std::vector<RankOutcome>& outcomes);

}  // namespace multilane::runtime::shm::testing
