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
  std::vector<ThreadCounts*> live;
  std::array<unsigned long long, kCounted> ended{};  // of threads that exited
};

Registry& registry() {
  static auto* instance = new Registry;  // never destroyed: threads may end after the statics
  return *instance;
}

// What a thread counts after its counters were folded away (an MPI call from a thread_local's
// destructor): counted with every thread's, never freed.
ThreadCounts& after_exit();

// One thread's counters. Only their thread writes them; a reader on another thread loads them,
// hence the atomics (relaxed: a load and a store, no locked instruction). Made on the thread's
// first count and kept in the registry; `Unregister` folds them into `ended` when the thread
// exits, so a count itself touches no guarded thread_local (one TLS load and an increment).
struct ThreadCounts {
  std::array<std::atomic<unsigned long long>, kCounted> values{};
};

[[gnu::tls_model("initial-exec")]] constinit thread_local ThreadCounts* mine = nullptr;

struct Unregister {
  ThreadCounts* counts = nullptr;
  ~Unregister() {
    ThreadCounts& sink = after_exit();  // takes the registry's lock when new
    {
      Registry& r = registry();
      const std::lock_guard lock(r.mutex);
      for (std::size_t i = 0; i < kCounted; ++i) r.ended[i] += counts->values[i].load();
      std::erase(r.live, counts);
    }
    delete counts;
    mine = &sink;
  }
};

ThreadCounts& after_exit() {
  static ThreadCounts* sink = [] {
    auto* counts = new ThreadCounts;
    Registry& r = registry();
    const std::lock_guard lock(r.mutex);
    r.live.push_back(counts);
    return counts;
  }();
  return *sink;
}

[[gnu::noinline]] ThreadCounts* register_this_thread() {
  thread_local Unregister at_exit;  // constructed here, on the thread's first count only
  auto* counts = new ThreadCounts;
  {
    Registry& r = registry();
    const std::lock_guard lock(r.mutex);
    r.live.push_back(counts);
  }
  at_exit.counts = counts;
  mine = counts;
  return counts;
}

}  // namespace

void count(Counted what) {
  ThreadCounts* counts = mine ? mine : register_this_thread();
  std::atomic<unsigned long long>& value = counts->values[static_cast<std::size_t>(what)];
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
