// runtime/transport/handshake_threads.hpp — blocking connection set-up off the engine's driving
// thread.
//
// Connecting and the authentication handshake are short, blocking, deadline-bounded steps
// (tcp_connect.hpp, auth.hpp). Running them on threads of their own keeps the driving thread
// free, and a stranger that connects and never speaks delays nobody. stop() shuts down every
// socket a job registered with watch() (so its blocking reads return at once) and joins all
// threads: a bounded stop even while a peer hangs in the middle of a handshake.
#pragma once

#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

namespace multilane::runtime {

class HandshakeThreads {
 public:
  HandshakeThreads() = default;
  ~HandshakeThreads();
  HandshakeThreads(const HandshakeThreads&) = delete;
  HandshakeThreads& operator=(const HandshakeThreads&) = delete;

  // Runs `job` on a new thread (finished threads are reaped here). Ignored after stop().
  void start(std::function<void()> job);
  // A job's socket, shut down by stop(); unwatch it before handing it over.
  void watch(int fd);
  void unwatch(int fd);
  bool stopping() const;
  void stop();

 private:
  struct Worker {
    std::thread thread;
    std::shared_ptr<bool> done;  // guarded by mutex_
  };
  mutable std::mutex mutex_;
  std::list<Worker> workers_;
  std::set<int> watched_;
  bool stopping_ = false;
};

}  // namespace multilane::runtime
