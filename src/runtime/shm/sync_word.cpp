#include "runtime/shm/sync_word.hpp"

#include <sched.h>

#include <algorithm>

#include "runtime/shm/futex.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace multilane::runtime::shm {
namespace {

using Clock = std::chrono::steady_clock;

std::atomic_ref<std::uint32_t> atomic(std::uint32_t& field) {
  return std::atomic_ref<std::uint32_t>(field);
}

// Registers as a sleeper and sleeps unless the target was reached meanwhile.
void sleep_once(SyncWord& word, std::uint32_t target, std::chrono::nanoseconds slice) {
  atomic(word.sleepers).fetch_add(1, std::memory_order_seq_cst);
  const std::uint32_t seen = atomic(word.value).load(std::memory_order_seq_cst);
  if (!reached(seen, target)) futex_wait(&word.value, seen, slice);
  atomic(word.sleepers).fetch_sub(1, std::memory_order_seq_cst);
}

// Polls until the word reaches the target (true) or the policy's spin has passed (false).
bool poll_until_reached(SyncWord& word, std::uint32_t target, const WaitPolicy& policy) {
  return poll_until([&] { return has_reached(word, target); }, policy);
}

}  // namespace

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#endif
}

void yield_core() {
  sched_yield();
}

void publish(SyncWord& word, std::uint32_t value) {
  atomic(word.value).store(value, std::memory_order_seq_cst);
  if (atomic(word.sleepers).load(std::memory_order_seq_cst) != 0) futex_wake_all(&word.value);
}

bool count_arrival(SyncWord& word, std::uint32_t participants) {
  if (participants <= 1) return true;  // alone: the count stays 0
  if (atomic(word.arrivals).fetch_add(1, std::memory_order_acq_rel) + 1 < participants) {
    return false;
  }
  // Nobody else touches `arrivals` before the next publish, so a relaxed reset suffices.
  atomic(word.arrivals).store(0, std::memory_order_relaxed);
  return true;
}

bool arrive(SyncWord& word, std::uint32_t participants, std::uint32_t value) {
  if (!count_arrival(word, participants)) return false;
  publish(word, value);
  return true;
}

void wake_everyone(SyncWord& word) {
  futex_wake_all(&word.value);
}

bool wait_until_reached(SyncWord& word, std::uint32_t target, const WaitPolicy& policy,
                        const std::function<void()>& check) {
  if (poll_until_reached(word, target, policy)) return true;
  const auto deadline = Clock::now() + policy.timeout;
  while (true) {
    const auto now = Clock::now();
    if (now >= deadline) return has_reached(word, target);
    const auto slice = std::min<Clock::duration>(deadline - now, policy.check_interval);
    sleep_once(word, target, slice);
    if (has_reached(word, target)) return true;
    check();
  }
}

}  // namespace multilane::runtime::shm
