// runtime/launch/launcher.cpp — launch_job(): start the ranks, serve their rendezvous, watch them
// (see launcher.hpp).
//
// The supervisor sleeps in poll(2) on a self-pipe that signal handlers write to (SIGCHLD: a
// rank changed state; SIGINT/SIGTERM/SIGHUP: forward to the ranks) and, with tagged output, on
// the ranks' output pipes. After a failure it moves through phases, each with a deadline:
// Draining (the others may finish within timeout + grace), Terminating (SIGTERM sent, grace
// to go), Killing (SIGKILL sent).
#include "runtime/launch/launcher.hpp"

#include <fmt/format.h>
#include <signal.h>
#include <sodium.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <stdexcept>

#include "multilane/errors.hpp"
#include "runtime/launch/job_env.hpp"
#include "runtime/launch/launch_output.hpp"
#include "runtime/launch/launch_platform.hpp"
#include "runtime/launch/launch_process.hpp"
#include "runtime/launch/launch_signals.hpp"
#include "runtime/launch/rendezvous.hpp"
#include "runtime/tcp/io_wait.hpp"

extern char** environ;

namespace multilane::runtime {

namespace {

constexpr std::chrono::milliseconds kMaxStoreHandshake{10'000};
constexpr std::chrono::milliseconds kFullReapEvery{1'000};  // in case a SIGCHLD was missed
constexpr std::chrono::milliseconds kOutputDrain{1'000};    // after the last rank ended
constexpr int kExecFailedCode = 127;
constexpr std::size_t kRanksNamed = 16;  // in "ranks 0, 1, ... still running"

void check_spec(const LaunchSpec& spec) {
  if (spec.ranks < 1 || spec.ranks > kMaxLaunchRanks) {
    throw UsageError(
        fmt::format("the number of ranks must be 1..{}, got {}", kMaxLaunchRanks, spec.ranks));
  }
  if (spec.command.empty()) throw UsageError("no program to launch: give PROGRAM [ARGS...]");
  if (spec.timeout.count() <= 0) throw UsageError("the timeout must be > 0");
  if (spec.grace.count() < 0) throw UsageError("the grace period must not be negative");
}

// Each rank holds a rendezvous connection open at the launcher, and with tagged output two
// pipes: raise the soft descriptor limit when a large job needs it.
void ensure_descriptors(const LaunchSpec& spec) {
  const rlim_t needed = static_cast<rlim_t>(spec.ranks) * (spec.tag_output ? 3 : 1) + 64;
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur >= needed) return;
  if (limit.rlim_max != RLIM_INFINITY && limit.rlim_max < needed) {
    throw UsageError(fmt::format(
        "launching {} ranks needs about {} file descriptors but the limit is {} (ulimit -Hn)",
        spec.ranks, needed, limit.rlim_max));
  }
  limit.rlim_cur = needed;
  ::setrlimit(RLIMIT_NOFILE, &limit);
}

struct JobIdentity {
  std::uint64_t id = 0;
  std::string secret;  // 64 hex digits of 32 random bytes
};

JobIdentity fresh_identity() {
  if (sodium_init() < 0) throw std::runtime_error("libsodium failed to initialise");
  JobIdentity identity;
  randombytes_buf(&identity.id, sizeof identity.id);
  unsigned char bytes[32];
  randombytes_buf(bytes, sizeof bytes);
  char hex[2 * sizeof bytes + 1];
  sodium_bin2hex(hex, sizeof hex, bytes, sizeof bytes);
  identity.secret = hex;
  return identity;
}

// The launcher's environment without the contract's variables, which the job sets itself.
std::map<std::string, std::string> inherited_environment() {
  std::map<std::string, std::string> variables;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    const auto equals = text.find('=');
    if (equals == std::string_view::npos) continue;
    std::string name(text.substr(0, equals));
    if (!is_contract_variable(name)) variables[name] = std::string(text.substr(equals + 1));
  }
  return variables;
}

std::string rank_list(const std::vector<int>& ranks) {
  std::string text = ranks.size() == 1 ? "rank " : "ranks ";
  for (std::size_t i = 0; i < ranks.size() && i < kRanksNamed; ++i) {
    text += fmt::format("{}{}", i == 0 ? "" : ", ", ranks[i]);
  }
  if (ranks.size() > kRanksNamed) text += fmt::format(", ... ({} in all)", ranks.size());
  return text;
}

// What each rank runs and with which environment, all decided before anything starts.
struct RankPlan {
  std::vector<std::string> argv;
  std::vector<std::string> environment;
  int unit = -1;  // processing unit to bind to, -1: unbound
};

std::vector<RankPlan> plan_ranks(const LaunchSpec& spec, const std::string& rendezvous,
                                 const JobIdentity& identity) {
  const auto inherited = inherited_environment();
  JobEnvironment job;
  job.size = spec.ranks;
  job.rendezvous = rendezvous;
  job.job_id = identity.id;
  job.secret = identity.secret;
  if (!spec.platform_file.empty()) {
    job.platform_file = std::filesystem::absolute(spec.platform_file).string();
  }
  job.timeout = spec.timeout;
  job.explain = spec.explain;

  std::vector<RankPlan> plans(spec.ranks);
  const std::vector<int> units = rank_units_here(spec.ranks, spec.binding);
  for (int rank = 0; rank < spec.ranks; ++rank) {
    job.rank = rank;
    plans[rank].unit = units[rank];
    auto variables = inherited;
    for (auto& [name, value] : job.to_environment()) variables[name] = value;
    for (const auto& [name, value] : spec.extra_environment) variables[name] = value;
    RankPlan& plan = plans[rank];
    for (const auto& [name, value] : variables) plan.environment.push_back(name + "=" + value);
    if (spec.command_prefix) plan.argv = spec.command_prefix(rank);
    plan.argv.insert(plan.argv.end(), spec.command.begin(), spec.command.end());
    const auto path = variables.find("PATH");
    plan.argv[0] = resolve_program(plan.argv[0], path == variables.end() ? "" : path->second);
  }
  return plans;
}

class Supervisor {
 public:
  Supervisor(const LaunchSpec& spec, std::vector<RankPlan> plans)
      : spec_(spec), plans_(std::move(plans)) {
    result_.ranks.resize(spec.ranks);
    for (int r = 0; r < spec.ranks; ++r) result_.ranks[r].rank = r;
  }
  Supervisor(const Supervisor&) = delete;
  Supervisor& operator=(const Supervisor&) = delete;

  // Only does something when run() was cut short by an exception: no rank may outlive us.
  ~Supervisor() {
    for (const int rank : running_ranks()) {
      ::kill(-result_.ranks[rank].pid, SIGKILL);
      ::waitpid(result_.ranks[rank].pid, nullptr, 0);
    }
  }

  LaunchResult run() {
    start_all();
    auto last_full_reap = Clock::now();
    while (running_ > 0) {
      wait_for_events();
      if (const int sig = signals_.take_forwarded_signal()) forward(sig);
      if (signals_.take_child_event() || Clock::now() - last_full_reap >= kFullReapEvery) {
        reap();
        last_full_reap = Clock::now();
      }
      if (Clock::now() >= deadline_) advance_phase();
    }
    output_.finish(kOutputDrain);
    if (first_failure_code_) {
      result_.exit_code = *first_failure_code_;
    } else if (interrupted_by_ != 0) {
      result_.exit_code = 128 + interrupted_by_;
    }
    return std::move(result_);
  }

 private:
  enum class Phase { Running, Draining, Terminating, Killing };

  void report(const std::string& line) {
    result_.failures.push_back(line);
    if (spec_.report) {
      spec_.report(line);
    } else {
      std::fprintf(stderr, "multilane launch: %s\n", line.c_str());
    }
  }

  void start_all() {
    for (int rank = 0; rank < spec_.ranks; ++rank) {
      try {
        result_.ranks[rank].pid = start_one(rank);
        ++running_;
      } catch (const std::exception& e) {
        report(fmt::format("rank {} could not be started: {}", rank, e.what()));
        if (!first_failure_code_) first_failure_code_ = kExecFailedCode;
        terminate_now();
        return;
      }
    }
  }

  int start_one(int rank) {
    RankProcess process{plans_[rank].argv, plans_[rank].environment, -1, -1, plans_[rank].unit};
    if (!spec_.tag_output) return start_rank_process(process);
    const TaggedOutput::ChildEnds ends = output_.add_rank(rank);
    process.stdout_fd = ends.stdout_fd;
    process.stderr_fd = ends.stderr_fd;
    struct CloseChildEnds {  // the child has its copies; ours would keep the pipes open
      TaggedOutput::ChildEnds ends;
      ~CloseChildEnds() {
        ::close(ends.stdout_fd);
        ::close(ends.stderr_fd);
      }
    } close_after_start{ends};
    return start_rank_process(process);
  }

  void wait_for_events() {
    std::vector<pollfd> fds{{signals_.wake_fd(), POLLIN, 0}};
    output_.poll_fds(fds);
    auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - Clock::now());
    wait = std::clamp(wait, std::chrono::milliseconds{0}, kFullReapEvery);
    ::poll(fds.data(), fds.size(), static_cast<int>(wait.count()));
    signals_.drain();
    output_.service(fds, 1);
  }

  // Reaps every rank that ended. Before reaping, whatever else runs in its process group is
  // killed: the rank's pid, a zombie until reaped, cannot be reused in the meantime.
  void reap() {
    for (RankOutcome& outcome : result_.ranks) {
      if (outcome.pid <= 0 || !is_running(outcome)) continue;
      siginfo_t info{};
      if (::waitid(P_PID, static_cast<id_t>(outcome.pid), &info, WEXITED | WNOHANG | WNOWAIT) !=
              0 ||
          info.si_pid != outcome.pid) {
        continue;
      }
      ::kill(-outcome.pid, SIGKILL);
      int status = 0;
      ::waitpid(outcome.pid, &status, 0);
      ended(outcome, status);
    }
  }

  static bool is_running(const RankOutcome& outcome) {
    return outcome.exit_code == -1 && outcome.signal == 0;
  }

  void ended(RankOutcome& outcome, int status) {
    --running_;
    if (WIFSIGNALED(status)) {
      outcome.signal = WTERMSIG(status);
    } else {
      outcome.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
    }
    if (outcome.exit_code == 0) return;
    report(fmt::format("rank {} (pid {}) {}", outcome.rank, outcome.pid,
                       describe_wait_status(status)));
    if (!first_failure_code_) {
      first_failure_code_ = outcome.signal != 0 ? 128 + outcome.signal : outcome.exit_code;
    }
    if (phase_ == Phase::Running) {
      phase_ = Phase::Draining;
      deadline_ = Clock::now() + spec_.timeout + spec_.grace;
    }
  }

  std::vector<int> running_ranks() const {
    std::vector<int> ranks;
    for (const RankOutcome& outcome : result_.ranks) {
      if (outcome.pid > 0 && is_running(outcome)) ranks.push_back(outcome.rank);
    }
    return ranks;
  }

  void signal_running(int sig) {
    for (const int rank : running_ranks()) ::kill(-result_.ranks[rank].pid, sig);
  }

  void forward(int sig) {
    report(fmt::format("received {}: forwarding it to the ranks", signal_name(sig)));
    if (interrupted_by_ == 0) interrupted_by_ = sig;
    signal_running(sig);
    if (phase_ < Phase::Terminating) {
      phase_ = Phase::Terminating;
      deadline_ = Clock::now() + spec_.grace;
    }
  }

  void terminate_now() {
    signal_running(SIGTERM);
    phase_ = Phase::Terminating;
    deadline_ = Clock::now() + spec_.grace;
  }

  void advance_phase() {
    const auto running = running_ranks();
    if (phase_ == Phase::Draining) {
      if (!running.empty()) {
        report(fmt::format("{} still running {} after the first failure: sending SIGTERM",
                           rank_list(running), seconds_text(spec_.timeout + spec_.grace)));
      }
      terminate_now();
    } else if (phase_ == Phase::Terminating) {
      if (!running.empty()) {
        report(fmt::format("{} still running {} after SIGTERM: sending SIGKILL", rank_list(running),
                           seconds_text(spec_.grace)));
      }
      signal_running(SIGKILL);
      phase_ = Phase::Killing;
      deadline_ = Clock::time_point::max();
    }
  }

  const LaunchSpec& spec_;
  std::vector<RankPlan> plans_;
  JobSignals signals_;  // before any rank starts, so no SIGCHLD is missed
  TaggedOutput output_;
  LaunchResult result_;
  int running_ = 0;
  Phase phase_ = Phase::Running;
  Clock::time_point deadline_ = Clock::time_point::max();
  std::optional<int> first_failure_code_;
  int interrupted_by_ = 0;
};

}  // namespace

LaunchResult launch_job(const LaunchSpec& spec) {
  check_spec(spec);
  if (!spec.platform_file.empty()) platform_for_job(spec.platform_file, spec.ranks);
  ensure_descriptors(spec);
  const JobIdentity identity = fresh_identity();
  RendezvousServerOptions store_options;
  store_options.handshake_timeout = std::min(spec.timeout, kMaxStoreHandshake);
  RendezvousServer store(spec.rendezvous_bind, identity.id, JobSecret::from_text(identity.secret),
                         store_options);
  Supervisor supervisor(spec, plan_ranks(spec, store.address(), identity));
  return supervisor.run();
}

}  // namespace multilane::runtime
