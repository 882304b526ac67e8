// runtime/launch/launch_signals.cpp — catching the launcher's signals into a self-pipe (see the
// header).
#include "runtime/launch/launch_signals.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <stdexcept>

namespace multilane::runtime {

namespace {

constexpr std::array<int, 4> kCaught = {SIGINT, SIGTERM, SIGHUP, SIGCHLD};

// State shared with the handler: only lock-free atomics and a descriptor.
std::atomic<bool> installed{false};
std::atomic<int> forwarded_signal{0};
std::atomic<int> child_event{0};
static_assert(std::atomic<int>::is_always_lock_free, "used in a signal handler");
int wake_pipe[2] = {-1, -1};

struct sigaction saved[kCaught.size()];
struct sigaction saved_sigpipe;

void on_signal(int sig) {
  const int saved_errno = errno;
  if (sig == SIGCHLD) {
    child_event = 1;
  } else {
    forwarded_signal = sig;
  }
  const char byte = 0;
  [[maybe_unused]] const auto written = ::write(wake_pipe[1], &byte, 1);  // full pipe: awake anyway
  errno = saved_errno;
}

}  // namespace

JobSignals::JobSignals() {
  if (installed.exchange(true)) {
    throw std::logic_error("a job is already being launched by this process");
  }
  if (::pipe2(wake_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
    installed = false;
    throw std::runtime_error(fmt::format("cannot create a pipe: {}", ::strerror(errno)));
  }
  forwarded_signal = 0;
  child_event = 0;
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART | SA_NOCLDSTOP;
  for (std::size_t i = 0; i < kCaught.size(); ++i) ::sigaction(kCaught[i], &action, &saved[i]);
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  ::sigaction(SIGPIPE, &ignore, &saved_sigpipe);
}

JobSignals::~JobSignals() {
  for (std::size_t i = 0; i < kCaught.size(); ++i) ::sigaction(kCaught[i], &saved[i], nullptr);
  ::sigaction(SIGPIPE, &saved_sigpipe, nullptr);
  ::close(wake_pipe[0]);
  ::close(wake_pipe[1]);
  wake_pipe[0] = wake_pipe[1] = -1;
  installed = false;
}

int JobSignals::wake_fd() const {
  return wake_pipe[0];
}

void JobSignals::drain() {
  char bytes[64];
  while (::read(wake_pipe[0], bytes, sizeof bytes) > 0) {
  }
}

bool JobSignals::take_child_event() {
  return child_event.exchange(0) != 0;
}

int JobSignals::take_forwarded_signal() {
  return forwarded_signal.exchange(0);
}

}  // namespace multilane::runtime
