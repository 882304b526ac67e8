// runtime/shm/plan_learner.cpp — see plan_learner.hpp.
#include "runtime/shm/plan_learner.hpp"

#include <algorithm>

#include "runtime/shm/upper_median.hpp"

namespace multilane::runtime::shm {

PlanLearner::PlanLearner(bool start_plan, const PlanLearning& policy)
    : policy_(policy), current_plan_(start_plan), period_(policy.first_period) {}

bool PlanLearner::wanted() const {
  return phase_ == Phase::TimingOther ? !current_plan_ : current_plan_;
}

bool PlanLearner::wants_timing() const {
  return phase_ != Phase::Resting;
}

bool PlanLearner::probing() const {
  return phase_ == Phase::TimingOther;
}

void PlanLearner::finished(bool plan, std::optional<double> time) {
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

void PlanLearner::end_round() {
  ++rounds_;
  if (upper_median(other_times_) < upper_median(current_times_) * (1 - policy_.margin)) {
    current_plan_ = !current_plan_;
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

}  // namespace multilane::runtime::shm
