// tests/shm/group_steps.hpp — runs a ShmGroup call's plan step by step, which no caller of the
// group may do (ShmGroup::run() keeps the books of every call): as a rank that dies mid-call or
// writes slowly, and polling each step instead of waiting in it. ShmGroup's friend.
#pragma once

#include <sched.h>

#include <chrono>
#include <span>
#include <stdexcept>
#include <thread>

#include "runtime/shm/shm_group.hpp"

namespace multilane::runtime::shm {

struct ShmGroupSteps {
  // The first half of a bcast's steps; the call is left unfinished.
  static void first_half_of_bcast(ShmGroup& group, std::span<std::byte> buffer, int root) {
    const ShmPlan& plan = group.prepare(Collective::Bcast, {}, buffer, root);
    for (std::size_t i = 0; i < plan.steps.size() / 2; ++i) {
      group.endpoint().run(plan.steps[i], {buffer.data(), buffer.data()});
    }
  }

  // Every step of the call, each after a pause of `pause` (a rank that writes slowly).
  static void run_slowly(ShmGroup& group, Collective collective, std::span<const std::byte> send,
                         std::span<std::byte> recv, int root, std::chrono::microseconds pause) {
    const ShmPlan& plan = group.prepare(collective, send, recv, root);
    for (const Step& step : plan.steps) {
      std::this_thread::sleep_for(pause);
      group.endpoint().run(step, step_buffers(collective, send, recv));
    }
  }

  // Every step of the call, each polled with startable() until `deadline`, then performed.
  static void run_polling(ShmGroup& group, Collective collective, std::span<const std::byte> send,
                          std::span<std::byte> recv, int root,
                          std::chrono::steady_clock::time_point deadline) {
    const ShmPlan& plan = group.prepare(collective, send, recv, root);
    for (const Step& step : plan.steps) {
      while (!group.endpoint().startable(step)) {
        if (std::chrono::steady_clock::now() > deadline) throw std::runtime_error("stuck");
        sched_yield();
      }
      group.endpoint().perform(step, step_buffers(collective, send, recv));
    }
  }
};

}  // namespace multilane::runtime::shm
