#include "simgrid_child.hpp"

#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <stdexcept>

#include "multilane/errors.hpp"

namespace multilane::simgrid_peer {

namespace {

// The first byte of the child's message says how the work ended.
constexpr char kOk = 'O';
constexpr char kUsage = 'U';
constexpr char kFailed = 'F';

void write_all(int fd, const std::string& data) {
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the parent is gone: nothing left to tell
    done += static_cast<std::size_t>(n);
  }
}

[[noreturn]] void child_main(int fd, const std::function<std::string()>& work) {
  std::string message;
  try {
    message = kOk + work();
  } catch (const UsageError& e) {
    message = kUsage + std::string(e.what());
  } catch (const std::exception& e) {
    message = kFailed + std::string(e.what());
  }
  write_all(fd, message);
  ::close(fd);
  // Skip destructors and atexit handlers: the parent owns stdio buffers and temporary state.
  ::_exit(0);
}

// Reads until end of file or the deadline; false when the deadline passed first.
bool read_until(int fd, std::chrono::steady_clock::time_point deadline, std::string& out) {
  char buffer[4096];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 1 << 30)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) throw std::runtime_error(fmt::format("poll: {}", std::strerror(errno)));
    if (ready == 0) continue;
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw std::runtime_error(fmt::format("read: {}", std::strerror(errno)));
    if (n == 0) return true;
    out.append(buffer, static_cast<std::size_t>(n));
  }
}

}  // namespace

ChildOutcome run_in_child(const std::function<std::string()>& work, double timeout_s) {
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error(fmt::format("pipe: {}", std::strerror(errno)));
  std::fflush(nullptr);  // or the child would print the parent's buffered output again
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw std::runtime_error(fmt::format("fork: {}", std::strerror(errno)));
  }
  if (pid == 0) {
    ::close(fds[0]);
    child_main(fds[1], work);
  }
  ::close(fds[1]);
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(timeout_s));
  std::string message;
  bool answered = false;
  try {
    answered = read_until(fds[0], deadline, message);
  } catch (...) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    ::close(fds[0]);
    throw;
  }
  ::close(fds[0]);
  if (!answered) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  ChildOutcome outcome;
  if (!answered) {
    outcome.text =
        fmt::format("the SimGrid run did not finish within {} s and was killed", timeout_s);
  } else if (WIFSIGNALED(status)) {
    outcome.text = fmt::format("the SimGrid run died of signal {} ({})", WTERMSIG(status),
                               strsignal(WTERMSIG(status)));
  } else if (message.empty()) {
    outcome.text = fmt::format("the SimGrid run exited with status {} without an answer",
                               WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  } else {
    outcome.status = message[0] == kOk      ? ChildOutcome::Status::Ok
                     : message[0] == kUsage ? ChildOutcome::Status::UsageError
                                            : ChildOutcome::Status::Failed;
    outcome.text = message.substr(1);
  }
  return outcome;
}

}  // namespace multilane::simgrid_peer
