#include "emu/process.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "multilane/emu.hpp"

namespace multilane::emu {

namespace {

using Clock = std::chrono::steady_clock;

// argv as the char* array execvp wants; built before fork (no allocation in the child).
std::vector<char*> c_argv(const std::vector<std::string>& argv) {
  std::vector<char*> out;
  for (const auto& a : argv) out.push_back(const_cast<char*>(a.c_str()));
  out.push_back(nullptr);
  return out;
}

struct Pipe {
  int read = -1, write = -1;
  Pipe() {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
      throw EmuError(fmt::format("pipe: {}", std::strerror(errno)));
    }
    read = fds[0];
    write = fds[1];
  }
  ~Pipe() {
    close_read();
    close_write();
  }
  void close_read() {
    if (read >= 0) ::close(read);
    read = -1;
  }
  void close_write() {
    if (write >= 0) ::close(write);
    write = -1;
  }
};

int wait_status(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

int remaining_ms(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return static_cast<int>(std::max<long>(0, left.count()));
}

// Feeds `input` to the child and collects its output until it closes stdout or the deadline.
// Returns false on timeout.
bool exchange(Pipe& in, Pipe& out, std::string_view input, std::string& output,
              Clock::time_point deadline) {
  fcntl(in.write, F_SETFL, O_NONBLOCK);
  if (input.empty()) in.close_write();
  std::size_t written = 0;
  char buffer[4096];
  while (out.read >= 0) {
    pollfd fds[2] = {{out.read, POLLIN, 0}, {in.write, POLLOUT, 0}};
    const int n = poll(fds, in.write >= 0 ? 2 : 1, remaining_ms(deadline));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    if (in.write >= 0 && (fds[1].revents & (POLLOUT | POLLERR | POLLHUP))) {
      const ssize_t w = ::write(in.write, input.data() + written, input.size() - written);
      if (w > 0) written += static_cast<std::size_t>(w);
      if (w < 0 && errno != EAGAIN) written = input.size();  // reader gone: stop feeding
      if (written == input.size()) in.close_write();
    }
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      const ssize_t r = ::read(out.read, buffer, sizeof buffer);
      if (r > 0) output.append(buffer, static_cast<std::size_t>(r));
      if (r == 0 || (r < 0 && errno != EINTR && errno != EAGAIN)) out.close_read();
    }
  }
  return true;
}

}  // namespace

std::string join_command(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) out += (out.empty() ? "" : " ") + a;
  return out;
}

CommandResult run_command(const std::vector<std::string>& argv, std::string_view input,
                          std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  auto args = c_argv(argv);
  Pipe in, out;
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) throw EmuError(fmt::format("fork: {}", std::strerror(errno)));
  if (pid == 0) {
    // A helper must not outlive a killed `up`: it would go on building after `down`.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    dup2(in.read, STDIN_FILENO);
    dup2(out.write, STDOUT_FILENO);
    dup2(out.write, STDERR_FILENO);
    execvp(args[0], args.data());
    dprintf(STDERR_FILENO, "cannot run %s: %s\n", args[0], std::strerror(errno));
    _exit(127);
  }
  in.close_read();
  out.close_write();
  CommandResult result;
  if (!exchange(in, out, input, result.output, deadline)) {
    kill(pid, SIGKILL);
    wait_status(pid);
    throw EmuError(fmt::format("`{}` did not finish within {} ms; killed", join_command(argv),
                               timeout.count()));
  }
  result.status = wait_status(pid);
  return result;
}

std::string run_checked(const std::vector<std::string>& argv, std::string_view input,
                        std::chrono::milliseconds timeout) {
  CommandResult r = run_command(argv, input, timeout);
  if (r.status != 0) {
    while (!r.output.empty() && r.output.back() == '\n') r.output.pop_back();
    throw EmuError(fmt::format("`{}`: exit status {}: {}", join_command(argv), r.status, r.output));
  }
  return r.output;
}

// ---- daemons ----

namespace {

std::string log_tail(const std::string& path) {
  std::ifstream in(path);
  std::string line, tail;
  std::vector<std::string> lines;
  while (std::getline(in, line)) lines.push_back(line);
  const std::size_t first = lines.size() > 5 ? lines.size() - 5 : 0;
  for (std::size_t i = first; i < lines.size(); ++i) tail += (tail.empty() ? "" : " | ") + lines[i];
  return tail.empty() ? "(log is empty)" : tail;
}

// Reads one line from the daemon's ready pipe: returns the line, "" on EOF, nullopt on timeout.
std::optional<std::string> read_ready_line(int fd, Clock::time_point deadline) {
  std::string line;
  char c;
  while (true) {
    pollfd p{fd, POLLIN, 0};
    const int n = poll(&p, 1, remaining_ms(deadline));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::nullopt;
    const ssize_t r = ::read(fd, &c, 1);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0 || c == '\n') return line;
    line.push_back(c);
  }
}

[[noreturn]] void become_daemon(const std::vector<char*>& args, int log_fd, int ready_write,
                                int ready_fd) {
  setsid();
  if (fork() != 0) _exit(0);  // the daemon is reparented to init; the spawner reaps this one
  const int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  dup2(null_fd, STDIN_FILENO);
  dup2(log_fd, STDOUT_FILENO);
  dup2(log_fd, STDERR_FILENO);
  if (ready_write == ready_fd) {
    fcntl(ready_fd, F_SETFD, 0);
  } else {
    dup2(ready_write, ready_fd);  // dup2 clears close-on-exec on the new descriptor
  }
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  execv(args[0], args.data());
  dprintf(ready_fd, "cannot run %s: %s\n", args[0], std::strerror(errno));
  _exit(127);
}

}  // namespace

pid_t spawn_daemon(const std::vector<std::string>& argv, const std::string& log_path, int ready_fd,
                   std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  auto args = c_argv(argv);
  const int log_fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) throw EmuError(fmt::format("{}: {}", log_path, std::strerror(errno)));
  Pipe ready;
  const pid_t child = fork();
  if (child < 0) {
    ::close(log_fd);
    throw EmuError(fmt::format("fork: {}", std::strerror(errno)));
  }
  if (child == 0) become_daemon(args, log_fd, ready.write, ready_fd);
  ::close(log_fd);
  ready.close_write();
  wait_status(child);
  const auto line = read_ready_line(ready.read, deadline);
  pid_t pid = 0;
  if (line && std::sscanf(line->c_str(), "ready %d", &pid) == 1 && pid > 0) return pid;
  const std::string what = fmt::format("`{}`", join_command(argv));
  if (!line) {
    throw EmuError(fmt::format("{} did not report ready within {} ms; log: {}", what,
                               timeout.count(), log_tail(log_path)));
  }
  throw EmuError(fmt::format("{} failed to start: {}; log: {}", what,
                             line->empty() ? "exited" : *line, log_tail(log_path)));
}

// ---- process queries ----

bool process_alive(pid_t pid) {
  if (pid <= 0 || kill(pid, 0) != 0) return false;
  std::ifstream stat(fmt::format("/proc/{}/stat", pid));
  std::string text;
  std::getline(stat, text);
  const auto close_paren = text.rfind(')');
  if (close_paren == std::string::npos || close_paren + 2 >= text.size()) return false;
  const char state = text[close_paren + 2];
  return state != 'Z' && state != 'X';
}

std::vector<std::string> process_command_line(pid_t pid) {
  std::ifstream in(fmt::format("/proc/{}/cmdline", pid), std::ios::binary);
  std::vector<std::string> words;
  std::string word;
  while (std::getline(in, word, '\0')) words.push_back(word);
  return words;
}

std::vector<pid_t> terminate_processes(const std::vector<pid_t>& pids,
                                       std::chrono::milliseconds grace) {
  auto still_alive = [&] {
    std::vector<pid_t> alive;
    for (pid_t p : pids) {
      if (process_alive(p)) alive.push_back(p);
    }
    return alive;
  };
  for (int round = 0; round < 2; ++round) {
    for (pid_t p : still_alive()) kill(p, round == 0 ? SIGTERM : SIGKILL);
    const auto deadline = Clock::now() + grace;
    while (!still_alive().empty() && Clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  return still_alive();
}

std::string own_executable() {
  char path[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) throw EmuError(fmt::format("readlink /proc/self/exe: {}", std::strerror(errno)));
  return std::string(path, static_cast<std::size_t>(n));
}

}  // namespace multilane::emu
