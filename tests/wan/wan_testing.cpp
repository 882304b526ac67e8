// tests/wan/wan_testing.cpp — subprocesses and ports for the WAN tests (see wan_testing.hpp).
#include "wan_testing.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#include <asio.hpp>

#include <charconv>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace multilane::wan::testing {

Subprocess::Subprocess(std::vector<std::string> argv, std::vector<std::string> environment) {
  static int counter = 0;
  output_file_ = (std::filesystem::temp_directory_path() /
                  ("multilane-wan-test-" + std::to_string(::getpid()) + "-" +
                   std::to_string(counter++) + ".out"))
                     .string();
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, output_file_.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) env_strings.emplace_back(*e);
  for (auto& e : environment) env_strings.push_back(e);
  std::vector<char*> env;
  for (auto& e : env_strings) env.push_back(e.data());
  env.push_back(nullptr);
  const int error = posix_spawn(&pid_, args[0], &actions, nullptr, args.data(), env.data());
  posix_spawn_file_actions_destroy(&actions);
  if (error != 0) throw std::runtime_error("cannot start " + argv[0]);
}

Subprocess::~Subprocess() {
  if (!reaped_ && pid_ > 0) {
    ::kill(pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
  }
  std::error_code ignored;
  std::filesystem::remove(output_file_, ignored);
}

std::string Subprocess::output_so_far() const {
  std::ifstream in(output_file_);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::uint16_t listening_port(const Subprocess& process, const std::string& what) {
  const std::string before = what + " on 127.0.0.1:";
  for (int i = 0; i < 1000; ++i) {
    const std::string output = process.output_so_far();
    if (const auto at = output.find(before); at != std::string::npos) {
      const char* digits = output.data() + at + before.size();
      std::uint16_t port = 0;
      const auto [end, error] = std::from_chars(digits, output.data() + output.size(), port);
      if (error == std::errc{} && end != digits) return port;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return 0;
}

Finished Subprocess::wait(std::chrono::milliseconds limit) {
  Finished finished;
  if (reaped_) return finished;
  const auto deadline = std::chrono::steady_clock::now() + limit;
  int status = 0;
  while (true) {
    const pid_t done = ::waitpid(pid_, &status, WNOHANG);
    if (done == pid_) break;
    if (std::chrono::steady_clock::now() >= deadline) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &status, 0);
      finished.timed_out = true;
      break;
    }
    std::this_thread::sleep_for(10ms);
  }
  reaped_ = true;
  finished.status = (!finished.timed_out && WIFEXITED(status)) ? WEXITSTATUS(status) : -1;
  finished.output = output_so_far();
  return finished;
}

void Subprocess::signal(int number) {
  if (!reaped_) ::kill(pid_, number);
}

std::string binary_dir() {
  return MULTILANE_BINARY_DIR;
}

std::string scratch_dir(const std::string& name) {
  const auto dir = std::filesystem::path(MULTILANE_BINARY_DIR) / "wan-test-scratch" /
                   (name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

}  // namespace multilane::wan::testing
