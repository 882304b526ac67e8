// Writing a platform as TOML (platform_to_toml; format in docs/platform-format.md).
//
// The text is meant to be read by people too: a site whose nodes all look alike and carry the
// default names (SITE-0, SITE-1, ...) is written as `nodes = COUNT`, lanes that are all alike as
// `lanes = K` plus one bandwidth. Quantities use the *_exact formatters so that reading the text
// back gives bit-identical numbers. An explicit placement is written as one node name per rank;
// the reader gives each rank the next free core of its node, so a placement whose cores are
// numbered differently comes back with the cores renumbered in rank order.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "multilane/platform_file.hpp"
#include "multilane/units.hpp"
#include "platform/placement_check.hpp"

namespace multilane {

namespace {

std::string quoted(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {  // TOML's control characters
      out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string duration_value(double seconds) {
  return quoted(format_duration_exact(seconds));
}
std::string bandwidth_value(double bps) {
  return quoted(format_bandwidth_exact(bps));
}

bool same_lane(const Lane& a, const Lane& b) {
  return a.up_bps == b.up_bps && a.down_bps == b.down_bps && a.address == b.address;
}

bool lanes_alike(const std::vector<Lane>& lanes) {
  return lanes.front().address.empty() &&
         std::all_of(lanes.begin(), lanes.end(),
                     [&](const Lane& lane) { return same_lane(lane, lanes.front()); });
}

std::string lane_bandwidth_lines(const Lane& lane) {
  if (lane.up_bps == lane.down_bps) {
    return fmt::format("lane_bandwidth = {}\n", bandwidth_value(lane.up_bps));
  }
  return fmt::format("lane_up = {}\nlane_down = {}\n", bandwidth_value(lane.up_bps),
                     bandwidth_value(lane.down_bps));
}

std::string lane_entry(const Lane& lane) {
  std::string entry = fmt::format("{{up = {}, down = {}", bandwidth_value(lane.up_bps),
                                  bandwidth_value(lane.down_bps));
  if (!lane.address.empty()) entry += fmt::format(", address = {}", quoted(lane.address));
  return entry + "}";
}

// cores and lanes of one node (or of every node of a uniform site).
std::string node_shape_lines(const Node& node) {
  std::string out = fmt::format("cores = {}\n", node.cores);
  if (lanes_alike(node.lanes)) {
    return out + fmt::format("lanes = {}\n", node.lanes.size()) +
           lane_bandwidth_lines(node.lanes.front());
  }
  out += "lanes = [\n";
  for (const auto& lane : node.lanes) out += "  " + lane_entry(lane) + ",\n";
  return out + "]\n";
}

bool uniform_site(const Platform& platform, const Site& site) {
  const Node& first = platform.nodes[site.nodes.front()];
  for (std::size_t i = 0; i < site.nodes.size(); ++i) {
    const Node& node = platform.nodes[site.nodes[i]];
    const bool alike =
        node.cores == first.cores && node.lanes.size() == first.lanes.size() &&
        std::equal(node.lanes.begin(), node.lanes.end(), first.lanes.begin(), same_lane);
    if (!alike || node.name != fmt::format("{}-{}", site.name, i)) return false;
  }
  return true;
}

std::string site_section(const Platform& platform, const Site& site) {
  std::string out = fmt::format("[[site]]\nname = {}\nlan_latency = {}\n", quoted(site.name),
                                duration_value(site.lan_latency_s));
  out += fmt::format("shm_copy_bandwidth = {}\nshm_sync_latency = {}\n",
                     bandwidth_value(site.shm.copy_bps), duration_value(site.shm.sync_latency_s));
  out += fmt::format(
      "shm_single_copy_from = {}\nshm_single_copy_bandwidth = {}\nshm_single_copy_latency = {}\n",
      quoted(site.shm.single_copy_from == 0 ? "never" : format_size(site.shm.single_copy_from)),
      bandwidth_value(site.shm.single_copy_bps), duration_value(site.shm.single_copy_latency_s));
  out += fmt::format("reduce_bandwidth = {}\n", bandwidth_value(site.shm.reduce_bps));
  if (!site.nodes.empty() && uniform_site(platform, site)) {
    return out + fmt::format("nodes = {}\n", site.nodes.size()) +
           node_shape_lines(platform.nodes[site.nodes.front()]) + "\n";
  }
  out += "\n";
  for (const int index : site.nodes) {
    const Node& node = platform.nodes[index];
    out += fmt::format("[[site.node]]\nname = {}\n", quoted(node.name)) + node_shape_lines(node) +
           "\n";
  }
  return out;
}

std::string wan_section(const Platform& platform, const WanLink& link) {
  std::string out = fmt::format(
      "[[wan]]\nbetween = [{}, {}]\nlatency = {}\n", quoted(platform.sites[link.site_a].name),
      quoted(platform.sites[link.site_b].name), duration_value(link.latency_s));
  if (link.aggregate_bps > 0)
    out += fmt::format("bandwidth = {}\n", bandwidth_value(link.aggregate_bps));
  if (link.tcp_window_bytes > 0) {
    out += fmt::format(
        "tcp_window = {}\n",
        quoted(format_size(static_cast<std::uint64_t>(std::llround(link.tcp_window_bytes)))));
  }
  const auto& table = link.per_connection_table;
  if (table.size() == 1 && table.front().connections == 1) {
    return out + fmt::format("connection_bandwidth = {}\n\n", bandwidth_value(table.front().bps));
  }
  for (const auto& point : table) {
    out += fmt::format("\n[[wan.connection]]\nconnections = {}\nbandwidth = {}\n",
                       point.connections, bandwidth_value(point.bps));
  }
  return out + "\n";
}

std::string placement_section(const Platform& platform) {
  std::string out = "[placement]\n";
  if (is_block_placement(platform)) {
    return out + fmt::format("mode = \"block\"\nranks = {}\n", platform.num_ranks());
  }
  out += "nodes = [\n";
  for (const auto& place : platform.ranks) {
    out += "  " + quoted(platform.nodes[place.node].name) + ",\n";
  }
  return out + "]\n";
}

}  // namespace

std::string platform_to_toml(const Platform& platform) {
  // The comment holds the name as quoted too: a name with a line break would end it.
  const std::string name = quoted(platform.name);
  std::string out = fmt::format("# Platform {}, written by multilane.\nname = {}\n\n", name, name);
  for (const auto& site : platform.sites) out += site_section(platform, site);
  for (const auto& link : platform.wan_links) out += wan_section(platform, link);
  return out + placement_section(platform);
}

}  // namespace multilane
