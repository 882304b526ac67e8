// wan/daemon_signals.cpp — signals of the WAN daemons (see daemon_signals.hpp).
#include "wan/daemon_signals.hpp"

#include <pthread.h>

#include <ctime>

namespace multilane::wan {

namespace {
sigset_t handled_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGUSR1);
  return set;
}
}  // namespace

DaemonSignals::DaemonSignals(std::function<void()> report, std::function<void()> stop,
                             std::optional<std::chrono::milliseconds> duration)
    : report_(std::move(report)), stop_(std::move(stop)), duration_(duration) {
  const sigset_t set = handled_signals();
  pthread_sigmask(SIG_BLOCK, &set, &previous_);
  thread_ = std::thread([this, started = std::chrono::steady_clock::now()] { wait(started); });
}

DaemonSignals::~DaemonSignals() {
  finished_ = true;
  thread_.join();
  pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
}

void DaemonSignals::wait(std::chrono::steady_clock::time_point started) {
  const sigset_t set = handled_signals();
  bool stopped = false;
  auto stop_once = [&] {
    if (!stopped && stop_) stop_();
    stopped = true;
  };
  while (!finished_) {
    const timespec tick{0, 100'000'000};  // re-check the duration and the end ten times a second
    const int number = sigtimedwait(&set, nullptr, &tick);
    if (number == SIGUSR1 && report_) report_();
    if (number == SIGINT || number == SIGTERM) stop_once();
    if (duration_ && std::chrono::steady_clock::now() - started >= *duration_) stop_once();
  }
}

}  // namespace multilane::wan
