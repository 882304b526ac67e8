// wan/worker_threads.hpp — threads that each serve one connection (a handshake, a copy session)
// and end by themselves; the owner joins the finished ones now and then (reap) and all of them
// when it stops (join_all). Thread-safe.
#pragma once

#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <thread>

namespace multilane::wan {

class WorkerThreads {
 public:
  WorkerThreads() = default;
  ~WorkerThreads() { join_all(); }
  WorkerThreads(const WorkerThreads&) = delete;
  WorkerThreads& operator=(const WorkerThreads&) = delete;

  // Runs `work` on a thread of its own.
  void start(std::function<void()> work);
  // Joins the threads whose work returned; returns how many are still running.
  std::size_t reap();
  // Joins every thread (the caller first makes their work return, e.g. by shutting sockets).
  void join_all();

 private:
  struct Worker {
    std::thread thread;
    std::shared_ptr<bool> done;  // guarded by mutex_
  };
  std::mutex mutex_;
  std::list<Worker> workers_;
};

}  // namespace multilane::wan
