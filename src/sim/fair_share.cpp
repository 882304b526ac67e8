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
  for (const std::uint32_t r : dirty_) {
    if (r & kPlaceholder) continue;  // emptied, nothing to share
    Resource& res = res_[r];
    if (res.mark == epoch_) continue;
    if (res.head == kNone) {  // a component without flows: nothing to share
      res.mark = epoch_;
      continue;
    }
    if (res.count == 1 && share_isolated(slots_[res.head].flow, now)) continue;
    collect_component(r);
    fill_component(now);
  }
  dirty_.clear();
}

// When flow f is alone on every resource it crosses, it is a component by itself: gives it its
// rate and returns true. Progressive filling would raise it to the lowest of its cap and of
// capacity / weight on its resources, which is what this computes, in the same arithmetic.
bool Flows::share_isolated(std::uint32_t f, double now) {
  Flow& flow = flows_[f];
  const std::uint32_t end = flow.slot_base + flow.slots;
  for (std::uint32_t s = flow.slot_base; s < end; ++s) {
    if (res_[slots_[s].resource].count != 1) return false;
  }
  flow.mark = epoch_;
  double level = kInf;
  for (std::uint32_t s = flow.slot_base; s < end; ++s) {
    Resource& res = res_[slots_[s].resource];
    res.mark = epoch_;
    level = std::min(level, res.capacity / static_cast<double>(slots_[s].weight));
  }
  set_rate(f, std::min(level, flow_cap(flow)), now);
  return true;
}

void Flows::collect_component(std::uint32_t start) {
  if (flow_local_.size() < flows_.size()) flow_local_.resize(flows_.size());
  comp_res_.clear();
  comp_flows_.clear();
  stack_.clear();
  res_[start].mark = epoch_;
  stack_.push_back(start);
  while (!stack_.empty()) {
    const std::uint32_t r = stack_.back();
    stack_.pop_back();
    res_[r].local = static_cast<std::uint32_t>(comp_res_.size());
    comp_res_.push_back(r);
    for (std::uint32_t s = res_[r].head; s != kNone; s = slots_[s].next) {
      const std::uint32_t f = slots_[s].flow;
      Flow& flow = flows_[f];
      if (flow.mark == epoch_) continue;
      flow.mark = epoch_;
      flow_local_[f] = static_cast<std::uint32_t>(comp_flows_.size());
      comp_flows_.push_back(f);
      for (std::uint32_t i = 0; i < flow.slots; ++i) {
        const std::uint32_t r2 = slots_[flow.slot_base + i].resource;
        if (res_[r2].mark != epoch_) {
          res_[r2].mark = epoch_;
          stack_.push_back(r2);
        }
      }
    }
  }
}

double Flows::flow_cap(const Flow& flow) const {
  double cap = flow.fixed_cap;
  if (flow.wan != kNone) {
    const auto connections = static_cast<int>(conns_[flow.wan - net_.wan_base()]);
    cap = std::min(cap, net_.connection_cap(flow.wan, connections) * flow.connections);
  }
  return cap;
}

void Flows::freeze(std::size_t j, double rate) {
  frozen_[j] = 1;
  new_rate_[j] = rate;
  const Flow& flow = flows_[comp_flows_[j]];
  for (std::uint32_t i = 0; i < flow.slots; ++i) {
    const Slot& slot = slots_[flow.slot_base + i];
    const std::uint32_t k = res_[slot.resource].local;
    const double w = slot.weight;
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
  for (std::size_t k = 0; k < nr; ++k) cap_left_[k] = res_[comp_res_[k]].capacity;
  new_rate_.assign(nf, 0);
  frozen_.assign(nf, 0);
  cap_.resize(nf);
  for (std::size_t j = 0; j < nf; ++j) {
    const Flow& flow = flows_[comp_flows_[j]];
    cap_[j] = flow_cap(flow);
    for (std::uint32_t i = 0; i < flow.slots; ++i) {
      const Slot& slot = slots_[flow.slot_base + i];
      const std::uint32_t k = res_[slot.resource].local;
      wsum_[k] += slot.weight;
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
      for (std::uint32_t s = res_[comp_res_[k]].head; s != kNone; s = slots_[s].next) {
        const std::size_t j = flow_local_[slots_[s].flow];
        if (!frozen_[j]) {
          freeze(j, level);
          --left;
        }
      }
    }
  }
  for (std::size_t j = 0; j < nf; ++j) set_rate(comp_flows_[j], new_rate_[j], now);
}

// Settles the bytes moved at the old rate and switches to the new one, unless the change is
// negligible (then the pending finish event stays valid).
void Flows::set_rate(std::uint32_t f, double rate, double now) {
  Flow& flow = flows_[f];
  const double old_rate = flow.rate;
  if (old_rate > 0 && std::abs(rate - old_rate) <= kRateTolerance * old_rate) return;
  if (old_rate > 0 && old_rate != kInf) flow.remaining -= old_rate * (now - flow.last);
  if (flow.remaining < 0) flow.remaining = 0;
  flow.last = now;
  flow.rate = rate;
  ++flow.version;
  ++rate_updates_;
  changed_.push_back(f);
}

}  // namespace multilane::sim
