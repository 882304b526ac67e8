// tools/emu_mpirun.cpp — mpirun in node 0's namespace, this binary as its rsh agent
// (emu_mpirun.hpp).
#include "emu_mpirun.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "exec_command.hpp"
#include "multilane/emu.hpp"
#include "multilane/errors.hpp"

namespace multilane::cli {

namespace {

constexpr const char* kLanes = "198.18.0.0/15";

// A temporary directory removed with everything in it when the object goes.
class SessionDirectory {
 public:
  SessionDirectory() {
    std::string pattern = "/tmp/multilane-mpirun.XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) {
      throw EmuError(fmt::format("cannot make a session directory: {}", std::strerror(errno)));
    }
    path_ = pattern;
  }
  SessionDirectory(const SessionDirectory&) = delete;
  SessionDirectory& operator=(const SessionDirectory&) = delete;
  ~SessionDirectory() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string write_hostfile(const std::string& name, const std::string& session, int& cores) {
  std::string text;
  cores = 0;
  for (const EmuNode& node : emu_nodes(name)) {
    text += fmt::format("{} slots={}\n", node.lane_addresses.at(0), node.cores);
    cores += node.cores;
  }
  const std::string path = session + "/hostfile";
  FILE* file = std::fopen(path.c_str(), "w");
  if (file == nullptr || std::fputs(text.c_str(), file) < 0 || std::fclose(file) != 0) {
    throw EmuError(fmt::format("cannot write {}: {}", path, std::strerror(errno)));
  }
  return path;
}

}  // namespace

int run_emu_mpirun(const EmuMpirun& run) {
  if (run.command.empty()) throw UsageError("a program to run is required (after --)");
  const SessionDirectory session;
  int cores = 0;
  const std::string hostfile = write_hostfile(run.name, session.path(), cores);
  const int ranks = run.ranks > 0 ? run.ranks : cores;
  const std::string mpirun_tmp = session.path() + "/mpirun";
  if (mkdir(mpirun_tmp.c_str(), 0700) != 0) {
    throw EmuError(fmt::format("cannot make {}: {}", mpirun_tmp, std::strerror(errno)));
  }
  std::vector<std::string> argv = emu_exec_prefix(run.name, 0);
  const std::string agent = fmt::format("{} emu agent --name {} --session {}",
                                        this_program().string(), run.name, session.path());
  for (const std::string& word : {std::string("mpirun"),
                                  std::string("--allow-run-as-root"),
                                  std::string("--hostfile"),
                                  hostfile,
                                  std::string("-n"),
                                  std::to_string(ranks),
                                  std::string("--mca"),
                                  std::string("plm_rsh_agent"),
                                  agent,
                                  std::string("--mca"),
                                  std::string("btl"),
                                  std::string("tcp,self"),
                                  std::string("--mca"),
                                  std::string("btl_tcp_if_include"),
                                  std::string(kLanes),
                                  std::string("--mca"),
                                  std::string("oob_tcp_if_include"),
                                  std::string(kLanes),
                                  std::string("--bind-to"),
                                  std::string("none")}) {
    argv.push_back(word);
  }
  argv.insert(argv.end(), run.mpirun_options.begin(), run.mpirun_options.end());
  argv.insert(argv.end(), run.command.begin(), run.command.end());
  std::fflush(stdout);
  const pid_t child = fork();
  if (child < 0) throw EmuError(fmt::format("fork failed: {}", std::strerror(errno)));
  if (child == 0) {
    setenv("OMPI_MCA_orte_tmpdir_base", mpirun_tmp.c_str(), 1);
    setenv("OMPI_MCA_rtc", "^hwloc", 1);
    try {
      exec_command(argv);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "multilane: %s\n", e.what());
      _exit(127);
    }
  }
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

void run_emu_agent(const std::string& name, const std::string& session, const std::string& host,
                   const std::vector<std::string>& words) {
  const std::string directory = session + "/" + host;
  if (mkdir(directory.c_str(), 0700) != 0 && errno != EEXIST) {
    throw EmuError(fmt::format("cannot make {}: {}", directory, std::strerror(errno)));
  }
  // mpirun hands its own session directory to every daemon on the command line (-mca
  // orte_tmpdir_base "DIR"), where it wins over the environment: each node's daemon gets its own.
  std::vector<std::string> command = words;
  for (std::size_t i = 0; i + 1 < command.size(); ++i) {
    if (command[i] == "orte_tmpdir_base") command[i + 1] = fmt::format("\"{}\"", directory);
  }
  setenv("OMPI_MCA_orte_tmpdir_base", directory.c_str(), 1);
  std::vector<std::string> argv = emu_exec_prefix(name, emu_find_node(name, host));
  argv.push_back("sh");
  argv.push_back("-c");
  argv.push_back(fmt::format("{}", fmt::join(command, " ")));
  exec_command(std::move(argv));
}

}  // namespace multilane::cli
