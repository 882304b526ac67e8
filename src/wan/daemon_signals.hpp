// wan/daemon_signals.hpp — how the WAN daemons (relay, router, serve) react to signals.
//
// Construct it before starting any other thread: it blocks SIGINT, SIGTERM and SIGUSR1 in the
// calling thread (threads started later inherit the mask) and waits for them on a thread of
// its own, so the handlers may do anything (print, post to an event loop): SIGUSR1 calls
// `report`; SIGINT, SIGTERM or the end of `duration` (when given) call `stop`, once. The
// destructor ends the waiting thread and restores the signal mask.
#pragma once

#include <signal.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <optional>
#include <thread>

namespace multilane::wan {

class DaemonSignals {
 public:
  DaemonSignals(std::function<void()> report, std::function<void()> stop,
                std::optional<std::chrono::milliseconds> duration);
  ~DaemonSignals();
  DaemonSignals(const DaemonSignals&) = delete;
  DaemonSignals& operator=(const DaemonSignals&) = delete;

 private:
  void wait(std::chrono::steady_clock::time_point started);

  std::function<void()> report_;
  std::function<void()> stop_;
  std::optional<std::chrono::milliseconds> duration_;
  sigset_t previous_{};
  std::atomic<bool> finished_{false};
  std::thread thread_;
};

}  // namespace multilane::wan
