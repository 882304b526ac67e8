// tests/runtime/thread_all_gather.hpp — threads that play the ranks of a job all-gather text
// through memory, as the PMPI library does through an MPI communicator
// (runtime/api/exchange_join.hpp).
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

namespace multilane::testing {

// An all-gather among `size` threads, used once: each contributes its text and waits (up to
// 20 s) for all.
class ThreadAllGather {
 public:
  explicit ThreadAllGather(int size) : texts_(static_cast<std::size_t>(size)) {}
  std::vector<std::string> operator()(int rank, const std::string& mine) {
    std::unique_lock lock(mutex_);
    texts_[static_cast<std::size_t>(rank)] = mine;
    ++arrived_;
    changed_.notify_all();
    changed_.wait_for(lock, std::chrono::seconds(20), [&] { return arrived_ == texts_.size(); });
    return texts_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::string> texts_;
  std::size_t arrived_ = 0;
};

}  // namespace multilane::testing
