// runtime/shm/copy_path_learner.hpp — which copy path is faster for one kind of call, learned
// from the times of the calls themselves.
//
//   CopyPathLearner learner(/*start_once=*/true, policy);
//   before a call: use learner.wanted_once(); time it if learner.wants_timing()
//   after it:      learner.finished(copied_once, seconds_per_byte_or_nullopt)
//
// A call of the shm layer can copy its bytes once (the kernel's cross-memory copy) or twice
// (through the pipeline buffers, the paper's Table 1). Which is faster is not a constant of
// the machine: on the VMs of docs/performance.md the round trip of a cache line between two
// cores changes between about 50 and 600 ns from one minute to the next, and a two-copy
// alltoall of 16 KiB runs 1.5x faster than Open MPI in the fast states and 0.6x in the slow
// ones, while the kernel copy stays near 1.15x in both. So the layer measures as it goes, as
// STAR-MPI does for its algorithms (Faraj, Yuan and Lowenthal, ICS 2006).
//
// The learner runs rounds: it times `samples` calls on the current path, then `samples` calls
// on the other one, and switches when the other's median time is below the current one's by
// more than `margin`. Between rounds it rests: `first_period` calls after a round that
// switched, twice as many after each round that kept the path, up to `last_period`, so that a
// path that keeps losing is tried less and less often but never forgotten (the machine may
// change back). Calls on the path the phase does not ask for (the call after a switch was
// asked for, which still runs the old path: copy_chooser.hpp) do not count as samples.
//
// Pure bookkeeping: no clock, no I/O. One learner per kind of call (copy_chooser.hpp).
#pragma once

#include <optional>
#include <vector>

namespace multilane::runtime::shm {

struct CopyLearning {
  int samples = 5;        // timed calls per path and round; their median is compared
  int first_period = 32;  // resting calls after a round that switched
  int last_period = 512;  // the longest rest, reached by doubling
  double margin = 0.05;   // the other path must be this much faster to win
  friend bool operator==(const CopyLearning&, const CopyLearning&) = default;
};

class CopyPathLearner {
 public:
  // `start_once`: the path the calls use before anything was learned. The policy's counts
  // must be positive (ShmGroup checks them).
  CopyPathLearner(bool start_once, const CopyLearning& policy);

  // The path the next calls should take.
  bool wanted_once() const;
  // Whether the next call's time is wanted (only during a round).
  bool wants_timing() const;
  // One call of this kind ended. `once`: the path it took; `time`: its time per byte, when it
  // was timed.
  void finished(bool once, std::optional<double> time);

  // For tests and reports: rounds finished, and how many of them switched the path.
  int rounds() const { return rounds_; }
  int switches() const { return switches_; }

 private:
  enum class Phase { TimingCurrent, TimingOther, Resting };
  void end_round();

  CopyLearning policy_;
  bool current_once_;
  Phase phase_ = Phase::TimingCurrent;  // learn from the first calls on
  int period_;
  int resting_left_ = 0;
  std::vector<double> current_times_;
  std::vector<double> other_times_;
  int rounds_ = 0;
  int switches_ = 0;
};

}  // namespace multilane::runtime::shm
