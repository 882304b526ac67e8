// What launchers and scripts ask of an emulation that is up: its names, nodes, addresses and
// how to run a program inside a node.
#include <dirent.h>
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "emu/names.hpp"
#include "emu/state.hpp"
#include "multilane/emu.hpp"
#include "multilane/errors.hpp"

namespace multilane {

namespace {
const emu::NodePlan& node_of(const emu::Plan& plan, int node) {
  if (node < 0 || node >= static_cast<int>(plan.nodes.size())) {
    throw UsageError(fmt::format("node {} is out of range: emulation \"{}\" has nodes 0 to {}",
                                 node, plan.name, plan.nodes.size() - 1));
  }
  return plan.nodes[node];
}
}  // namespace

std::vector<std::string> emu_names() {
  std::vector<std::string> names;
  DIR* dir = opendir(std::string(emu::kRunRoot).c_str());
  if (!dir) return names;
  while (dirent* e = readdir(dir)) {
    const std::string entry = e->d_name;
    if (entry != "." && entry != ".." && e->d_type == DT_DIR) names.push_back(entry);
  }
  closedir(dir);
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<EmuNode> emu_nodes(std::string_view name) {
  const emu::Plan plan = emu::load_plan(name);
  std::vector<EmuNode> nodes;
  for (const emu::NodePlan& n : plan.nodes) {
    EmuNode node{n.index, n.name, plan.sites[n.site].name, n.cores, n.netns, {}};
    for (const emu::LanePlan& lane : n.lanes) node.lane_addresses.push_back(lane.address);
    nodes.push_back(std::move(node));
  }
  return nodes;
}

std::vector<std::string> emu_exec_prefix(std::string_view name, int node) {
  const emu::Plan plan = emu::load_plan(name);
  return {"ip", "netns", "exec", node_of(plan, node).netns};
}

std::vector<std::string> emu_lane_addresses(std::string_view name, int node) {
  const emu::Plan plan = emu::load_plan(name);
  std::vector<std::string> addresses;
  for (const emu::LanePlan& lane : node_of(plan, node).lanes) addresses.push_back(lane.address);
  return addresses;
}

int emu_find_node(std::string_view name, std::string_view wanted) {
  const emu::Plan plan = emu::load_plan(name);
  for (const emu::NodePlan& node : plan.nodes) {
    if (node.name == wanted || std::to_string(node.index) == wanted) return node.index;
    for (const emu::LanePlan& lane : node.lanes) {
      if (lane.address == wanted) return node.index;
    }
  }
  std::string names;
  for (const emu::NodePlan& node : plan.nodes) names += (names.empty() ? "" : ", ") + node.name;
  throw UsageError(
      fmt::format("emulation \"{}\" has no node \"{}\"; give a name ({}), an index "
                  "(0 to {}) or a lane address",
                  name, wanted, names, plan.nodes.size() - 1));
}

}  // namespace multilane
