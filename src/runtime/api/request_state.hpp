// runtime/api/request_state.hpp — completion of one operation, handed from the engine's driving
// thread to the user's thread.
#pragma once

#include <condition_variable>
#include <mutex>
#include <string>

namespace multilane {

class RequestState {
 public:
  // Progress thread: the operation ended ("" on success).
  void complete(const std::string& error);
  // User thread. wait() returns the error ("" on success) once complete; the engine's
  // inactivity timeouts guarantee that every operation completes.
  std::string wait();
  bool done() const;
  std::string error() const;

 private:
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  bool done_ = false;
  std::string error_;
};

}  // namespace multilane
