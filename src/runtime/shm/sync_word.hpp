// runtime/shm/sync_word.hpp — a counter in shared memory that ranks wait on: poll, then futex.
//
// A SyncWord holds a 32-bit `value` that only grows (modulo 2^32) and is the futex word, a count
// of the ranks sleeping on it, and an arrival counter for phases with several participants.
// Values are compared as a signed 32-bit difference (reached()), so they may wrap around as long
// as waiters are never more than 2^31 steps behind.
//
// Waking is cheap when nobody sleeps: publish() stores the value and issues FUTEX_WAKE only if a
// sleeper is registered. The sleeper registers, then re-reads the value before sleeping; both
// sides use sequentially consistent operations, so either the waker sees the sleeper or the
// sleeper sees the new value (no lost wake-up). A rank killed while sleeping leaves the count
// too high, which only costs later wakers a system call.
//
// Data written before publish()/arrive() is visible to a rank that saw the value reached
// (release / acquire).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>

namespace multilane::runtime::shm {

struct alignas(8) SyncWord {
  std::uint32_t value = 0;     // the futex word
  std::uint32_t sleepers = 0;  // ranks inside futex_wait on `value`
  std::uint32_t arrivals = 0;  // participants arrived in the current phase
  std::uint64_t tag = 0;       // what the participants of the phase add up (call fingerprints)
};

inline bool reached(std::uint32_t value, std::uint32_t target) {
  return static_cast<std::int32_t>(value - target) >= 0;
}

inline std::uint32_t load_value(SyncWord& word) {
  return std::atomic_ref<std::uint32_t>(word.value).load(std::memory_order_acquire);
}

inline bool has_reached(SyncWord& word, std::uint32_t target) {
  return reached(load_value(word), target);
}

// One polling pause: tells the core that it spins (a pause instruction on x86).
void cpu_relax();
// Lets another thread run on this core (sched_yield).
void yield_core();

// Sets the value and wakes its sleepers.
void publish(SyncWord& word, std::uint32_t value);

// Counts one of `participants` in; true for the last one, which has reset the count. The count
// must be back at 0 before anyone arrives for the next phase, which callers guarantee by having
// the last one publish a value that the next phase's participants wait for.
bool count_arrival(SyncWord& word, std::uint32_t participants);
// count_arrival(), and the last one publishes `value`. Returns true for the last one.
bool arrive(SyncWord& word, std::uint32_t participants, std::uint32_t value);

// Wakes every sleeper, whether registered or not (used when a group breaks).
void wake_everyone(SyncWord& word);

struct WaitPolicy {
  std::chrono::nanoseconds spin{0};  // polling before the first sleep
  // Poll with sched_yield() instead of a pause: on a core shared with other ranks, the rank
  // waited for gets the core at once instead of after the poller's time slice.
  bool yield_while_polling = false;
  std::chrono::milliseconds timeout{60'000};     // the whole wait
  std::chrono::milliseconds check_interval{20};  // longest sleep between two checks
};

// Polls until `done()` is true (true) or the policy's spin has passed (false), as a wait polls
// its word: a pause between polls (or sched_yield, policy.yield_while_polling), the clock read
// every 64 polls (a pause is ~10-150 cycles, the clock ~20 ns).
template <typename Done>
bool poll_until(Done done, const WaitPolicy& policy) {
  if (done()) return true;
  if (policy.spin.count() <= 0) return false;
  const auto end = std::chrono::steady_clock::now() + policy.spin;
  while (true) {
    for (int i = 0; i < 64; ++i) {
      if (done()) return true;
      if (policy.yield_while_polling) {
        yield_core();
      } else {
        cpu_relax();
      }
    }
    if (std::chrono::steady_clock::now() >= end) return done();
  }
}

// Waits until `word` reaches `target`. Polls for `policy.spin`, then sleeps on the futex in
// slices of at most `policy.check_interval`, calling `check()` after every slice (it throws to
// abandon the wait: broken group, dead peer). Returns false when `policy.timeout` passed.
bool wait_until_reached(SyncWord& word, std::uint32_t target, const WaitPolicy& policy,
                        const std::function<void()>& check);

}  // namespace multilane::runtime::shm
