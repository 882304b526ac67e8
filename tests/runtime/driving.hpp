// tests/runtime/driving.hpp — running a piece of work on an Engine's driving thread from a test.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <thread>

#include "runtime/outcome_text.hpp"
#include "runtime/transport/engine.hpp"

namespace multilane::runtime::testing {

// Runs `work` on `engine`'s driving thread (begin_call, end_call), taking the engine as soon as
// its progress thread lets go of it, for at most 5 s.
inline void on_driving_thread(Engine& engine, const std::function<void()>& work) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  Outcome outcome;
  while (!engine.run_blocking(
      [&](Completion done) {
        work();
        done(kSucceeded);
      },
      outcome)) {
    ASSERT_LT(std::chrono::steady_clock::now(), give_up) << "the engine stayed busy";
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

}  // namespace multilane::runtime::testing
