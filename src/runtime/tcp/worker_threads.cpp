// runtime/tcp/worker_threads.cpp — see worker_threads.hpp.
#include "runtime/tcp/worker_threads.hpp"

#include <sys/socket.h>

#include <iterator>

namespace multilane::runtime {

WorkerThreads::~WorkerThreads() {
  stop();
}

std::list<WorkerThreads::Worker> WorkerThreads::take_finished() {
  std::list<Worker> finished;
  for (auto it = workers_.begin(); it != workers_.end();) {
    const auto next = std::next(it);
    if (*it->done) finished.splice(finished.end(), workers_, it);
    it = next;
  }
  return finished;
}

bool WorkerThreads::start(std::function<void()> work) {
  std::list<Worker> finished;
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return false;
    finished = take_finished();
    auto done = std::make_shared<bool>(false);
    workers_.push_back(Worker{std::thread([this, done, work = std::move(work)] {
                                work();
                                std::lock_guard worker_lock(mutex_);
                                *done = true;
                              }),
                              done});
  }
  for (Worker& worker : finished) worker.thread.join();
  return true;
}

std::size_t WorkerThreads::reap() {
  std::list<Worker> finished;
  std::size_t running = 0;
  {
    std::lock_guard lock(mutex_);
    finished = take_finished();
    running = workers_.size();
  }
  for (Worker& worker : finished) worker.thread.join();
  return running;
}

void WorkerThreads::watch(int fd) {
  std::lock_guard lock(mutex_);
  watched_.insert(fd);
  if (stopping_) ::shutdown(fd, SHUT_RDWR);
}

void WorkerThreads::unwatch(int fd) {
  std::lock_guard lock(mutex_);
  watched_.erase(fd);
}

void WorkerThreads::join_all() {
  std::list<Worker> workers;
  {
    std::lock_guard lock(mutex_);
    for (int fd : watched_) ::shutdown(fd, SHUT_RDWR);
    workers.swap(workers_);
  }
  for (Worker& worker : workers) worker.thread.join();
}

void WorkerThreads::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  join_all();
}

}  // namespace multilane::runtime
