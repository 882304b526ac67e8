#include "sim/flows.hpp"

#include <algorithm>
#include <stdexcept>

namespace multilane::sim {

// Lanes and WAN directions are set up at once; the nodes' memory resources only when a copy or
// a shared-memory message first needs one (many platforms have none: one rank per node).
Flows::Flows(const Network& network) : net_(network) {
  if (network.num_resources() >= kPlaceholder) {
    throw std::length_error("the platform has more than 2^31 lanes, WAN links and nodes");
  }
  res_.reserve(network.num_resources());
  network.for_each_link_capacity([this](double capacity) {
    Resource res;
    res.capacity = capacity;
    res_.push_back(res);
  });
  conns_.assign(network.mem_base() - network.wan_base(), 0);
  max_conns_.assign(conns_.size(), 0);
}

void Flows::add_memory_resources() {
  for (auto r = static_cast<std::uint32_t>(res_.size()); r < net_.num_resources(); ++r) {
    Resource res;
    res.capacity = net_.capacity(r);
    res_.push_back(res);
  }
}

void Flows::reserve(std::size_t flows) {
  constexpr std::size_t kTypicalSlots = 4;  // two lanes each way; more slots grow the pool
  flows_.reserve(flows);
  slots_.reserve(flows * kTypicalSlots);
}

// Recycles the most recently freed record first (a stack), so the records in use stay few and
// warm in cache.
std::uint32_t Flows::allocate_flow() {
  if (!free_flows_.empty()) {
    const std::uint32_t f = free_flows_.back();
    free_flows_.pop_back();
    return f;
  }
  flows_.emplace_back();
  return static_cast<std::uint32_t>(flows_.size() - 1);
}

std::uint32_t Flows::allocate_slots(int count) {
  auto& free = free_slots_[static_cast<std::size_t>(count)];
  if (!free.empty()) {
    const std::uint32_t base = free.back();
    free.pop_back();
    return base;
  }
  const auto base = static_cast<std::uint32_t>(slots_.size());
  slots_.resize(slots_.size() + static_cast<std::size_t>(count));
  return base;
}

void Flows::link(std::uint32_t slot, std::uint32_t r, double now) {
  Slot& s = slots_[slot];
  Resource& res = res_[r];
  s.resource = r;
  s.prev = kNone;
  s.next = res.head;
  if (res.head != kNone) slots_[res.head].prev = slot;
  res.head = slot;
  if (res.count++ == 0) {
    res.busy_since = now;
    restore_placeholder(r);
  }
  dirty_.push_back(r);
}

// A resource emptied since the last reshare has nothing to share, so its entry in the dirty
// list is a placeholder that reshare() skips without touching the resource (on large platforms
// that saves a cache miss per ended flow). Should a flow join it again before the reshare, the
// entry becomes a plain one, so that every resource still holding flows is first met at the
// same place in the list as if no placeholder had been used: components are then found from
// the same resource, in the same order, and get bit-identical rates. The placeholder's place
// is kept in `local`, free outside the filling.
void Flows::push_placeholder(std::uint32_t r) {
  res_[r].local = static_cast<std::uint32_t>(dirty_.size());
  dirty_.push_back(kPlaceholder | r);
}

void Flows::restore_placeholder(std::uint32_t r) {
  const std::uint32_t at = res_[r].local;
  if (at < dirty_.size() && dirty_[at] == (kPlaceholder | r)) dirty_[at] = r;
}

void Flows::unlink(std::uint32_t slot, double now) {
  Slot& s = slots_[slot];
  Resource& res = res_[s.resource];
  if (s.prev != kNone) {
    slots_[s.prev].next = s.next;
  } else {
    res.head = s.next;
  }
  if (s.next != kNone) slots_[s.next].prev = s.prev;
  if (--res.count == 0) {
    res.busy_total += now - res.busy_since;
    push_placeholder(s.resource);
  } else {
    dirty_.push_back(s.resource);
  }
  s.resource = kNone;
}

std::uint32_t Flows::add(const Path& path, std::uint64_t bytes, double now, std::uint32_t owner) {
  if (path.resource[0] >= res_.size()) add_memory_resources();  // memory comes alone
  const std::uint32_t f = allocate_flow();
  const std::uint32_t base = allocate_slots(path.slots);
  Flow& flow = flows_[f];
  flow.remaining = static_cast<double>(bytes);
  flow.rate = 0;
  flow.last = now;
  flow.fixed_cap = path.fixed_cap_bps;
  flow.latency = path.latency_s;
  flow.owner = owner;
  ++flow.version;
  flow.wan = path.wan;
  flow.slot_base = base;
  flow.connections = path.connections;
  flow.slots = static_cast<std::uint8_t>(path.slots);
  flow.lane = static_cast<std::int8_t>(path.lane);
  for (int i = 0; i < path.slots; ++i) {
    const std::uint32_t slot = base + static_cast<std::uint32_t>(i);
    slots_[slot].weight = path.weight[i];
    slots_[slot].flow = f;
    link(slot, path.resource[i], now);
    res_[path.resource[i]].bytes += static_cast<double>(bytes) * path.weight[i];
  }
  if (path.wan != kNone) {
    const std::uint32_t w = path.wan - net_.wan_base();
    conns_[w] += path.connections;
    max_conns_[w] = std::max(max_conns_[w], conns_[w]);
  }
  ++active_;
  peak_active_ = std::max(peak_active_, active_);
  return f;
}

void Flows::remove(std::uint32_t f, double now) {
  Flow& flow = flows_[f];
  for (std::uint32_t i = 0; i < flow.slots; ++i) unlink(flow.slot_base + i, now);
  if (flow.wan != kNone) conns_[flow.wan - net_.wan_base()] -= flow.connections;
  free_slots_[flow.slots].push_back(flow.slot_base);
  flow.slots = 0;
  ++flow.version;  // invalidates any pending finish event
  free_flows_.push_back(f);
  --active_;
}

double Flows::finish_time(std::uint32_t f) const {
  const Flow& flow = flows_[f];
  if (flow.remaining <= 0 || flow.rate == kInf) return flow.last;
  return flow.last + flow.remaining / flow.rate;
}

double Flows::busy(std::uint32_t r, double now) const {
  const Resource& res = res_[r];
  return res.count > 0 ? res.busy_total + (now - res.busy_since) : res.busy_total;
}

}  // namespace multilane::sim
