// tests/runtime/thread_ranks.hpp — threads that play the ranks of a job, joined by
// join_by_exchange() (runtime/api/exchange_join.hpp): they all-gather text through memory, as
// the PMPI library does through an MPI communicator.
#pragma once

#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "runtime/api/communicator_impl.hpp"  // job_platform
#include "runtime/api/exchange_join.hpp"

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

// Runs `body(rank, communicator)` on `size` threads, each a rank of one job on the default
// platform (its id `tag` and the process id); returns each rank's error ("" when none).
inline std::vector<std::string> on_thread_ranks(
    int size, std::uint64_t tag, const std::function<void(int, Communicator&)>& body) {
  ThreadAllGather exchange(size);
  std::vector<std::string> errors(static_cast<std::size_t>(size));
  std::vector<std::thread> threads;
  for (int rank = 0; rank < size; ++rank) {
    threads.emplace_back([&, rank] {
      try {
        runtime::ExchangeJob job;
        job.rank = rank;
        job.size = size;
        job.job_id = (tag << 56) | static_cast<std::uint64_t>(::getpid());
        job.secret = runtime::JobSecret::from_text("thread ranks test secret");
        job.platform = job_platform("", size);
        job.all_gather = [&, rank](const std::string& mine) { return exchange(rank, mine); };
        Communicator comm = runtime::join_by_exchange(std::move(job));
        body(rank, comm);
      } catch (const std::exception& e) {
        errors[static_cast<std::size_t>(rank)] = e.what();
      }
    });
  }
  for (auto& thread : threads) thread.join();
  return errors;
}

}  // namespace multilane::testing
