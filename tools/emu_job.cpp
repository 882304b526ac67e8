// tools/emu_job.cpp — see emu_job.hpp.
#include "emu_job.hpp"

#include <fmt/format.h>

#include <vector>

#include "emu/names.hpp"
#include "emu/state.hpp"
#include "multilane/emu.hpp"
#include "multilane/errors.hpp"
#include "multilane/platform_file.hpp"
#include "runtime/launch/launch_platform.hpp"

namespace multilane::cli {

namespace {

std::vector<EmuNode> nodes_of_running_grid(const std::string& name) {
  require_emu_support(fmt::format("--emu {}: ", name));
  emu::check_emulation_name(name);
  if (!emu::state_exists(name)) {
    throw EmuError(
        ErrorKind::usage,
        fmt::format("--emu {0}: emulation \"{0}\" is not up; start it with multilane emu up "
                    "PLATFORM --name {0}",
                    name));
  }
  if (!emu::is_complete(name)) {
    throw EmuError(fmt::format(
        "--emu {0}: emulation \"{0}\" is not completely up (a crashed or running `emu up`); "
        "run multilane emu down --name {0} and start it again",
        name));
  }
  return emu_nodes(name);
}

void check_capacity(const std::string& name, const std::vector<EmuNode>& nodes, int ranks) {
  int cores = 0;
  for (const EmuNode& node : nodes) cores += node.cores;
  if (ranks > cores) {
    throw UsageError(
        fmt::format("-n {} is more than emulation \"{}\" holds: {} ranks ({} nodes, "
                    "{} cores)",
                    ranks, name, cores, nodes.size(), cores));
  }
}

// A platform the user names instead of the grid's must describe the same machine.
void check_same_nodes(const std::string& name, const std::vector<EmuNode>& nodes,
                      const std::string& platform_file) {
  const Platform platform = load_platform_file(platform_file);
  bool same = platform.nodes.size() == nodes.size();
  for (std::size_t i = 0; same && i < nodes.size(); ++i) {
    same = platform.nodes[i].lanes.size() == nodes[i].lane_addresses.size();
  }
  if (!same) {
    throw UsageError(fmt::format(
        "--platform {}: its nodes and lanes differ from those of emulation \"{}\" ({} nodes); "
        "leave --platform out to use the grid's own",
        platform_file, name, nodes.size()));
  }
}

std::string joined(const std::vector<std::string>& words) {
  return fmt::format("{}", fmt::join(words, ","));
}

}  // namespace

EmulatedJob::EmulatedJob(const std::string& name, runtime::LaunchSpec& spec) {
  const std::vector<EmuNode> nodes = nodes_of_running_grid(name);
  check_capacity(name, nodes, spec.ranks);
  if (spec.platform_file.empty()) {
    spec.platform_file = emu::run_dir(name) + "/platform.toml";
  } else {
    check_same_nodes(name, nodes, spec.platform_file);
  }
  const Platform platform = runtime::platform_for_job(spec.platform_file, spec.ranks);

  // Decided now, not per call: the launcher asks for every rank's prefix before starting any.
  std::vector<std::vector<std::string>> prefixes;
  for (const EmuNode& node : nodes) {
    std::vector<std::string> prefix = emu_exec_prefix(name, node.index);
    prefix.push_back("env");
    prefix.push_back("MULTILANE_LANE_ADDRESSES=" + joined(node.lane_addresses));
    prefix.push_back("MULTILANE_HOST=" + node.lane_addresses.at(0));
    prefixes.push_back(std::move(prefix));
  }
  std::vector<int> node_of_rank;
  for (int rank = 0; rank < spec.ranks; ++rank) node_of_rank.push_back(platform.node_of(rank));
  spec.command_prefix = [prefixes, node_of_rank](int rank) {
    return prefixes.at(node_of_rank.at(rank));
  };

  const EmuNode& store_node = nodes.at(node_of_rank.at(0));
  spec.rendezvous_bind = store_node.lane_addresses.at(0) + ":0";
  inside_rendezvous_node_ = std::make_unique<emu::NetnsScope>(store_node.netns);
}

}  // namespace multilane::cli
