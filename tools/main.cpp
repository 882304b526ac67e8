// The `multilane` command-line tool: one binary, one subcommand per file (see command.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <vector>

#include "command.hpp"
#include "multilane/errors.hpp"

namespace multilane::cli {

namespace {
std::vector<Command>& registry() {
  static std::vector<Command> commands;
  return commands;
}
}  // namespace

bool register_command(Command command) {
  registry().push_back(std::move(command));
  return true;
}

}  // namespace multilane::cli

int main(int argc, char** argv) {
  using namespace multilane;
  CLI::App app{
      "multilane — collective communication across clusters of clusters.\n"
      "Fill every lane at every level: both NICs of a node, many TCP streams and node pairs\n"
      "across the WAN. Build, verify, model and simulate the papers' collective algorithms."};
  app.require_subcommand(1);
  app.set_version_flag("--version", "multilane 0.1.0");

  auto& commands = cli::registry();
  std::sort(commands.begin(), commands.end(),
            [](const auto& a, const auto& b) { return a.name < b.name; });
  std::vector<std::pair<CLI::App*, cli::Runner>> runners;
  for (auto& c : commands) {
    CLI::App* sub = app.add_subcommand(c.name, c.help);
    runners.emplace_back(sub, c.setup(*sub));
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int status = app.exit(e);  // prints the help text or the parse error
    return status == 0 ? 0 : 2;      // a bad argument is a usage error: exit status 2
  }
  try {
    for (auto& [sub, run] : runners) {
      if (sub->parsed()) return run();
    }
  } catch (const std::exception& e) {
    // The exit status and the words say the kind (multilane/errors.hpp): a script can tell a
    // bad argument from a timeout from a dead peer.
    const ErrorKind kind = kind_of(e);
    if (kind == ErrorKind::usage) {
      fmt::print(stderr, "multilane: {}\n", e.what());
    } else if (kind == ErrorKind::platform) {
      fmt::print(stderr, "{}\n", e.what());  // FILE:LINE: key: reason
    } else {
      fmt::print(stderr, "multilane: error ({}): {}\n", kind_name(kind), e.what());
    }
    return exit_status(kind);
  }
  return 0;
}
