// tools/command.hpp — how a subcommand plugs into the `multilane` binary.
//
// Each tools/cmd_<name>.cpp registers itself at start-up:
//
//   static const bool registered = multilane::cli::register_command(
//       {"verify", "Check schedules symbolically", [](CLI::App& sub) { ...options...;
//         return [=] { ...run...; return 0; }; }});
//
// `setup` declares the options on the subcommand and returns the function that runs it; that
// function returns the process exit status. Throwing multilane::UsageError or PlatformError
// prints the message and exits with status 2.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>

namespace multilane::cli {

using Runner = std::function<int()>;

struct Command {
  std::string name;
  std::string help;
  std::function<Runner(CLI::App&)> setup;
};

bool register_command(Command command);

}  // namespace multilane::cli
