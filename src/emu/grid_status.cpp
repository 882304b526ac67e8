// emu_status(): a readable report of an emulation, checked against what exists now.
#include <fmt/format.h>

#include <fstream>
#include <string>

#include "emu/addressing.hpp"
#include "emu/delay_line/counters.hpp"
#include "emu/names.hpp"
#include "emu/netns.hpp"
#include "emu/process.hpp"
#include "emu/state.hpp"
#include "multilane/emu.hpp"
#include "multilane/units.hpp"

namespace multilane {

namespace emu {
namespace {

std::string rate(double bps) {
  return bps > 0 ? format_bandwidth(bps) : "unlimited";
}

std::string presence(const std::string& netns) {
  return netns_exists(netns) ? netns : netns + " (MISSING)";
}

std::string shaping(const Shaping& s) {
  return fmt::format("{} (burst {}, queue {})", rate(s.bps), format_size(s.burst_bytes),
                     format_size(s.queue_bytes));
}

std::string node_lines(const Plan& plan, const NodePlan& node) {
  std::string out = fmt::format("  {:<4}{:<16}{:<10}{}", node.index, node.name,
                                plan.sites[node.site].name, presence(node.netns));
  out += node.tcp_window_bytes > 0
             ? fmt::format("  tcp buffers {} (fixed)\n", format_size(2 * node.tcp_window_bytes))
             : "  tcp buffers: kernel defaults\n";
  for (const LanePlan& lane : node.lanes) {
    const std::string address = fmt::format("{}/{}", lane.address, kLanePrefixLength);
    const bool same = lane.up.bps == lane.down.bps && lane.up.queue_bytes == lane.down.queue_bytes;
    out += same ? fmt::format("      {} {:<16} {} each way\n", lane.node_interface, address,
                              shaping(lane.up))
                : fmt::format("      {} {:<16} up {}, down {}\n", lane.node_interface, address,
                              shaping(lane.up), shaping(lane.down));
  }
  return out;
}

pid_t read_pid(const std::string& path) {
  std::ifstream in(path);
  pid_t pid = 0;
  in >> pid;
  return pid;
}

std::string direction_line(const std::string& from, const std::string& to,
                           const DirectionCounters& c, std::int64_t now) {
  return fmt::format(
      "    {} -> {}: frames in {} out {} ({}), drops queue {} loss {} memory {}, filtered {}, "
      "windows capped {}, queue {} (max {}), in flight {}\n",
      from, to, c.frames_in.load(), c.frames_out.load(), format_size(c.bytes_out.load()),
      c.drops_queue.load(), c.drops_loss.load(), c.drops_memory.load(), c.filtered.load(),
      c.windows_clamped.load(), format_size(queue_bytes_at(c, now)),
      format_size(c.max_queue_bytes.load()), c.in_flight_frames.load());
}

std::string wan_lines(const Plan& plan, const WanPlan& wan) {
  const std::string& a = plan.sites[wan.site_a].name;
  const std::string& b = plan.sites[wan.site_b].name;
  const pid_t pid = read_pid(delay_line_pid_path(plan.name, wan.index));
  const bool running = process_alive(pid);
  std::string out = fmt::format(
      "  {} <-> {}: latency {}, rate {} each way, queue {}, loss {}, tcp window {}; delay line "
      "{}\n",
      a, b, format_duration(wan.latency_s), rate(wan.bps), format_size(wan.queue_bytes), wan.loss,
      wan.tcp_window_bytes > 0 ? format_size(wan.tcp_window_bytes) : "not capped",
      running ? fmt::format("pid {} running", pid) : "NOT RUNNING");
  try {
    const CounterFile counters = CounterFile::open(delay_line_counters_path(plan.name, wan.index));
    const std::int64_t now = monotonic_ns();
    out += direction_line(a, b, counters.block().directions[0], now);
    out += direction_line(b, a, counters.block().directions[1], now);
  } catch (const EmuError&) {
    out += "    no counters (the delay line never started)\n";
  }
  return out;
}

}  // namespace
}  // namespace emu

std::string emu_status(std::string_view name) {
  using namespace emu;
  check_emulation_name(name);
  const Plan plan = load_plan(name);
  std::string out =
      fmt::format("emulation \"{}\": platform {} ({}), mtu {}, {}\n", plan.name, plan.platform_name,
                  plan.platform_source, plan.mtu,
                  is_complete(name) ? "up"
                                    : fmt::format("INCOMPLETE (an `up` is running or crashed; "
                                                  "`multilane emu down --name {}` cleans up)",
                                                  name));
  out += "sites:\n";
  for (const SitePlan& site : plan.sites) {
    out += fmt::format("  {:<14}{}  bridge {}\n", site.name, presence(site.netns), site.bridge);
  }
  out += "nodes:\n";
  for (const NodePlan& node : plan.nodes) out += node_lines(plan, node);
  out += plan.wans.empty() ? "wan links: none\n" : "wan links:\n";
  for (const WanPlan& wan : plan.wans) out += wan_lines(plan, wan);
  return out;
}

}  // namespace multilane
