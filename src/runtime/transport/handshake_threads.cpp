// runtime/transport/handshake_threads.cpp — see handshake_threads.hpp.
#include "runtime/transport/handshake_threads.hpp"

#include <sys/socket.h>

namespace multilane::runtime {

HandshakeThreads::~HandshakeThreads() {
  stop();
}

void HandshakeThreads::start(std::function<void()> job) {
  std::list<Worker> finished;
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return;
    for (auto it = workers_.begin(); it != workers_.end();) {
      auto next = std::next(it);
      if (*it->done) finished.splice(finished.end(), workers_, it);
      it = next;
    }
    auto done = std::make_shared<bool>(false);
    workers_.push_back(Worker{std::thread([this, done, job = std::move(job)] {
                                job();
                                std::lock_guard lock(mutex_);
                                *done = true;
                              }),
                              done});
  }
  for (auto& worker : finished) worker.thread.join();
}

void HandshakeThreads::watch(int fd) {
  std::lock_guard lock(mutex_);
  watched_.insert(fd);
  if (stopping_) ::shutdown(fd, SHUT_RDWR);
}

void HandshakeThreads::unwatch(int fd) {
  std::lock_guard lock(mutex_);
  watched_.erase(fd);
}

bool HandshakeThreads::stopping() const {
  std::lock_guard lock(mutex_);
  return stopping_;
}

void HandshakeThreads::stop() {
  std::list<Worker> workers;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    for (int fd : watched_) ::shutdown(fd, SHUT_RDWR);
    workers.swap(workers_);
  }
  for (auto& worker : workers) worker.thread.join();
}

}  // namespace multilane::runtime
