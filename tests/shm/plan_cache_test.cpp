// PlanCache (runtime/shm/plan_cache.hpp) gives the very plans build_plan() builds, and advances
// the stage clock the same way, over long random sequences of calls: repeated shapes (hits at
// every phase of the buffer ring), geometry changes (new epochs), zero-byte calls and barriers.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "runtime/shm/layout.hpp"
#include "runtime/shm/plan.hpp"
#include "runtime/shm/plan_cache.hpp"

namespace multilane::runtime::shm {
namespace {

CallShape random_call(std::mt19937& random, int p) {
  CallShape call;
  if (const auto kind = random() % 6; kind < 5) call.collective = kGroupCollectives[kind];
  call.local_size = p;
  call.root = static_cast<int>(random() % static_cast<unsigned>(p));
  const std::uint64_t sizes[] = {0, 1, 8, 64, 100, 300, 5000};
  call.size = sizes[random() % std::size(sizes)];
  call.single_copy = call.collective && call.size >= 300 && random() % 4 == 0;
  return call;
}

TEST(ShmPlanCache, GivesTheBuiltPlanForEveryCallOfLongRandomSequences) {
  const std::vector<Geometry> geometries{{1024, 4}, {1024, 4}, {1024, 4}, {4096, 16}, {64, 1}};
  std::mt19937 random(2026);
  std::uint64_t hits = 0;
  for (int run = 0; run < 40; ++run) {
    const int p = 1 + static_cast<int>(random() % 6);
    const int rank = static_cast<int>(random() % static_cast<unsigned>(p));
    // A few shapes repeat, as in a real program's loop; the geometry changes now and then.
    std::vector<CallShape> shapes;
    for (int i = 0; i < 5; ++i) shapes.push_back(random_call(random, p));
    Geometry geometry = geometries[0];
    StageClock built_clock, cached_clock;
    PlanCache cache;
    for (int i = 0; i < 300; ++i) {
      if (random() % 50 == 0) geometry = geometries[random() % geometries.size()];
      CallShape call = shapes[random() % shapes.size()];
      if (call.single_copy &&
          static_cast<std::uint64_t>(p) * kExposedBytes > geometry.buffer_size) {
        call.single_copy = false;  // as ShmGroup decides: no room for the exposed entries
      }
      ShmPlan built;
      build_plan(call, rank, geometry, built_clock, built);
      const ShmPlan& cached = cache.plan_for(call, rank, geometry, cached_clock);
      ASSERT_EQ(cached.steps, built.steps) << "run " << run << ", call " << i;
      ASSERT_EQ(cached.first_stage, built.first_stage);
      ASSERT_EQ(cached.stages, built.stages);
      ASSERT_EQ(cached_clock.next, built_clock.next);
      ASSERT_EQ(cached_clock.epoch_start, built_clock.epoch_start);
      ASSERT_EQ(cached_clock.epochs, built_clock.epochs);
    }
    hits += cache.hits();
  }
  EXPECT_GT(hits, 5000u);  // most calls are served from the cache
}

}  // namespace
}  // namespace multilane::runtime::shm
