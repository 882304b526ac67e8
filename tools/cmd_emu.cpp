// `multilane emu` — an emulated grid on this machine (see include/multilane/emu.hpp).
//
//   emu up PLATFORM [--name NAME] [--mtu N] [--queue SIZE] [--loss P] [--seed S]
//   emu status [--name NAME]          every emulation that is up, or just NAME
//   emu exec [--name NAME] NODE -- COMMAND...   NODE: name, index or lane address
//   emu hostfile [--name NAME]        an Open MPI hostfile: lane-0 address, slots = cores
//   emu ping [--name NAME] FROM TO [--count N] [--size BYTES] [--lane L]   UDP round trips
//   emu down [--name NAME | --all]
//   emu mpirun [--name NAME] [-n N] -- [MPIRUN OPTIONS...] PROGRAM [ARGS...]   (emu_mpirun.hpp)
//   emu delay-line --name NAME --link I [--ready-fd FD]   (hidden: the WAN daemon `up` starts)
//   emu agent --name NAME --session DIR HOST WORDS...     (hidden: mpirun's rsh agent)
//
// Needs root; without it every subcommand but hostfile says so and exits 1.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>

#include "cli_options.hpp"
#include "command.hpp"
#include "emu/delay_line/delay_line.hpp"
#include "emu_mpirun.hpp"
#include "exec_command.hpp"
#include "multilane/emu.hpp"
#include "multilane/errors.hpp"
#include "multilane/platform_file.hpp"
#include "multilane/units.hpp"

namespace multilane::cli {

namespace {

struct EmuArgs {
  std::string platform;
  std::string name = "default";
  int mtu = 9000;
  std::string queue;  // empty: one bandwidth-delay product
  double loss = 0;
  std::uint64_t seed = 1;
  bool all = false;
  std::string node;
  std::string to_node;
  std::vector<std::string> command;
  int count = 10;
  int size = 64;
  int lane = 0;
  int link = 0;
  int ready_fd = -1;
  int ranks = 0;
  std::string session;
};

int run_up(const EmuArgs& args) {
  const Platform platform = load_platform_file(args.platform);
  EmuOptions options;
  options.name = args.name;
  options.mtu = args.mtu;
  if (!args.queue.empty())
    options.wan_queue_bytes = parse_option("--queue", args.queue, parse_size);
  options.wan_loss = args.loss;
  options.seed = args.seed;
  emu_up(platform, options);
  fmt::print(
      "emulation \"{}\" is up: {} nodes in {} sites, {} WAN delay lines; see `multilane "
      "emu status --name {}`\n",
      args.name, platform.nodes.size(), platform.sites.size(), platform.wan_links.size(),
      args.name);
  return 0;
}

int run_down(const EmuArgs& args) {
  const std::vector<std::string> names = args.all ? emu_names() : std::vector{args.name};
  for (const std::string& name : names) {
    const auto removed = emu_down(name);
    if (removed.empty()) {
      fmt::print("emulation \"{}\" is not up; nothing to remove\n", name);
    } else {
      fmt::print("emulation \"{}\" is down: {}\n", name, fmt::join(removed, ", "));
    }
  }
  if (names.empty()) fmt::print("no emulation is up; nothing to remove\n");
  return 0;
}

int run_status(const EmuArgs& args, bool name_given) {
  require_emu_support();
  if (name_given) {
    fmt::print("{}", emu_status(args.name));
    return 0;
  }
  const auto names = emu_names();
  if (names.empty()) fmt::print("no emulation is up\n");
  for (const std::string& name : names) fmt::print("{}", emu_status(name));
  return 0;
}

int run_exec(const EmuArgs& args) {
  require_emu_support();
  std::vector<std::string> argv = emu_exec_prefix(args.name, emu_find_node(args.name, args.node));
  argv.insert(argv.end(), args.command.begin(), args.command.end());
  exec_command(std::move(argv));
}

int run_hostfile(const EmuArgs& args) {
  for (const EmuNode& node : emu_nodes(args.name)) {
    fmt::print("{} slots={}\n", node.lane_addresses.at(0), node.cores);
  }
  return 0;
}

int run_ping(const EmuArgs& args) {
  require_emu_support();
  const int from = emu_find_node(args.name, args.node);
  const int to = emu_find_node(args.name, args.to_node);
  const auto rtts =
      emu_ping(args.name, from, to, args.lane, args.count, static_cast<std::size_t>(args.size));
  const auto nodes = emu_nodes(args.name);
  fmt::print("{} -> {} ({}, lane {}): {} probes of {} B, {} answered", nodes[from].name,
             nodes[to].name, nodes[to].lane_addresses.at(args.lane), args.lane, args.count,
             args.size, rtts.size());
  if (rtts.empty()) {
    fmt::print("\n");
    return 1;
  }
  auto sorted = rtts;
  std::sort(sorted.begin(), sorted.end());
  fmt::print(": rtt min {}, median {}, max {}\n", format_duration(sorted.front()),
             format_duration(sorted[sorted.size() / 2]), format_duration(sorted.back()));
  return 0;
}

CLI::App* add_name(CLI::App& sub, EmuArgs& args) {
  sub.add_option("--name", args.name, "Emulation name ([A-Za-z0-9_]{1,24})")->capture_default_str();
  return &sub;
}

Runner setup(CLI::App& emu) {
  emu.require_subcommand(1);
  auto args = std::make_shared<EmuArgs>();

  CLI::App* up =
      add_name(*emu.add_subcommand("up", "Build the emulated grid of a platform"), *args);
  up->add_option("PLATFORM", args->platform, "Platform TOML file")->required();
  up->add_option("--mtu", args->mtu, "MTU of lanes, bridges and WAN ports")
      ->check(CLI::Range(576, 65000))
      ->capture_default_str();
  up->add_option("--queue", args->queue,
                 "Drop-tail queue of each WAN direction (default: one bandwidth-delay product)");
  up->add_option("--loss", args->loss, "Probability that a WAN frame is lost")
      ->check(CLI::Range(0.0, 0.999999))
      ->capture_default_str();
  up->add_option("--seed", args->seed, "Seed of the random loss")->capture_default_str();

  CLI::App* down =
      add_name(*emu.add_subcommand("down", "Remove an emulated grid and everything in it"), *args);
  down->add_flag("--all", args->all, "Remove every emulation that is up");

  CLI::App* status = add_name(
      *emu.add_subcommand("status", "Nodes, addresses, shaping and WAN delay-line counters"),
      *args);

  CLI::App* exec = add_name(
      *emu.add_subcommand("exec", "Run a command inside a node's network namespace"), *args);
  exec->add_option("NODE", args->node, "Node name, index or lane address")->required();
  exec->add_option("COMMAND", args->command, "Command and its arguments (after --)")->required();

  CLI::App* hostfile = add_name(
      *emu.add_subcommand("hostfile", "Print an Open MPI hostfile of the emulated nodes"), *args);

  CLI::App* ping =
      add_name(*emu.add_subcommand("ping", "Round-trip times between two nodes (UDP echo)"), *args);
  ping->add_option("FROM", args->node, "Node sending the probes")->required();
  ping->add_option("TO", args->to_node, "Node echoing them")->required();
  ping->add_option("--count", args->count, "Probes")
      ->check(CLI::Range(1, 10000))
      ->capture_default_str();
  ping->add_option("--size", args->size, "Bytes per probe")
      ->check(CLI::Range(16, 65000))
      ->capture_default_str();
  ping->add_option("--lane", args->lane, "Lane to probe")->capture_default_str();

  CLI::App* mpirun = add_name(
      *emu.add_subcommand("mpirun", "Run an MPI program across the nodes with Open MPI's mpirun"),
      *args);
  mpirun->add_option("-n", args->ranks, "Ranks (default: one per core of the grid)")
      ->check(CLI::Range(1, 1 << 20));
  mpirun
      ->add_option("COMMAND", args->command,
                   "After --: mpirun options (-x VAR=VALUE, ...), then the program and its "
                   "arguments")
      ->required();

  CLI::App* agent = emu.add_subcommand("agent", "mpirun's rsh agent (started by mpirun)");
  agent->group("");         // hidden
  agent->prefix_command();  // HOST and the remote command are not ours to parse
  agent->add_option("--name", args->name)->required();
  agent->add_option("--session", args->session)->required();

  CLI::App* delay_line = emu.add_subcommand("delay-line", "WAN delay-line daemon (started by up)");
  delay_line->group("");  // hidden
  delay_line->add_option("--name", args->name)->required();
  delay_line->add_option("--link", args->link)->required();
  delay_line->add_option("--ready-fd", args->ready_fd);

  return [=] {
    if (up->parsed()) return run_up(*args);
    if (down->parsed()) return run_down(*args);
    if (status->parsed()) return run_status(*args, status->count("--name") > 0);
    if (exec->parsed()) return run_exec(*args);
    if (hostfile->parsed()) return run_hostfile(*args);
    if (ping->parsed()) return run_ping(*args);
    if (mpirun->parsed()) {
      require_emu_support();
      return run_emu_mpirun({.name = args->name,
                             .ranks = args->ranks,
                             .mpirun_options = {},
                             .command = args->command});
    }
    if (agent->parsed()) {
      std::vector<std::string> rest = agent->remaining();
      if (rest.empty()) throw UsageError("emu agent: HOST is required");
      const std::string host = rest.front();
      rest.erase(rest.begin());
      run_emu_agent(args->name, args->session, host, rest);
    }
    if (delay_line->parsed()) {
      return emu::run_delay_line_daemon(args->name, args->link, args->ready_fd);
    }
    return 2;
  };
}

const bool emu_registered = register_command(
    {"emu", "Emulated grid on this machine: namespaces, shaped lanes, WAN delay lines", setup});

}  // namespace

}  // namespace multilane::cli
