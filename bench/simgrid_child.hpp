// bench/simgrid_child.hpp — run a piece of work in a child process, within a deadline.
//
// SimGrid's engine is one per process and cannot be created again, so the peer runs every SimGrid
// simulation in a child of its own (fork: the child inherits the schedule and platform already
// built). The child's answer comes back through a pipe. A child that has not answered within the
// deadline is killed; one that crashes is reported with its signal. Never blocks longer than the
// deadline.
#pragma once

#include <functional>
#include <string>

namespace multilane::simgrid_peer {

struct ChildOutcome {
  enum class Status { Ok, UsageError, Failed };
  Status status = Status::Failed;
  std::string text;  // Ok: the work's answer; otherwise what went wrong
};

// Runs `work` in a forked child. A UsageError thrown by `work` gives Status::UsageError with its
// message, any other exception Status::Failed with its message.
ChildOutcome run_in_child(const std::function<std::string()>& work, double timeout_s);

}  // namespace multilane::simgrid_peer
