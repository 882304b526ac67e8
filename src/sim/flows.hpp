// sim/flows.hpp — the flows in progress and their max-min fair rates.
//
// A flow is a transfer (or copy) whose bytes are moving: `remaining` bytes at time `last`,
// moving at `rate` since then. Flows live in a recycled pool (struct of arrays); each flow has
// up to kMaxSlots resource slots, threaded into an intrusive doubly linked list per resource,
// so adding or removing a flow is O(slots) and allocates nothing in steady state.
//
// Rates are max-min fair with per-flow caps (progressive filling): raise every flow's rate
// together; when a resource is full, or a flow reaches its cap, freeze those flows; repeat.
// A flow's consumption of a resource is rate x weight. Adding or removing flows marks their
// resources dirty; reshare() recomputes only the connected components (flows linked through
// shared resources) that contain a dirty resource, one component at a time, and reports the
// flows whose rate changed. Cost per component: O(rounds x (resources + flows)), rounds being
// the number of distinct rate levels in it.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/network.hpp"

namespace multilane::sim {

class Flows {
 public:
  explicit Flows(const Network& network);

  // Starts a flow of `bytes` along `path` at time `now`; `owner` is the caller's tag.
  std::uint32_t add(const Path& path, std::uint64_t bytes, double now, std::uint32_t owner);
  // Ends flow `f` at time `now` (its slot is recycled).
  void remove(std::uint32_t f, double now);
  // Recomputes the rates of every component holding a dirty resource. Afterwards changed()
  // lists the flows whose rate changed; their remaining bytes are settled at `now`.
  void reshare(double now);
  const std::vector<std::uint32_t>& changed() const { return changed_; }
  bool has_dirty() const { return !dirty_.empty(); }

  // Time at which flow `f` finishes at its current rate.
  double finish_time(std::uint32_t f) const;
  std::uint32_t owner(std::uint32_t f) const { return owner_[f]; }
  std::uint32_t version(std::uint32_t f) const { return version_[f]; }
  double start_time(std::uint32_t f) const { return start_[f]; }
  std::size_t active() const { return active_; }
  std::size_t peak_active() const { return peak_active_; }
  std::uint64_t rate_updates() const { return rate_updates_; }

  // Statistics per resource, valid after finish(now).
  void finish(double now);
  double bytes(std::uint32_t r) const { return bytes_[r]; }
  double busy(std::uint32_t r) const { return busy_total_[r]; }
  std::uint32_t max_connections(std::uint32_t r) const { return max_conns_[r]; }

 private:
  std::uint32_t allocate();
  void link(std::uint32_t slot, std::uint32_t r, double now);
  void unlink(std::uint32_t slot, std::uint32_t r, double now);
  void mark_dirty(std::uint32_t r);
  void collect_component(std::uint32_t start);
  void fill_component(double now);
  double flow_cap(std::uint32_t f) const;
  void freeze(std::size_t local_flow, double rate);

  const Network& net_;
  // Per resource.
  std::vector<std::uint32_t> head_, count_, conns_, max_conns_, mark_, local_;
  std::vector<double> busy_since_, busy_total_, bytes_;
  // Per flow.
  std::vector<double> remaining_, rate_, last_, start_, fixed_cap_;
  std::vector<std::uint32_t> owner_, version_, wan_, flow_mark_, flow_local_;
  std::vector<std::uint16_t> conns_of_;
  std::vector<std::uint8_t> slots_of_;
  // Per slot (flow * kMaxSlots + i).
  std::vector<std::uint32_t> slot_res_, slot_next_, slot_prev_;
  std::vector<float> slot_weight_;
  std::vector<std::uint32_t> free_;
  std::size_t active_ = 0, peak_active_ = 0;
  std::uint64_t rate_updates_ = 0;
  // Reshare scratch.
  std::uint32_t epoch_ = 0;
  std::vector<std::uint32_t> dirty_, changed_, stack_, comp_res_, comp_flows_;
  std::vector<double> cap_left_, wsum_, new_rate_, cap_;
  std::vector<std::uint32_t> unfrozen_on_;
  std::vector<std::uint8_t> frozen_;
};

}  // namespace multilane::sim
