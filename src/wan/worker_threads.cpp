// wan/worker_threads.cpp — see worker_threads.hpp.
#include "wan/worker_threads.hpp"

namespace multilane::wan {

void WorkerThreads::start(std::function<void()> work) {
  std::lock_guard lock(mutex_);
  auto done = std::make_shared<bool>(false);
  workers_.push_back({std::thread([this, work = std::move(work), done] {
                        work();
                        std::lock_guard worker_lock(mutex_);
                        *done = true;
                      }),
                      done});
}

std::size_t WorkerThreads::reap() {
  std::lock_guard lock(mutex_);
  for (auto it = workers_.begin(); it != workers_.end();) {
    if (*it->done) {
      it->thread.join();
      it = workers_.erase(it);
    } else {
      ++it;
    }
  }
  return workers_.size();
}

void WorkerThreads::join_all() {
  std::list<Worker> workers;
  {
    std::lock_guard lock(mutex_);
    workers.swap(workers_);
  }
  for (Worker& w : workers) w.thread.join();
}

}  // namespace multilane::wan
