// runtime/shm/futex.hpp — the two futex calls the shared-memory layer needs.
//
// The word lives in a MAP_SHARED mapping, so the process-shared (not FUTEX_PRIVATE) operations
// are used: the kernel keys the wait queue by the physical page, and ranks that mapped the
// segment at different addresses still meet. Linux only.
#pragma once

#include <chrono>
#include <cstdint>

namespace multilane::runtime::shm {

// Sleeps while *word == expected, at most `timeout`. Returns early on a wake-up, a signal, or
// when *word already differs (the caller re-checks its condition in every case).
void futex_wait(std::uint32_t* word, std::uint32_t expected, std::chrono::nanoseconds timeout);
// Wakes every process sleeping on `word`.
void futex_wake_all(std::uint32_t* word);

}  // namespace multilane::runtime::shm
