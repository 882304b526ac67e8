// mpi/dispatch_counters.cpp — per-thread route counters (dispatch_counters.hpp).
#include "mpi/dispatch_counters.hpp"

#include <algorithm>
#include <atomic>
#include <iterator>
#include <mutex>
#include <vector>

namespace multilane::mpi {

namespace {

struct ThreadCounts;

struct Registry {
  std::mutex mutex;
  std::vector<const ThreadCounts*> live;
  std::array<unsigned long long, kCounted> ended{};  // of threads that exited
};

Registry& registry() {
  static auto* instance = new Registry;  // never destroyed: threads may end after the statics
  return *instance;
}

// One thread's counters. Only their thread writes them; a reader on another thread loads them,
// hence the atomics (relaxed: a load and a store, no locked instruction).
struct ThreadCounts {
  std::array<std::atomic<unsigned long long>, kCounted> values{};

  ThreadCounts() {
    Registry& r = registry();
    const std::lock_guard lock(r.mutex);
    r.live.push_back(this);
  }
  ~ThreadCounts() {
    Registry& r = registry();
    const std::lock_guard lock(r.mutex);
    for (std::size_t i = 0; i < kCounted; ++i) r.ended[i] += values[i].load();
    std::erase(r.live, this);
  }
  ThreadCounts(const ThreadCounts&) = delete;
  ThreadCounts& operator=(const ThreadCounts&) = delete;
};

thread_local ThreadCounts mine;

}  // namespace

void count(Counted what) {
  std::atomic<unsigned long long>& value = mine.values[static_cast<std::size_t>(what)];
  value.store(value.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

std::array<unsigned long long, kCounted> counted_so_far() {
  Registry& r = registry();
  const std::lock_guard lock(r.mutex);
  std::array<unsigned long long, kCounted> sums = r.ended;
  for (const ThreadCounts* thread : r.live) {
    for (std::size_t i = 0; i < kCounted; ++i) {
      sums[i] += thread->values[i].load(std::memory_order_relaxed);
    }
  }
  return sums;
}

}  // namespace multilane::mpi

extern "C" int multilane_mpi_counters(unsigned long long* values, int count) {
  const auto all = multilane::mpi::counted_so_far();
  const int total = static_cast<int>(std::size(all));
  for (int i = 0; i < count && i < total; ++i) values[i] = all[static_cast<std::size_t>(i)];
  return total;
}
