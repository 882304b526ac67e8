// Tests of launch_job() (runtime/launch/launcher.hpp) with small shell ranks: the environment every
// rank sees, failures reported by rank and cause, the others terminated after the grace,
// signal forwarding, tagged output, and no rank process surviving the launcher.
#include "runtime/launch/launcher.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <future>
#include <sstream>
#include <thread>

#include "multilane/errors.hpp"
#include "runtime/launch/job_env.hpp"
#include "runtime/launch/rendezvous.hpp"

namespace multilane::runtime {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "multilane-launch-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Waits (at most 10 s) until the file exists and is not empty.
bool wait_for_file(const std::string& path) {
  for (int i = 0; i < 1000; ++i) {
    std::error_code ignored;
    if (fs::file_size(path, ignored) > 0 && !ignored) return true;
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

// Gone: no such process, or a zombie nobody reaps (a reparented orphan in a container).
bool process_gone_now(int pid) {
  if (::kill(pid, 0) != 0) return errno == ESRCH;
  const std::string stat = read_text(fmt::format("/proc/{}/stat", pid));
  const auto paren = stat.rfind(')');
  return paren != std::string::npos && stat.size() > paren + 2 && stat[paren + 2] == 'Z';
}

// A SIGKILL takes effect when its target next runs, after kill() returned: a process bound to
// a busy core may take a moment. Gone within 2 s, or it survived.
bool process_gone(int pid) {
  const auto deadline = std::chrono::steady_clock::now() + 2s;
  while (!process_gone_now(pid)) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(5ms);
  }
  return true;
}

// A spec of `ranks` shell ranks running `script`, with short timeouts and captured reports.
struct ShellJob {
  LaunchSpec spec;
  std::vector<std::string> reports;
  ShellJob(int ranks, const std::string& script) {
    spec.ranks = ranks;
    spec.command = {"/bin/sh", "-c", script};
    spec.timeout = 300ms;
    spec.grace = 300ms;
    spec.report = [this](const std::string& line) { reports.push_back(line); };
  }
};

void expect_all_gone(const LaunchResult& result) {
  for (const RankOutcome& outcome : result.ranks) {
    if (outcome.pid > 0) {
      EXPECT_TRUE(process_gone(outcome.pid)) << "rank " << outcome.rank;
    }
  }
}

TEST(Launcher, RanksSeeTheirEnvironment) {
  TempDir dir;
  ShellJob job(4,
               "echo \"$MULTILANE_RANK $MULTILANE_SIZE $MULTILANE_JOB_ID ${#MULTILANE_SECRET} "
               "$MULTILANE_TIMEOUT $MULTILANE_EXPLAIN $MULTILANE_PLATFORM $EXTRA_VARIABLE "
               "${MULTILANE_RENDEZVOUS_SERVER:-none}\" > " +
                   dir.path().string() + "/rank-$MULTILANE_RANK; echo $MULTILANE_RENDEZVOUS > " +
                   dir.path().string() + "/rendezvous-$MULTILANE_RANK");
  job.spec.timeout = 2500ms;
  job.spec.explain = true;
  job.spec.platform_file =
      std::string(MULTILANE_SOURCE_DIR) + "/examples/platforms/two-sites-4x2.toml";
  job.spec.extra_environment = {{"EXTRA_VARIABLE", "extra"}};
  const LaunchResult result = launch_job(job.spec);
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_TRUE(job.reports.empty());
  ASSERT_EQ(result.ranks.size(), 4u);
  std::string job_id;
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(result.ranks[r].rank, r);
    EXPECT_EQ(result.ranks[r].exit_code, 0);
    EXPECT_EQ(result.ranks[r].signal, 0);
    std::istringstream line(read_text(dir / fmt::format("rank-{}", r)));
    std::string rank, size, id, secret_length, timeout, explain, platform, extra, server;
    line >> rank >> size >> id >> secret_length >> timeout >> explain >> platform >> extra >>
        server;
    EXPECT_EQ(rank, std::to_string(r));
    EXPECT_EQ(size, "4");
    if (r == 0) job_id = id;
    EXPECT_EQ(id, job_id);  // one job id for all
    EXPECT_EQ(secret_length, "64");
    EXPECT_EQ(timeout, "2.5");
    EXPECT_EQ(explain, "1");
    EXPECT_EQ(platform, job.spec.platform_file);
    EXPECT_EQ(extra, "extra");
    EXPECT_EQ(server, "none");  // the launcher serves the store
    EXPECT_EQ(read_text(dir / fmt::format("rendezvous-{}", r)).rfind("127.0.0.1:", 0), 0u);
  }
  expect_all_gone(result);
}

// Not a test of its own: the program the next test launches (it skips when run directly).
TEST(LaunchedRank, MeetsTheOthersAtTheRendezvous) {
  const char* marker_dir = ::getenv("MULTILANE_TEST_MARKER_DIR");
  if (marker_dir == nullptr)
    GTEST_SKIP() << "only run as a rank by Launcher.RanksMeetAtTheRendezvous";
  const JobEnvironment env = JobEnvironment::from_environment();
  const auto rendezvous = join_rendezvous(env);
  rendezvous->put(lanes_key(env.rank), fmt::format("addresses of {}", env.rank));
  for (int peer = 0; peer < env.size; ++peer) {
    ASSERT_EQ(rendezvous->get(lanes_key(peer)), fmt::format("addresses of {}", peer));
  }
  std::ofstream(fmt::format("{}/met-{}", marker_dir, env.rank)) << "met\n";
}

TEST(Launcher, RanksMeetAtTheRendezvous) {
  TempDir dir;
  LaunchSpec spec;
  spec.ranks = 4;
  spec.command = {fs::read_symlink("/proc/self/exe").string(),
                  "--gtest_filter=LaunchedRank.MeetsTheOthersAtTheRendezvous"};
  spec.timeout = 10s;
  spec.tag_output = true;  // keeps the ranks' gtest chatter apart
  spec.extra_environment = {{"MULTILANE_TEST_MARKER_DIR", dir.path().string()}};
  const LaunchResult result = launch_job(spec);
  EXPECT_EQ(result.exit_code, 0);
  for (int r = 0; r < 4; ++r) EXPECT_TRUE(fs::exists(dir / fmt::format("met-{}", r))) << r;
}

TEST(Launcher, ExitCodeOfAFailingRankIsReported) {
  ShellJob job(3, "[ $MULTILANE_RANK = 1 ] && exit 3; exit 0");
  const LaunchResult result = launch_job(job.spec);
  EXPECT_EQ(result.exit_code, 3);
  EXPECT_EQ(result.ranks[1].exit_code, 3);
  EXPECT_EQ(result.ranks[0].exit_code, 0);
  EXPECT_EQ(result.ranks[2].exit_code, 0);
  ASSERT_EQ(job.reports.size(), 1u);
  EXPECT_EQ(job.reports[0], fmt::format("rank 1 (pid {}) exited with code 3", result.ranks[1].pid));
  EXPECT_EQ(result.failures, job.reports);
}

TEST(Launcher, KilledRankIsNamedAndTheOthersAreTerminatedAfterTheGrace) {
  TempDir dir;
  // Ranks 0 and 1 hang in a child of their shell (which must not survive either); rank 2 dies.
  ShellJob job(3, "if [ $MULTILANE_RANK = 2 ]; then kill -KILL $$; fi; sleep 30 & echo $! > " +
                      dir.path().string() + "/child-$MULTILANE_RANK; wait");
  const auto start = std::chrono::steady_clock::now();
  const LaunchResult result = launch_job(job.spec);
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(result.exit_code, 128 + 9);
  ASSERT_EQ(job.reports.size(), 4u);
  EXPECT_EQ(job.reports[0],
            fmt::format("rank 2 (pid {}) was killed by signal 9 (SIGKILL)", result.ranks[2].pid));
  EXPECT_EQ(job.reports[1],
            "ranks 0, 1 still running 0.6 s after the first failure: sending SIGTERM");
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(result.ranks[r].signal, SIGTERM);
    EXPECT_EQ(result.ranks[r].exit_code, -1);
  }
  EXPECT_GE(took, 600ms);  // the others had timeout + grace to finish on their own
  EXPECT_LT(took, 20s);    // and were not waited for
  expect_all_gone(result);
  for (int r = 0; r < 2; ++r) {
    const std::string child = read_text(dir / fmt::format("child-{}", r));
    ASSERT_FALSE(child.empty());
    EXPECT_TRUE(process_gone(std::stoi(child))) << "the sleep of rank " << r << " survived";
  }
}

TEST(Launcher, RanksIgnoringSigtermAreKilled) {
  ShellJob job(2, "[ $MULTILANE_RANK = 1 ] && exit 1; trap '' TERM; sleep 30");
  const LaunchResult result = launch_job(job.spec);
  EXPECT_EQ(result.exit_code, 1);
  ASSERT_EQ(job.reports.size(), 4u);
  EXPECT_EQ(job.reports[1], "rank 0 still running 0.6 s after the first failure: sending SIGTERM");
  EXPECT_EQ(job.reports[2], "rank 0 still running 0.3 s after SIGTERM: sending SIGKILL");
  EXPECT_EQ(job.reports[3],
            fmt::format("rank 0 (pid {}) was killed by signal 9 (SIGKILL)", result.ranks[0].pid));
  expect_all_gone(result);
}

TEST(Launcher, SignalsToTheLauncherAreForwarded) {
  TempDir dir;
  ShellJob job(2, "echo up > " + dir.path().string() + "/started-$MULTILANE_RANK; exec sleep 30");
  job.spec.timeout = 10s;
  auto launched = std::async(std::launch::async, [&] { return launch_job(job.spec); });
  ASSERT_TRUE(wait_for_file(dir / "started-0") && wait_for_file(dir / "started-1"));
  ::kill(::getpid(), SIGINT);  // as a terminal's Ctrl-C would (the launcher catches it)
  const LaunchResult result = launched.get();
  EXPECT_EQ(result.exit_code, 128 + SIGINT);
  ASSERT_GE(job.reports.size(), 1u);
  EXPECT_EQ(job.reports[0], "received SIGINT: forwarding it to the ranks");
  for (int r = 0; r < 2; ++r) EXPECT_EQ(result.ranks[r].signal, SIGINT) << r;
  expect_all_gone(result);
}

TEST(Launcher, TaggedOutputPrefixesEveryLine) {
  TempDir dir;
  ShellJob job(2,
               "echo out $MULTILANE_RANK; echo err $MULTILANE_RANK >&2; printf 'two\\nlines'; "
               "[ $MULTILANE_RANK = 1 ] && head -c 70000 /dev/zero | tr '\\0' x; exit 0");
  job.spec.tag_output = true;
  // Catch the launcher's own stdout and stderr in files for the length of the job.
  fflush(stdout);
  fflush(stderr);
  const int saved_out = ::dup(1), saved_err = ::dup(2);
  {
    std::ofstream(dir / "out");
    std::ofstream(dir / "err");
  }
  const int out = ::open((dir / "out").c_str(), O_WRONLY),
            err = ::open((dir / "err").c_str(), O_WRONLY);
  ::dup2(out, 1);
  ::dup2(err, 2);
  LaunchResult result;
  try {
    result = launch_job(job.spec);
  } catch (...) {
  }
  ::dup2(saved_out, 1);
  ::dup2(saved_err, 2);
  for (const int fd : {out, err, saved_out, saved_err}) ::close(fd);
  EXPECT_EQ(result.exit_code, 0);
  const std::string stdout_text = read_text(dir / "out");
  const std::string stderr_text = read_text(dir / "err");
  EXPECT_NE(stdout_text.find("[rank 0] out 0\n"), std::string::npos) << stdout_text;
  EXPECT_NE(stdout_text.find("[rank 1] out 1\n"), std::string::npos);
  EXPECT_NE(stdout_text.find("[rank 0] two\n"), std::string::npos);
  EXPECT_NE(stdout_text.find("[rank 0] lines\n"), std::string::npos);  // closed without newline
  EXPECT_NE(stdout_text.find("[rank 1] lines" + std::string(65536 - 5, 'x') + "\n"),
            std::string::npos);
  EXPECT_NE(stdout_text.find("[rank 1] " + std::string(70000 - 65536 + 5, 'x') + "\n"),
            std::string::npos);
  EXPECT_EQ(stdout_text.find("err"), std::string::npos);
  EXPECT_NE(stderr_text.find("[rank 0] err 0\n"), std::string::npos) << stderr_text;
  EXPECT_NE(stderr_text.find("[rank 1] err 1\n"), std::string::npos) << stderr_text;
  EXPECT_EQ(stderr_text.size(), 2 * std::string("[rank 0] err 0\n").size());
}

TEST(Launcher, CommandPrefixRunsInFrontOfTheProgram) {
  TempDir dir;
  ShellJob job(2, "echo $PREFIXED > " + dir.path().string() + "/prefixed-$MULTILANE_RANK");
  job.spec.command_prefix = [](int rank) {
    return std::vector<std::string>{"env", fmt::format("PREFIXED=node{}", rank)};
  };
  EXPECT_EQ(launch_job(job.spec).exit_code, 0);
  EXPECT_EQ(read_text(dir / "prefixed-0"), "node0\n");
  EXPECT_EQ(read_text(dir / "prefixed-1"), "node1\n");
}

TEST(Launcher, ProgramsThatCannotBeExecutedAreNamed) {
  LaunchSpec spec;
  spec.ranks = 2;
  spec.command = {"no-such-program-for-multilane"};
  try {
    launch_job(spec);
    FAIL() << "launched";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()),
              "cannot execute 'no-such-program-for-multilane': not found in PATH");
  }
  spec.command = {"/etc/passwd"};
  try {
    launch_job(spec);
    FAIL() << "launched";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "cannot execute '/etc/passwd': Permission denied");
  }
  spec.command = {"/no/such/dir/prog"};
  try {
    launch_job(spec);
    FAIL() << "launched";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()),
              "cannot execute '/no/such/dir/prog': No such file or directory");
  }
}

TEST(Launcher, ProgramThatExecRefusesEndsTheJob) {
  TempDir dir;
  const std::string bad = dir / "not-a-program";
  std::ofstream(bad) << "\x01\x02 garbage, no #! line\n";
  ::chmod(bad.c_str(), 0755);
  ShellJob job(3, "");
  job.spec.command = {bad};
  const LaunchResult result = launch_job(job.spec);
  EXPECT_EQ(result.exit_code, 127);
  ASSERT_GE(job.reports.size(), 1u);
  EXPECT_EQ(job.reports[0],
            "rank 0 could not be started: cannot execute '" + bad + "': Exec format error");
  EXPECT_EQ(result.ranks[1].pid, -1);  // nothing more was started
}

TEST(Launcher, RequestsAreCheckedBeforeAnythingStarts) {
  LaunchSpec spec;
  spec.command = {"/bin/true"};
  spec.ranks = 0;
  try {
    launch_job(spec);
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "the number of ranks must be 1..4096, got 0");
  }
  spec.ranks = 40;
  spec.platform_file =
      std::string(MULTILANE_SOURCE_DIR) + "/examples/platforms/single-site-32.toml";
  try {
    launch_job(spec);
    FAIL();
  } catch (const PlatformError& e) {
    EXPECT_EQ(std::string(e.what()), spec.platform_file + ": cannot place 40 ranks on 32 cores");
  }
  spec.command.clear();
  spec.platform_file.clear();
  EXPECT_THROW(launch_job(spec), UsageError);
}

}  // namespace
}  // namespace multilane::runtime
