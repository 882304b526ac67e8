#include "runtime/shm/plan_cache.hpp"

namespace multilane::runtime::shm {
namespace {

// Every stage of a call starting here reuses its buffer, and no epoch starts.
bool steady(const StageClock& clock, const Geometry& geometry) {
  return clock.geometry == geometry && geometry.buffers > 0 &&
         clock.next - clock.epoch_start >= geometry.buffers;
}

// How far a plan's buffers turn when it moves to where the clock is. Stage i uses buffer
// (i - epoch start) mod buffers, so within one epoch every buffer turns by the distance mod
// buffers, which needs no division when the plan's call repeats the one before. A plan from an
// earlier epoch of the same geometry goes by its first stage's buffer.
std::uint32_t ring_turn(const ShmPlan& plan, std::uint64_t plan_epoch, const StageClock& clock) {
  const std::uint32_t buffers = clock.geometry.buffers;
  const std::uint64_t distance = clock.next - plan.first_stage;
  if (plan_epoch == clock.epoch_start && distance < buffers) {
    return static_cast<std::uint32_t>(distance);
  }
  for (const Step& step : plan.steps) {
    if (step.primitive == Primitive::LocalCopy) continue;  // no stage
    const auto slot =
        static_cast<std::uint32_t>((step.stage.index + distance - clock.epoch_start) % buffers);
    return slot >= step.stage.slot ? slot - step.stage.slot : slot + buffers - step.stage.slot;
  }
  return 0;  // no stage at all
}

// Moves a steady plan to where the clock is: every stage number shifts by the distance, and
// every stage (with the bytes it touches) to the buffer of its new number in the epoch (a
// small call's plan moves at every call, so this loop is on every small call's path).
void move_plan(ShmPlan& plan, std::uint64_t plan_epoch, const StageClock& clock) {
  const std::uint64_t distance = clock.next - plan.first_stage;
  const std::uint32_t buffers = clock.geometry.buffers;
  const std::uint32_t turn = ring_turn(plan, plan_epoch, clock);
  const std::uint64_t stride = buffer_stride(clock.geometry);
  for (Step& step : plan.steps) {
    if (step.primitive == Primitive::LocalCopy) continue;  // no stage
    Stage& stage = step.stage;
    stage.index += distance;
    stage.previous += distance;  // steady: every stage reuses its buffer
    std::uint32_t slot = stage.slot + turn;
    if (slot >= buffers) slot -= buffers;
    if (step.place == SharedPlace::DataArea) {
      step.slot_offset = step.slot_offset - stage.slot * stride + slot * stride;
    }
    stage.slot = slot;
  }
  plan.first_stage = clock.next;
}

}  // namespace

PlanCache::Entry* PlanCache::find(const CallShape& call, const Geometry& geometry) {
  const auto holds = [&](const Entry& entry) {
    return entry.used && entry.geometry == geometry && entry.call == call;
  };
  if (holds(entries_[last_hit_])) return &entries_[last_hit_];
  for (std::size_t i = 0; i < kEntries; ++i) {
    if (holds(entries_[i])) {
      last_hit_ = i;
      return &entries_[i];
    }
  }
  return nullptr;
}

const ShmPlan& PlanCache::plan_for(const CallShape& call, int local_rank, const Geometry& geometry,
                                   StageClock& clock) {
  if (!steady(clock, geometry)) {
    build_plan(call, local_rank, geometry, clock, built_);
    return built_;
  }
  if (Entry* entry = find(call, geometry)) {
    ++hits_;
    move_plan(entry->plan, entry->epoch_start, clock);
    entry->epoch_start = clock.epoch_start;
    clock.next += entry->plan.stages;
    return entry->plan;
  }
  build_plan(call, local_rank, geometry, clock, built_);
  if (built_.steps.size() > kMaxSteps) return built_;
  Entry& entry = entries_[next_victim_];
  next_victim_ = (next_victim_ + 1) % kEntries;
  entry.used = true;
  entry.call = call;
  entry.geometry = geometry;
  entry.epoch_start = clock.epoch_start;
  entry.plan = built_;
  return entry.plan;
}

}  // namespace multilane::runtime::shm
