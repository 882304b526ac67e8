#include "shm/fork_ranks.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstring>
#include <exception>
#include <thread>

namespace multilane::runtime::shm::testing {
namespace {

constexpr std::size_t kMaxMessage = 3000;  // below PIPE_BUF * a few: never blocks the child

[[noreturn]] void child_main(int rank, int write_end, const std::function<void(int)>& fn) {
  int status = 0;
  std::string message;
  try {
    fn(rank);
  } catch (const std::exception& error) {
    message = error.what();
    status = 1;
  } catch (...) {
    message = "unknown exception";
    status = 1;
  }
  message.resize(std::min(message.size(), kMaxMessage));
  if (!message.empty() && write(write_end, message.data(), message.size()) < 0) status = 2;
  close(write_end);
  _exit(status);
}

std::string read_all(int fd) {
  std::string text;
  char chunk[512];
  ssize_t got = 0;
  while ((got = read(fd, chunk, sizeof chunk)) > 0) text.append(chunk, static_cast<size_t>(got));
  return text;
}

}  // namespace

std::vector<RankOutcome> run_ranks(int ranks, const std::function<void(int)>& fn,
                                   std::chrono::milliseconds limit) {
  std::vector<RankOutcome> outcomes(static_cast<std::size_t>(ranks));
  std::vector<int> read_ends(static_cast<std::size_t>(ranks), -1);
  for (int r = 0; r < ranks; ++r) {
    int ends[2];
    if (pipe2(ends, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
    const pid_t pid = fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {
      close(ends[0]);
      for (int earlier = 0; earlier < r; ++earlier) close(read_ends[earlier]);
      child_main(r, ends[1], fn);
    }
    close(ends[1]);
    read_ends[r] = ends[0];
    outcomes[r].pid = pid;
  }
  const auto deadline = std::chrono::steady_clock::now() + limit;
  int running = ranks;
  std::vector<bool> done(static_cast<std::size_t>(ranks), false);
  while (running > 0) {
    const bool late = std::chrono::steady_clock::now() >= deadline;
    for (int r = 0; r < ranks; ++r) {
      if (done[r]) continue;
      if (late) {
        kill(outcomes[r].pid, SIGKILL);
        outcomes[r].timed_out = true;
      }
      int status = 0;
      if (waitpid(outcomes[r].pid, &status, late ? 0 : WNOHANG) != outcomes[r].pid) continue;
      done[r] = true;
      --running;
      outcomes[r].exited = WIFEXITED(status);
      outcomes[r].threw = WIFEXITED(status) && WEXITSTATUS(status) != 0;
      outcomes[r].signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    }
    if (running > 0) std::this_thread::sleep_for(std::chrono::microseconds(500));
  }
  for (int r = 0; r < ranks; ++r) {
    outcomes[r].message = read_all(read_ends[r]);
    close(read_ends[r]);
  }
  return outcomes;
}

std::uint64_t unique_job_id() {
  static std::uint64_t counter = 0;
  return static_cast<std::uint64_t>(getpid()) << 24 | ++counter;
}

std::string describe(const std::vector<RankOutcome>& outcomes) {
  std::string text;
  for (std::size_t r = 0; r < outcomes.size(); ++r) {
    const RankOutcome& o = outcomes[r];
    text += "\n  rank " + std::to_string(r) + ": ";
    if (o.timed_out) text += "killed at the time limit; ";
    if (o.signal != 0) text += "killed by signal " + std::to_string(o.signal) + "; ";
    text += o.ok() ? "ok" : (o.threw ? "threw: " + o.message : "");
  }
  return text;
}

}  // namespace multilane::runtime::shm::testing
