// runtime/api/request_state.hpp — completion of one operation, handed from the engine's driving
// thread to the user's thread.
#pragma once

#include <condition_variable>
#include <mutex>

#include "runtime/tcp/transport_error.hpp"

namespace multilane {

class RequestState {
 public:
  // Progress thread: the operation ended.
  void complete(const runtime::Outcome& outcome);
  // User thread. wait() returns the outcome once complete; the engine's inactivity timeouts
  // guarantee that every operation completes.
  runtime::Outcome wait();
  bool done() const;
  runtime::Outcome outcome() const;

 private:
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  bool done_ = false;
  runtime::Outcome outcome_;
};

}  // namespace multilane
