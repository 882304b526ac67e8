// sim/flows.hpp — the flows in progress and their max-min fair rates.
//
// A flow is a transfer (or copy) whose bytes are moving: `remaining` bytes at time `last`,
// moving at `rate` since then. Flows live in a recycled pool of records; each flow owns one
// slot per resource it crosses (a run of adjacent slots taken from a pool with a free list per
// run length), and every slot is threaded into an intrusive doubly linked list of its resource,
// so adding or removing a flow is O(slots) and allocates nothing in steady state.
//
// Rates are max-min fair with per-flow caps (progressive filling): raise every flow's rate
// together; when a resource is full, or a flow reaches its cap, freeze those flows; repeat.
// A flow's consumption of a resource is rate x weight. Adding or removing flows marks their
// resources dirty; reshare() recomputes only the connected components (flows linked through
// shared resources) that contain a dirty resource, one component at a time, and reports the
// flows whose rate changed. Cost per component: O(rounds x (resources + flows)), rounds being
// the number of distinct rate levels in it. A component of one flow (the flow is alone on
// every resource it crosses: the common case of contention-free schedules) takes a direct
// path, O(slots): its rate is the least of its cap and of capacity / weight over its resources,
// which is exactly what progressive filling computes for it.
//
// Layout: a flow's fields sit in one 64-byte record and a resource's in one 48-byte record
// (rather than one array per field), so touching a flow or a resource is one or two cache
// misses on large platforms; what only the general filling needs is kept aside.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "sim/network.hpp"

namespace multilane::sim {

class Flows {
 public:
  explicit Flows(const Network& network);
  // Sets aside room for `flows` concurrent flows (an upper bound, such as the number of
  // transfers and copies), so that the pool never moves. Large pools are mapped, not touched:
  // only the records actually used become resident.
  void reserve(std::size_t flows);

  // Starts a flow of `bytes` along `path` at time `now`; `owner` is the caller's tag. The
  // path's latency and lane are kept with the flow (latency(), lane()).
  std::uint32_t add(const Path& path, std::uint64_t bytes, double now, std::uint32_t owner);
  // Ends flow `f` at time `now` (its record and slots are recycled).
  void remove(std::uint32_t f, double now);
  // Recomputes the rates of every component holding a dirty resource. Afterwards changed()
  // lists the flows whose rate changed; their remaining bytes are settled at `now`.
  void reshare(double now);
  const std::vector<std::uint32_t>& changed() const { return changed_; }
  bool has_dirty() const { return !dirty_.empty(); }

  // Time at which flow `f` finishes at its current rate.
  double finish_time(std::uint32_t f) const;
  std::uint32_t owner(std::uint32_t f) const { return flows_[f].owner; }
  std::uint32_t version(std::uint32_t f) const { return flows_[f].version; }
  double rate(std::uint32_t f) const { return flows_[f].rate; }
  double latency(std::uint32_t f) const { return flows_[f].latency; }
  int lane(std::uint32_t f) const { return flows_[f].lane; }
  std::size_t active() const { return active_; }
  std::size_t peak_active() const { return peak_active_; }
  std::uint64_t rate_updates() const { return rate_updates_; }

  // Statistics per resource: bytes carried, time with at least one flow until `now`, and for
  // WAN resources the peak number of connections.
  double bytes(std::uint32_t r) const { return res_[r].bytes; }
  double busy(std::uint32_t r, double now) const;
  std::uint32_t max_connections(std::uint32_t r) const { return max_conns_[r - net_.wan_base()]; }

 private:
  struct Flow {
    double remaining = 0;
    double rate = 0;
    double last = 0;  // time at which `remaining` was settled
    double fixed_cap = kInf;
    double latency = 0;
    std::uint32_t owner = 0;
    std::uint32_t version = 0;  // bumped on every start, end and rate change
    std::uint32_t wan = kNone;  // WAN direction resource crossed, if any
    std::uint32_t slot_base = 0;
    std::uint32_t mark = 0;  // reshare epoch that visited it
    std::uint16_t connections = 0;
    std::uint8_t slots = 0;
    std::int8_t lane = 0;
  };
  struct Slot {
    std::uint32_t resource = kNone;
    std::uint32_t next = kNone;  // neighbours in the resource's list
    std::uint32_t prev = kNone;
    std::uint32_t flow = kNone;
    float weight = 0;
  };
  struct Resource {
    std::uint32_t head = kNone;  // first slot of its list
    std::uint32_t count = 0;     // flows crossing it now
    std::uint32_t mark = 0;      // reshare epoch that visited it
    std::uint32_t local = 0;     // index in the component being filled, or of its placeholder
    double capacity = 0;
    double busy_since = 0;
    double busy_total = 0;
    double bytes = 0;
  };

  void add_memory_resources();
  std::uint32_t allocate_flow();
  std::uint32_t allocate_slots(int count);
  static constexpr std::uint32_t kPlaceholder = 0x80000000u;  // dirty_ entry of an emptied one
  void push_placeholder(std::uint32_t r);
  void restore_placeholder(std::uint32_t r);
  void link(std::uint32_t slot, std::uint32_t r, double now);
  void unlink(std::uint32_t slot, double now);
  bool share_isolated(std::uint32_t f, double now);
  void collect_component(std::uint32_t start);
  void fill_component(double now);
  double flow_cap(const Flow& flow) const;
  void freeze(std::size_t local_flow, double rate);
  void set_rate(std::uint32_t f, double rate, double now);

  const Network& net_;
  BigVector<Resource> res_;
  std::vector<std::uint32_t> conns_, max_conns_;  // per WAN direction (resource - wan_base)
  BigVector<Flow> flows_;
  std::vector<std::uint32_t> flow_local_;  // per flow: index in the component being filled
  std::vector<std::uint32_t> free_flows_;
  BigVector<Slot> slots_;
  std::array<std::vector<std::uint32_t>, kMaxSlots + 1> free_slots_;  // by run length
  std::size_t active_ = 0, peak_active_ = 0;
  std::uint64_t rate_updates_ = 0;
  // Reshare scratch.
  std::uint32_t epoch_ = 0;
  BigVector<std::uint32_t> dirty_;
  std::vector<std::uint32_t> changed_, stack_, comp_res_, comp_flows_;
  std::vector<double> cap_left_, wsum_, new_rate_, cap_;
  std::vector<std::uint32_t> unfrozen_on_;
  std::vector<std::uint8_t> frozen_;
};

}  // namespace multilane::sim
