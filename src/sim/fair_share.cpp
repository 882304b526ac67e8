// Max-min fair rates by progressive filling, one connected component at a time (see flows.hpp).
#include <algorithm>
#include <cmath>

#include "sim/flows.hpp"

namespace multilane::sim {

namespace {
constexpr double kLevelTolerance = 1e-9;  // resources within this relative level freeze together
constexpr double kRateTolerance = 1e-12;  // smaller relative rate changes are not rescheduled
}  // namespace

void Flows::reshare(double now) {
  changed_.clear();
  if (dirty_.empty()) return;
  ++epoch_;
  for (std::uint32_t r : dirty_) {
    if (mark_[r] == epoch_) continue;
    collect_component(r);
    if (!comp_flows_.empty()) fill_component(now);
  }
  dirty_.clear();
}

void Flows::collect_component(std::uint32_t start) {
  comp_res_.clear();
  comp_flows_.clear();
  stack_.clear();
  mark_[start] = epoch_;
  stack_.push_back(start);
  while (!stack_.empty()) {
    const std::uint32_t r = stack_.back();
    stack_.pop_back();
    local_[r] = static_cast<std::uint32_t>(comp_res_.size());
    comp_res_.push_back(r);
    for (std::uint32_t s = head_[r]; s != kNone; s = slot_next_[s]) {
      const std::uint32_t f = s / kMaxSlots;
      if (flow_mark_[f] == epoch_) continue;
      flow_mark_[f] = epoch_;
      flow_local_[f] = static_cast<std::uint32_t>(comp_flows_.size());
      comp_flows_.push_back(f);
      for (std::uint32_t i = 0; i < slots_of_[f]; ++i) {
        const std::uint32_t r2 = slot_res_[f * kMaxSlots + i];
        if (mark_[r2] != epoch_) {
          mark_[r2] = epoch_;
          stack_.push_back(r2);
        }
      }
    }
  }
}

double Flows::flow_cap(std::uint32_t f) const {
  double cap = fixed_cap_[f];
  if (wan_[f] != kNone) {
    const double per_connection = net_.connection_cap(wan_[f], static_cast<int>(conns_[wan_[f]]));
    cap = std::min(cap, per_connection * conns_of_[f]);
  }
  return cap;
}

void Flows::freeze(std::size_t j, double rate) {
  frozen_[j] = 1;
  new_rate_[j] = rate;
  const std::uint32_t f = comp_flows_[j];
  for (std::uint32_t i = 0; i < slots_of_[f]; ++i) {
    const std::uint32_t slot = f * kMaxSlots + i;
    const std::uint32_t k = local_[slot_res_[slot]];
    const double w = slot_weight_[slot];
    if (rate != kInf) cap_left_[k] = std::max(0.0, cap_left_[k] - rate * w);
    wsum_[k] -= w;
    --unfrozen_on_[k];
  }
}

void Flows::fill_component(double now) {
  const std::size_t nr = comp_res_.size();
  const std::size_t nf = comp_flows_.size();
  cap_left_.assign(nr, 0);
  wsum_.assign(nr, 0);
  unfrozen_on_.assign(nr, 0);
  for (std::size_t k = 0; k < nr; ++k) cap_left_[k] = net_.capacity(comp_res_[k]);
  new_rate_.assign(nf, 0);
  frozen_.assign(nf, 0);
  cap_.resize(nf);
  for (std::size_t j = 0; j < nf; ++j) {
    const std::uint32_t f = comp_flows_[j];
    cap_[j] = flow_cap(f);
    for (std::uint32_t i = 0; i < slots_of_[f]; ++i) {
      const std::uint32_t slot = f * kMaxSlots + i;
      const std::uint32_t k = local_[slot_res_[slot]];
      wsum_[k] += slot_weight_[slot];
      ++unfrozen_on_[k];
    }
  }
  std::size_t left = nf;
  while (left > 0) {
    double level = kInf;
    for (std::size_t k = 0; k < nr; ++k) {
      if (unfrozen_on_[k] > 0 && wsum_[k] > 0) level = std::min(level, cap_left_[k] / wsum_[k]);
    }
    for (std::size_t j = 0; j < nf; ++j) {
      if (!frozen_[j]) level = std::min(level, cap_[j]);
    }
    const double threshold = level * (1 + kLevelTolerance);
    for (std::size_t j = 0; j < nf; ++j) {
      if (!frozen_[j] && cap_[j] <= threshold) {
        freeze(j, std::min(cap_[j], level));
        --left;
      }
    }
    for (std::size_t k = 0; k < nr; ++k) {
      if (unfrozen_on_[k] == 0) continue;
      if (level != kInf && !(wsum_[k] > 0 && cap_left_[k] / wsum_[k] <= threshold)) continue;
      for (std::uint32_t s = head_[comp_res_[k]]; s != kNone; s = slot_next_[s]) {
        const std::size_t j = flow_local_[s / kMaxSlots];
        if (!frozen_[j]) {
          freeze(j, level);
          --left;
        }
      }
    }
  }
  for (std::size_t j = 0; j < nf; ++j) {
    const std::uint32_t f = comp_flows_[j];
    const double old_rate = rate_[f];
    const double rate = new_rate_[j];
    if (old_rate > 0 && std::abs(rate - old_rate) <= kRateTolerance * old_rate) continue;
    if (old_rate > 0 && old_rate != kInf) remaining_[f] -= old_rate * (now - last_[f]);
    if (remaining_[f] < 0) remaining_[f] = 0;
    last_[f] = now;
    rate_[f] = rate;
    ++version_[f];
    ++rate_updates_;
    changed_.push_back(f);
  }
}

}  // namespace multilane::sim
