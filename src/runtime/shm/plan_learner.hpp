// runtime/shm/plan_learner.hpp — which of two plans is faster for one kind of call, learned
// from the times of the calls themselves.
//
//   PlanLearner<CopyPath> learner(CopyPath::Once, policy);
//   before a call: run plan learner.wanted(); time it if learner.wants_timing()
//   after it:      learner.finished(plan_it_ran, time_or_nullopt)
//
// The shm layer has two such choices, each an enum class of two plans:
// - CopyPath (copy_chooser.hpp): copy once (the kernel's cross-memory copy) or twice (through
//   the pipeline buffers, the paper's Table 1);
// - SharePlan (root_share.hpp): a single-copy rooted call with the root sharing the copying,
//   or without.
// Which is faster is not a constant of the machine: on the VMs of docs/performance.md the round
// trip of a cache line between two cores changes between about 50 and 600 ns from one minute
// to the next, and a two-copy alltoall of 16 KiB runs 1.5x faster than Open MPI in the fast
// states and 0.6x in the slow ones, while the kernel copy stays near 1.15x in both. So the
// layer measures as it goes, as STAR-MPI does for its algorithms (Faraj, Yuan and Lowenthal,
// ICS 2006).
//
// The learner runs rounds: it times `samples` calls on the current plan, then `samples` calls
// on the other one, and switches when the other's median time is below the current one's by
// more than `margin`. Both medians come from one round, back to back, so a slow minute of the
// machine weighs on both. Between rounds it rests: `first_period` calls after a round that
// switched, twice as many after each round that kept the plan, up to `last_period`, so that a
// plan that keeps losing is tried less and less often but never forgotten (the machine may
// change back). The first round may wait `first_rest` calls: a round costs up to `samples`
// calls on the slower plan, which a kind of call made only a few dozen times never earns back.
// Calls on the plan the phase does not ask for (the call after a switch was
// asked for, which still runs the old plan) and calls without a time do not count as samples.
//
// Pure bookkeeping: no clock, no I/O.
#pragma once

#include <algorithm>
#include <concepts>
#include <optional>
#include <type_traits>
#include <vector>

#include "runtime/shm/upper_median.hpp"

namespace multilane::runtime::shm {

struct PlanLearning {
  int samples = 5;        // timed calls per plan and round; their median is compared
  int first_period = 32;  // resting calls after a round that switched
  int last_period = 512;  // the longest rest, reached by doubling
  double margin = 0.05;   // the other plan must be this much faster to win
  int first_rest = 0;     // calls on the start plan before the first round
  friend bool operator==(const PlanLearning&, const PlanLearning&) = default;
};

// Two plans: an enum class on bool, so that the other plan is the one not in use.
template <class Plan>
concept TwoPlans = std::is_enum_v<Plan> && std::same_as < std::underlying_type_t<Plan>,
bool > ;

template <TwoPlans Plan>
class PlanLearner {
 public:
  // `start_plan`: the plan the calls use before anything was learned. The policy's counts
  // must be positive (ShmGroup checks them).
  PlanLearner(Plan start_plan, const PlanLearning& policy)
      : policy_(policy),
        current_plan_(start_plan),
        phase_(policy.first_rest > 0 ? Phase::Resting : Phase::TimingCurrent),
        period_(policy.first_period),
        resting_left_(policy.first_rest) {}

  // The plan the next calls should take.
  Plan wanted() const {
    return phase_ == Phase::TimingOther ? other(current_plan_) : current_plan_;
  }
  // Whether the next call's time is wanted (only during a round).
  bool wants_timing() const { return phase_ != Phase::Resting; }
  // Whether the round under way is timing the other plan (a probe of the plan not in use).
  bool probing() const { return phase_ == Phase::TimingOther; }
  // One call of this kind ended. `plan`: the plan it took; `time`: how long it took (per
  // byte or whole, as long as every call of the learner counts the same way), when timed.
  void finished(Plan plan, std::optional<double> time) {
    const auto full = [&](const std::vector<double>& times) {
      return static_cast<int>(times.size()) >= policy_.samples;
    };
    switch (phase_) {
      case Phase::Resting:
        if (--resting_left_ <= 0) phase_ = Phase::TimingCurrent;
        return;
      case Phase::TimingCurrent:
        if (plan != current_plan_ || !time) return;
        current_times_.push_back(*time);
        if (full(current_times_)) phase_ = Phase::TimingOther;
        return;
      case Phase::TimingOther:
        if (plan == current_plan_ || !time) return;
        other_times_.push_back(*time);
        if (full(other_times_)) end_round();
        return;
    }
  }

  // For tests and reports: rounds finished, and how many of them switched the plan.
  int rounds() const { return rounds_; }
  int switches() const { return switches_; }

 private:
  enum class Phase { TimingCurrent, TimingOther, Resting };
  static Plan other(Plan plan) { return static_cast<Plan>(!static_cast<bool>(plan)); }
  void end_round() {
    ++rounds_;
    if (upper_median(other_times_) < upper_median(current_times_) * (1 - policy_.margin)) {
      current_plan_ = other(current_plan_);
      ++switches_;
      period_ = policy_.first_period;
    } else {
      period_ = std::min(period_ * 2, policy_.last_period);
    }
    current_times_.clear();
    other_times_.clear();
    resting_left_ = period_;
    phase_ = resting_left_ > 0 ? Phase::Resting : Phase::TimingCurrent;
  }

  PlanLearning policy_;
  Plan current_plan_;
  Phase phase_;
  int period_;
  int resting_left_;
  std::vector<double> current_times_;
  std::vector<double> other_times_;
  int rounds_ = 0;
  int switches_ = 0;
};

}  // namespace multilane::runtime::shm
