// tools/exec_command.cpp — execvp of a word vector (exec_command.hpp).
#include "exec_command.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "multilane/errors.hpp"

namespace multilane::cli {

std::filesystem::path this_program() {
  std::error_code error;
  auto path = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) throw UsageError(fmt::format("cannot find this program: {}", error.message()));
  return path;
}

void exec_command(std::vector<std::string> argv) {
  if (argv.empty()) throw UsageError("no command to run");
  std::vector<char*> c_argv;
  for (auto& word : argv) c_argv.push_back(word.data());
  c_argv.push_back(nullptr);
  std::fflush(stdout);
  execvp(c_argv[0], c_argv.data());
  throw UsageError(fmt::format("cannot run {}: {}", argv[0], std::strerror(errno)));
}

}  // namespace multilane::cli
