// tests/shm/group_steps.hpp — calls of a ShmGroup run step by step (ShmStepwiseCall): as a rank
// that stops half-way or writes slowly, and polling each step instead of waiting in it.
#pragma once

#include <sched.h>

#include <chrono>
#include <span>
#include <stdexcept>
#include <thread>

#include "runtime/shm/shm_group.hpp"

namespace multilane::runtime::shm::testing {

// The first half of a bcast's steps; the call is left unfinished, as by a rank that dies.
inline void first_half_of_bcast(ShmGroup& group, std::span<std::byte> buffer, int root) {
  ShmStepwiseCall call = group.begin(Collective::Bcast, {}, buffer, root);
  for (std::size_t i = 0; i < call.steps() / 2; ++i) call.run(i);
}

// Every step of the call, each after a pause of `pause` (a rank that writes slowly).
inline void run_slowly(ShmGroup& group, Collective collective, std::span<const std::byte> send,
                       std::span<std::byte> recv, int root, std::chrono::microseconds pause) {
  ShmStepwiseCall call = group.begin(collective, send, recv, root);
  for (std::size_t i = 0; i < call.steps(); ++i) {
    std::this_thread::sleep_for(pause);
    call.run(i);
  }
  call.finish();
}

// Every step of the call, each polled with startable() until `deadline`, then performed.
inline void run_polling(ShmGroup& group, Collective collective, std::span<const std::byte> send,
                        std::span<std::byte> recv, int root,
                        std::chrono::steady_clock::time_point deadline) {
  ShmStepwiseCall call = group.begin(collective, send, recv, root);
  for (std::size_t i = 0; i < call.steps(); ++i) {
    while (!call.startable(i)) {
      if (std::chrono::steady_clock::now() > deadline) throw std::runtime_error("stuck");
      sched_yield();
    }
    call.perform(i);
  }
  call.finish();
}

}  // namespace multilane::runtime::shm::testing
