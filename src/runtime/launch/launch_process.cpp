// runtime/launch/launch_process.cpp — fork + exec of one rank (see launch_process.hpp).
#include "runtime/launch/launch_process.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <stdexcept>
#include <string_view>

#include "multilane/errors.hpp"

namespace multilane::runtime {

namespace {

bool is_executable_file(const std::string& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode) &&
         ::access(path.c_str(), X_OK) == 0;
}

// Pointers into `strings` with the terminating nullptr execve wants.
std::vector<char*> c_array(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (const std::string& s : strings) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

// ---- in the child, between fork and exec: async-signal-safe calls only ----------------------

void reset_signals() {
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  sigemptyset(&default_action.sa_mask);
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig != SIGKILL && sig != SIGSTOP) ::sigaction(sig, &default_action, nullptr);
  }
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
}

[[noreturn]] void fail_in_child(int error_pipe) {
  const int error = errno;
  [[maybe_unused]] const auto written = ::write(error_pipe, &error, sizeof error);
  ::_exit(127);
}

[[noreturn]] void become_rank(const RankProcess& process, char* const* argv, char* const* envp,
                              const cpu_set_t* unit, pid_t launcher, int error_pipe) {
  reset_signals();
  if (unit) ::sched_setaffinity(0, sizeof *unit, unit);  // refused: the rank runs unbound
  ::setpgid(0, 0);
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) fail_in_child(error_pipe);
  if (::getppid() != launcher) ::_exit(127);  // the launcher died before prctl took effect
  const int null = ::open("/dev/null", O_RDONLY);
  if (null < 0 || ::dup2(null, STDIN_FILENO) < 0) fail_in_child(error_pipe);
  if (process.stdout_fd >= 0 && ::dup2(process.stdout_fd, STDOUT_FILENO) < 0) {
    fail_in_child(error_pipe);
  }
  if (process.stderr_fd >= 0 && ::dup2(process.stderr_fd, STDERR_FILENO) < 0) {
    fail_in_child(error_pipe);
  }
  ::execve(argv[0], argv, envp);
  fail_in_child(error_pipe);
}

}  // namespace

std::string resolve_program(const std::string& program, const std::string& path) {
  if (program.empty()) throw UsageError("cannot execute '': the program name is empty");
  if (program.find('/') != std::string::npos) {
    const auto refuse = [&](std::string_view why) {
      return UsageError(fmt::format("cannot execute '{}': {}", program, why));
    };
    struct stat info {};
    if (::stat(program.c_str(), &info) != 0) throw refuse(::strerror(errno));
    if (!S_ISREG(info.st_mode)) throw refuse("not a regular file");
    if (::access(program.c_str(), X_OK) != 0) throw refuse(::strerror(errno));
    return program;
  }
  std::string_view rest = path;
  while (true) {
    const auto colon = rest.find(':');
    const std::string_view directory = rest.substr(0, colon);
    // An empty PATH entry means the working directory.
    const std::string candidate =
        fmt::format("{}/{}", directory.empty() ? "." : directory, program);
    if (is_executable_file(candidate)) return candidate;
    if (colon == std::string_view::npos) break;
    rest.remove_prefix(colon + 1);
  }
  throw UsageError(fmt::format("cannot execute '{}': not found in PATH", program));
}

int start_rank_process(const RankProcess& process) {
  if (process.argv.empty()) throw std::invalid_argument("start_rank_process: empty argv");
  const auto argv = c_array(process.argv);
  const auto envp = c_array(process.environment);
  cpu_set_t unit;
  CPU_ZERO(&unit);
  const bool bound = process.unit >= 0 && process.unit < CPU_SETSIZE;
  if (bound) CPU_SET(process.unit, &unit);
  const cpu_set_t* bind_to = bound ? &unit : nullptr;
  int error_pipe[2];
  if (::pipe2(error_pipe, O_CLOEXEC) != 0) {
    throw std::runtime_error(fmt::format("cannot create a pipe: {}", ::strerror(errno)));
  }
  const pid_t launcher = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(error_pipe[0]);
    become_rank(process, argv.data(), envp.data(), bind_to, launcher, error_pipe[1]);
  }
  const int fork_error = errno;
  ::close(error_pipe[1]);
  if (pid < 0) {
    ::close(error_pipe[0]);
    throw std::runtime_error(fmt::format("fork failed: {}", ::strerror(fork_error)));
  }
  ::setpgid(pid, pid);  // also here, so the group exists before anyone signals it
  int exec_error = 0;
  ssize_t got = 0;
  do {
    got = ::read(error_pipe[0], &exec_error, sizeof exec_error);  // 0: exec closed the pipe
  } while (got < 0 && errno == EINTR);
  ::close(error_pipe[0]);
  if (got > 0) {
    ::waitpid(pid, nullptr, 0);  // it _exits at once
    throw std::runtime_error(
        fmt::format("cannot execute '{}': {}", process.argv[0], ::strerror(exec_error)));
  }
  return pid;
}

std::string describe_wait_status(int status) {
  if (WIFEXITED(status)) return fmt::format("exited with code {}", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    return fmt::format("was killed by signal {} ({}){}", WTERMSIG(status),
                       signal_name(WTERMSIG(status)), WCOREDUMP(status) ? " (core dumped)" : "");
  }
  return fmt::format("ended with wait status 0x{:x}", status);
}

std::string signal_name(int signal) {
  const char* abbreviation = ::sigabbrev_np(signal);
  if (abbreviation == nullptr) return fmt::format("signal {}", signal);
  return fmt::format("SIG{}", abbreviation);
}

}  // namespace multilane::runtime
