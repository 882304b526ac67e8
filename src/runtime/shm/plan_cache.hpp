// runtime/shm/plan_cache.hpp — plans of recent calls, replayed instead of built again.
//
// Building a plan costs 50-200 ns (vectors, the Table 1 decisions), as much as the whole 8-byte
// collective it describes. build_plan() is a pure function of the call, the rank, the geometry
// and the stage clock, and once every pipeline buffer of the current geometry has been used
// every stage reuses its buffer: a later call of the same shape has the same plan, moved round
// the ring of buffers, its stage numbers shifted by the distance and every stage (with its
// bytes) in the buffer that many places on. PlanCache::plan_for() moves a cached plan so (in
// place) and gives exactly the plan build_plan() would build (plan_cache_test compares both
// over long random sequences of calls); it advances the clock the same way.
//
// Only small plans are kept (large calls are dominated by their copies), in a few entries
// replaced round-robin; one cache per group, so the rank is fixed.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "runtime/shm/plan.hpp"

namespace multilane::runtime::shm {

class PlanCache {
 public:
  static constexpr std::size_t kEntries = 8;
  static constexpr std::size_t kMaxSteps = 64;

  // The plan build_plan(call, local_rank, geometry, clock, plan) would build, from the cache
  // when possible; valid until the next call.
  const ShmPlan& plan_for(const CallShape& call, int local_rank, const Geometry& geometry,
                          StageClock& clock);

  std::uint64_t hits() const { return hits_; }

 private:
  struct Entry {
    bool used = false;
    CallShape call;
    Geometry geometry;
    std::uint64_t epoch_start = 0;  // of the stage clock when the plan was built or last moved
    ShmPlan plan;
  };

  Entry* find(const CallShape& call, const Geometry& geometry);

  // The counters before the entries: a call in a loop touches them and the first entry.
  std::size_t last_hit_ = 0;  // the entry looked at first: calls in a loop repeat one shape
  std::size_t next_victim_ = 0;
  std::uint64_t hits_ = 0;
  std::array<Entry, kEntries> entries_;
  ShmPlan built_;  // the plan of a call that is not cached
};

}  // namespace multilane::runtime::shm
