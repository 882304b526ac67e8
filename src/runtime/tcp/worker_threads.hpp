// runtime/tcp/worker_threads.hpp — threads that each serve one connection (an authentication
// handshake, a connect, a copy session) and end by themselves: the one worker pool of the
// engine, the WAN gate and the file server.
//
// Connecting and the handshake are short, blocking, deadline-bounded steps (tcp_connect.hpp,
// auth.hpp): on threads of their own they keep an event loop free, and a stranger that connects
// and never speaks delays nobody. start() joins the workers that finished; stop() shuts down
// every socket a worker registered with watch() (so its blocking reads and writes return at
// once) and joins them all: a bounded stop even while a peer hangs in the middle of a
// handshake. Thread-safe. A fork-join loop uses one as well: start helpers, work, join_all().
#pragma once

#include <cstddef>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

namespace multilane::runtime {

class WorkerThreads {
 public:
  WorkerThreads() = default;
  ~WorkerThreads();
  WorkerThreads(const WorkerThreads&) = delete;
  WorkerThreads& operator=(const WorkerThreads&) = delete;

  // Runs `work` on a thread of its own, after joining the finished ones. After stop() it does
  // not, and returns false (the caller then releases what the work would have).
  bool start(std::function<void()> work);
  // Joins the threads whose work returned; returns how many are still running.
  std::size_t reap();
  // A worker's socket, shut down by stop(); unwatch it before handing it over (or closing it).
  void watch(int fd);
  void unwatch(int fd);
  // Shuts down the watched sockets and joins every thread; the pool takes new work after.
  void join_all();
  // The same, and later start()s are ignored.
  void stop();

 private:
  struct Worker {
    std::thread thread;
    std::shared_ptr<bool> done;  // guarded by mutex_
  };
  // Moves the finished workers out (under mutex_), to be joined outside the lock.
  std::list<Worker> take_finished();

  std::mutex mutex_;
  std::list<Worker> workers_;
  std::set<int> watched_;
  bool stopping_ = false;
};

}  // namespace multilane::runtime
