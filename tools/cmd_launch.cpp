// `multilane launch` — start the N ranks of a job on this host and wait for them.
//
//   multilane launch -n N [--platform FILE] [--timeout S] [--explain] [--tag-output]
//                    [--grace S] [--bind-to auto|core|none] [--emu NAME] -- PROGRAM ARGS...
//
// Every rank runs PROGRAM with the job's environment (MULTILANE_RANK, MULTILANE_SIZE, the
// rendezvous the launcher serves, a fresh secret; docs/launching.md). When a rank fails the
// launcher names it and how ("rank 3 (pid 4242) was killed by signal 9 (SIGKILL)"); the
// others get the timeout plus the grace to finish, then SIGTERM, then SIGKILL. Ctrl-C is
// forwarded to every rank. Exit status: 0 when every rank exited with 0; else the first
// failing rank's exit code, or 128 + the signal that ended it; 127 when a rank could not be
// started; 2 on a bad argument (e.g. a program that cannot be executed). Ranks are bound to
// one core each when they fit the cores (--bind-to auto; runtime/launch/rank_binding.hpp).
//
// With --emu NAME every rank runs inside the namespace of its node of the emulated grid NAME
// (`multilane emu up`), on that node's lane addresses (emu_job.hpp); exit status 2 when the
// grid is not up or cannot hold N ranks.
#include <fmt/format.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "command.hpp"
#include "emu_job.hpp"
#include "multilane/errors.hpp"
#include "runtime/launch/job_env.hpp"
#include "runtime/launch/launcher.hpp"
#include "tuning_option.hpp"

namespace multilane::cli {

namespace {

struct LaunchArgs {
  int ranks = 1;
  std::string platform_file;
  std::string timeout = "60";
  std::string grace = "5";
  bool explain = false;
  bool tag_output = false;
  std::string bind_to = "auto";
  std::string emulated_grid;  // --emu NAME
  std::string tuning_file;    // --tuning FILE
  std::vector<std::string> command;
};

std::chrono::milliseconds seconds_option(std::string_view option, const std::string& text) {
  try {
    return runtime::parse_timeout_seconds(text);
  } catch (const UsageError& e) {
    throw UsageError(fmt::format("{} {} is not allowed: {}", option, text, e.what()));
  }
}

int run(const LaunchArgs& args) {
  runtime::LaunchSpec spec;
  spec.ranks = args.ranks;
  spec.command = args.command;
  spec.platform_file = args.platform_file;
  spec.timeout = seconds_option("--timeout", args.timeout);
  spec.grace = seconds_option("--grace", args.grace);
  spec.explain = args.explain;
  spec.tag_output = args.tag_output;
  spec.binding = *runtime::parse_rank_binding(args.bind_to);  // checked by CLI11
  if (!args.tuning_file.empty())
    spec.extra_environment.push_back(tuning_environment(args.tuning_file));
  std::optional<EmulatedJob> on_grid;
  if (!args.emulated_grid.empty()) on_grid.emplace(args.emulated_grid, spec);
  return runtime::launch_job(spec).exit_code;
}

Runner setup_launch(CLI::App& app) {
  auto args = std::make_shared<LaunchArgs>();
  app.add_option("-n,--ranks", args->ranks, "Number of ranks to start")
      ->required()
      ->check(CLI::Range(1, runtime::kMaxLaunchRanks));
  app.add_option("--platform", args->platform_file,
                 "Platform TOML file the ranks run on (must hold N ranks)");
  app.add_option("--timeout", args->timeout,
                 "Seconds every blocking wait of a rank may last (MULTILANE_TIMEOUT)")
      ->capture_default_str();
  app.add_option("--grace", args->grace,
                 "After a rank failed: seconds beyond the timeout before the others get "
                 "SIGTERM, and again before SIGKILL")
      ->capture_default_str();
  app.add_flag("--explain", args->explain,
               "Rank 0 explains the algorithm chosen for each collective (MULTILANE_EXPLAIN)");
  app.add_flag("--tag-output", args->tag_output, "Prefix every output line with \"[rank N] \"");
  app.add_option("--bind-to", args->bind_to,
                 "Bind each rank to one core: auto (when the ranks fit the cores), core "
                 "(always, round the cores), none")
      ->check(CLI::IsMember({"auto", "core", "none"}))
      ->capture_default_str();
  app.add_option("--tuning", args->tuning_file,
                 "Shared-memory tuning file of `multilane tune shm` (MULTILANE_TUNING)");
  app.add_option("--emu", args->emulated_grid,
                 "Run each rank inside its node's namespace of the emulated grid NAME "
                 "(multilane emu up), on the node's lane addresses");
  // Everything after "--" is the program and its arguments, options included ("sh -c ...").
  app.add_option("PROGRAM", args->command,
                 "After --: the program every rank runs, and its arguments")
      ->required();
  return [args] { return run(*args); };
}

const bool launch_registered = register_command(
    {"launch", "Start N ranks of a program on this host as one job and watch them", setup_launch});

}  // namespace

}  // namespace multilane::cli
