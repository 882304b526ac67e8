#include "sim/flows.hpp"

#include <algorithm>

namespace multilane::sim {

Flows::Flows(const Network& network) : net_(network) {
  const std::size_t n = network.num_resources();
  head_.assign(n, kNone);
  count_.assign(n, 0);
  conns_.assign(n, 0);
  max_conns_.assign(n, 0);
  mark_.assign(n, 0);
  local_.assign(n, 0);
  busy_since_.assign(n, 0);
  busy_total_.assign(n, 0);
  bytes_.assign(n, 0);
}

std::uint32_t Flows::allocate() {
  if (!free_.empty()) {
    const std::uint32_t f = free_.back();
    free_.pop_back();
    return f;
  }
  const auto f = static_cast<std::uint32_t>(remaining_.size());
  remaining_.push_back(0);
  rate_.push_back(0);
  last_.push_back(0);
  start_.push_back(0);
  fixed_cap_.push_back(kInf);
  owner_.push_back(0);
  version_.push_back(0);
  wan_.push_back(kNone);
  flow_mark_.push_back(0);
  flow_local_.push_back(0);
  conns_of_.push_back(0);
  slots_of_.push_back(0);
  slot_res_.resize(slot_res_.size() + kMaxSlots, kNone);
  slot_next_.resize(slot_next_.size() + kMaxSlots, kNone);
  slot_prev_.resize(slot_prev_.size() + kMaxSlots, kNone);
  slot_weight_.resize(slot_weight_.size() + kMaxSlots, 0.0f);
  return f;
}

void Flows::link(std::uint32_t slot, std::uint32_t r, double now) {
  slot_res_[slot] = r;
  slot_prev_[slot] = kNone;
  slot_next_[slot] = head_[r];
  if (head_[r] != kNone) slot_prev_[head_[r]] = slot;
  head_[r] = slot;
  if (count_[r]++ == 0) busy_since_[r] = now;
  mark_dirty(r);
}

void Flows::unlink(std::uint32_t slot, std::uint32_t r, double now) {
  const std::uint32_t prev = slot_prev_[slot];
  const std::uint32_t next = slot_next_[slot];
  if (prev != kNone) {
    slot_next_[prev] = next;
  } else {
    head_[r] = next;
  }
  if (next != kNone) slot_prev_[next] = prev;
  slot_res_[slot] = kNone;
  if (--count_[r] == 0) busy_total_[r] += now - busy_since_[r];
  mark_dirty(r);
}

void Flows::mark_dirty(std::uint32_t r) { dirty_.push_back(r); }

std::uint32_t Flows::add(const Path& path, std::uint64_t bytes, double now, std::uint32_t owner) {
  const std::uint32_t f = allocate();
  remaining_[f] = static_cast<double>(bytes);
  rate_[f] = 0;
  last_[f] = now;
  start_[f] = now;
  fixed_cap_[f] = path.fixed_cap_bps;
  owner_[f] = owner;
  ++version_[f];
  wan_[f] = path.wan;
  conns_of_[f] = path.connections;
  slots_of_[f] = static_cast<std::uint8_t>(path.slots);
  for (int i = 0; i < path.slots; ++i) {
    const std::uint32_t slot = f * kMaxSlots + static_cast<std::uint32_t>(i);
    slot_weight_[slot] = path.weight[i];
    link(slot, path.resource[i], now);
    bytes_[path.resource[i]] += static_cast<double>(bytes) * path.weight[i];
  }
  if (path.wan != kNone) {
    conns_[path.wan] += path.connections;
    max_conns_[path.wan] = std::max(max_conns_[path.wan], conns_[path.wan]);
  }
  ++active_;
  peak_active_ = std::max(peak_active_, active_);
  return f;
}

void Flows::remove(std::uint32_t f, double now) {
  for (std::uint32_t i = 0; i < slots_of_[f]; ++i) {
    const std::uint32_t slot = f * kMaxSlots + i;
    unlink(slot, slot_res_[slot], now);
  }
  if (wan_[f] != kNone) conns_[wan_[f]] -= conns_of_[f];
  slots_of_[f] = 0;
  ++version_[f];  // invalidates any pending finish event
  free_.push_back(f);
  --active_;
}

double Flows::finish_time(std::uint32_t f) const {
  if (remaining_[f] <= 0 || rate_[f] == kInf) return last_[f];
  return last_[f] + remaining_[f] / rate_[f];
}

void Flows::finish(double now) {
  for (std::size_t r = 0; r < count_.size(); ++r) {
    if (count_[r] > 0) {
      busy_total_[r] += now - busy_since_[r];
      busy_since_[r] = now;
    }
  }
}

}  // namespace multilane::sim
