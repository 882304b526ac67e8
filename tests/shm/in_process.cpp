#include "shm/in_process.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <optional>
#include <random>

#include "runtime/shm/call_record.hpp"
#include "runtime/shm/endpoint.hpp"
#include "runtime/shm/flagged_lines.hpp"
#include "runtime/shm/layout.hpp"
#include "runtime/shm/shm_group.hpp"
#include "shm/collective_data.hpp"

namespace multilane::runtime::shm::testing {
namespace {

struct FreeDeleter {
  void operator()(std::byte* memory) const { std::free(memory); }
};

struct RankState {
  std::size_t call = 0;  // index of the current call; == calls.size() when done
  bool entered = false;
  std::size_t step = 0;
  StageClock clock;
  ShmPlan plan;
  RankBuffers buffers;
  std::uint64_t serial = 0;
  CallInfo call_info;
};

std::uint32_t call_seed(std::uint32_t seed, std::size_t call) {
  return seed * 1000u + static_cast<std::uint32_t>(call);
}

// A writer in flagged lines stamps them and then arrives at `filled` (endpoint.cpp): real
// readers may see the stamps, read and release the buffer in between. The first half alone,
// as the endpoint does it; perform() later stamps again, alike, and arrives.
bool stamps_first(const Step& step) {
  return is_sync(step.primitive) && step.role == SyncRole::Writer &&
         step.place == SharedPlace::FlaggedLines && step.length > 0;
}
void stamp_only(const SegmentView& view, const Step& step, const CallInfo& call) {
  FlaggedLine* lines = view.lines.data() + std::size_t{step.stage.slot} * kFlaggedLinesPerSlot;
  const auto stage_value = static_cast<std::uint32_t>(step.stage.index + 1);
  stamp_lines(lines, step.slot_offset, step.length, line_flag(stage_value, fingerprint(call)));
}

}  // namespace

ShmPlan plan_of(const CallShape& shape, int rank, const Geometry& geometry) {
  StageClock clock;
  ShmPlan plan;
  build_plan(shape, rank, geometry, clock, plan);
  return plan;
}

std::string run_in_process(int ranks, const std::vector<PlannedCall>& calls, std::uint32_t seed) {
  std::uint64_t capacity = 64;
  for (const PlannedCall& call : calls) capacity = std::max(capacity, data_bytes(call.geometry));
  const std::size_t bytes = segment_bytes(ranks, capacity);
  std::unique_ptr<std::byte, FreeDeleter> memory(
      static_cast<std::byte*>(std::aligned_alloc(4096, bytes)));
  std::fill_n(memory.get(), bytes, std::byte{0});
  const SegmentView view = view_segment(memory.get(), ranks, capacity);
  std::vector<ShmEndpoint> endpoints;
  for (int r = 0; r < ranks; ++r) {
    view.ranks[static_cast<std::size_t>(r)].pid = getpid();
    endpoints.emplace_back(view, r, WaitPolicy{}, fmt::format("in-process rank {}", r));
  }
  std::vector<RankState> state(static_cast<std::size_t>(ranks));
  // Stage numbers of every call, as the first rank to plan it saw them.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> stages_of_call(calls.size(), {~0ull, 0});
  std::mt19937 random(seed);

  const auto enter = [&](int r) -> std::string {
    RankState& s = state[static_cast<std::size_t>(r)];
    const PlannedCall& call = calls[s.call];
    const CallShape& shape = call.shape;
    const std::uint32_t cseed = call_seed(seed, s.call);
    if (shape.collective) {
      s.buffers = buffers_of(*shape.collective, r, ranks, shape.root, shape.size, cseed);
    } else {
      s.buffers = {};
    }
    CallInfo info{++s.serial, shape.collective, shape.root, shape.size, call.geometry};
    endpoints[static_cast<std::size_t>(r)].enter_call(info);
    s.call_info = info;
    build_plan(shape, r, call.geometry, s.clock, s.plan);
    auto& seen = stages_of_call[s.call];
    const std::pair<std::uint64_t, std::uint64_t> mine{s.plan.first_stage, s.plan.stages};
    if (seen.first == ~0ull) seen = mine;
    if (seen != mine) {
      return fmt::format("call {}: rank {} plans stages {}+{}, another rank {}+{}", s.call, r,
                         mine.first, mine.second, seen.first, seen.second);
    }
    s.entered = true;
    s.step = 0;
    return {};
  };
  const auto finish = [&](int r) -> std::string {
    RankState& s = state[static_cast<std::size_t>(r)];
    const CallShape& shape = calls[s.call].shape;
    std::string problem;
    if (shape.collective) {
      problem = check_result(*shape.collective, r, ranks, shape.root, shape.size,
                             call_seed(seed, s.call), s.buffers.recv);
    }
    s.entered = false;
    ++s.call;
    return problem.empty() ? problem : fmt::format("call {}: {}", s.call - 1, problem);
  };

  while (true) {
    std::vector<int> movable;
    bool all_done = true;
    for (int r = 0; r < ranks; ++r) {
      RankState& s = state[static_cast<std::size_t>(r)];
      if (s.call == calls.size()) continue;
      all_done = false;
      if (!s.entered || s.step == s.plan.steps.size() ||
          endpoints[static_cast<std::size_t>(r)].startable(s.plan.steps[s.step])) {
        movable.push_back(r);
      }
    }
    if (all_done) return {};
    if (movable.empty()) {
      std::string where;
      for (int r = 0; r < ranks; ++r) {
        const RankState& s = state[static_cast<std::size_t>(r)];
        if (s.call == calls.size()) continue;
        const Step& step = s.plan.steps[s.step];
        where += fmt::format("; rank {} in call {} at step {} ({} stage {} slot {})", r, s.call,
                             s.step, to_string(step.primitive), step.stage.index, step.stage.slot);
      }
      return "deadlock" + where;
    }
    const int r = movable[random() % movable.size()];
    RankState& s = state[static_cast<std::size_t>(r)];
    if (!s.entered) {
      if (auto problem = enter(r); !problem.empty()) return problem;
      continue;
    }
    if (s.step == s.plan.steps.size()) {
      if (auto problem = finish(r); !problem.empty()) return problem;
      continue;
    }
    const Step& step = s.plan.steps[s.step];
    if (stamps_first(step) && random() % 2 == 0) {
      stamp_only(view, step, s.call_info);
      continue;
    }
    const std::optional<Collective> collective = calls[s.call].shape.collective;
    const ShmBuffers buffers =
        collective ? step_buffers(*collective, s.buffers.send, s.buffers.recv) : ShmBuffers{};
    endpoints[static_cast<std::size_t>(r)].perform(s.plan.steps[s.step++], buffers);
  }
}

}  // namespace multilane::runtime::shm::testing
