// emu_up(): builds an emulated grid from its plan (see multilane/emu.hpp and emu/plan.hpp).
#include <fmt/format.h>
#include <unistd.h>

#include <cmath>
#include <string>
#include <vector>

#include "emu/addressing.hpp"
#include "emu/names.hpp"
#include "emu/netns.hpp"
#include "emu/plan.hpp"
#include "emu/process.hpp"
#include "emu/state.hpp"
#include "multilane/emu.hpp"
#include "multilane/platform_file.hpp"

namespace multilane {

namespace emu {
namespace {

constexpr int kReadyFd = 3;
constexpr auto kDelayLineStartTimeout = std::chrono::seconds(10);

// Namespaces left by an emulation whose state directory is gone (removed by hand).
void check_no_leftovers(const std::string& name) {
  for (const std::string& netns : list_netns()) {
    if (is_netns_of(name, netns)) {
      throw EmuError(
          fmt::format("network namespace {} of emulation \"{}\" is left over; run "
                      "`multilane emu down --name {}` first",
                      netns, name, name));
    }
  }
}

void create_namespaces(const Plan& plan) {
  std::string batch;
  for (const SitePlan& site : plan.sites) batch += fmt::format("netns add {}\n", site.netns);
  for (const NodePlan& node : plan.nodes) batch += fmt::format("netns add {}\n", node.netns);
  run_checked({"ip", "-batch", "-"}, batch);
}

void disable_ipv6() {
  // IPv6 would only add router solicitations and neighbour discovery to the bridges.
  if (access("/proc/sys/net/ipv6", F_OK) != 0) return;
  write_sysctl("net/ipv6/conf/all/disable_ipv6", "1");
  write_sysctl("net/ipv6/conf/default/disable_ipv6", "1");
}

void configure_site_sysctls(const SitePlan& site) {
  NetnsScope inside(site.netns);
  disable_ipv6();
}

void configure_node_sysctls(const NodePlan& node) {
  NetnsScope inside(node.netns);
  disable_ipv6();
  // Lanes of a node share a bridge: answer ARP only on the lane that owns the address, so
  // traffic for lane 1 never enters through lane 0.
  write_sysctl("net/ipv4/conf/all/arp_ignore", "1");
  write_sysctl("net/ipv4/conf/all/arp_announce", "2");
  // Each connection starts afresh instead of from the previous one's ssthresh.
  write_sysctl("net/ipv4/tcp_no_metrics_save", "1");
  // Fixed buffers of twice the WAN window, as hosts of the papers' days had: the window a
  // socket can offer is about half its buffer, so they allow the window the delay line
  // enforces exactly (window_clamp.hpp) and not much more.
  if (node.tcp_window_bytes == 0) return;
  const std::uint64_t buffer = 2 * node.tcp_window_bytes;
  write_sysctl("net/ipv4/tcp_moderate_rcvbuf", "0");
  write_sysctl("net/ipv4/tcp_rmem", fmt::format("4096 {0} {0}", buffer));
  write_sysctl("net/ipv4/tcp_wmem",
               fmt::format("4096 {} {}", std::min<std::uint64_t>(16384, buffer), buffer));
}

std::string tbf(const std::string& device, const Shaping& s) {
  return fmt::format("qdisc add dev {} root tbf rate {}bit burst {} limit {}\n", device,
                     std::llround(s.bps * 8), s.burst_bytes, s.queue_bytes);
}

// The bridge, one veth pair per lane of each node of the site, a TAP port per WAN link.
void build_site(const Plan& plan, int s) {
  const SitePlan& site = plan.sites[s];
  std::string links =
      fmt::format("link set lo up\nlink add name {0} type bridge\nlink set {0} mtu {1} up\n",
                  site.bridge, plan.mtu);
  std::string shaping;
  for (const NodePlan& node : plan.nodes) {
    if (node.site != s) continue;
    for (const LanePlan& lane : node.lanes) {
      links += fmt::format(
          "link add name {} mtu {} type veth peer name {} netns {} address {} mtu {}\n",
          lane.site_interface, plan.mtu, lane.node_interface, node.netns, lane.mac, plan.mtu);
      links += fmt::format("link set {} master {} up\n", lane.site_interface, site.bridge);
      shaping += tbf(lane.site_interface, lane.down);
    }
  }
  for (const WanPlan& wan : plan.wans) {
    if (wan.site_a != s && wan.site_b != s) continue;
    const std::string& tap = wan.site_a == s ? wan.tap_a : wan.tap_b;
    links += fmt::format("tuntap add dev {} mode tap\nlink set {} mtu {} master {} up\n", tap, tap,
                         plan.mtu, site.bridge);
  }
  run_checked({"ip", "-n", site.netns, "-batch", "-"}, links);
  if (!shaping.empty()) run_checked({"tc", "-n", site.netns, "-batch", "-"}, shaping);
}

void build_node(const NodePlan& node) {
  std::string links = "link set lo up\n";
  std::string shaping;
  for (const LanePlan& lane : node.lanes) {
    links += fmt::format("address add {}/{} dev {}\nlink set {} up\n", lane.address,
                         kLanePrefixLength, lane.node_interface, lane.node_interface);
    shaping += tbf(lane.node_interface, lane.up);
  }
  run_checked({"ip", "-n", node.netns, "-batch", "-"}, links);
  run_checked({"tc", "-n", node.netns, "-batch", "-"}, shaping);
}

void start_delay_lines(const Plan& plan, const std::string& program) {
  for (const WanPlan& wan : plan.wans) {
    spawn_daemon({program, "emu", "delay-line", "--name", plan.name, "--link",
                  std::to_string(wan.index), "--ready-fd", std::to_string(kReadyFd)},
                 delay_line_log_path(plan.name, wan.index), kReadyFd, kDelayLineStartTimeout);
  }
}

void build(const Plan& plan, const std::string& program) {
  create_namespaces(plan);
  for (const SitePlan& site : plan.sites) configure_site_sysctls(site);
  for (const NodePlan& node : plan.nodes) configure_node_sysctls(node);
  for (int s = 0; s < static_cast<int>(plan.sites.size()); ++s) build_site(plan, s);
  for (const NodePlan& node : plan.nodes) build_node(node);
  start_delay_lines(plan, program);
}

// The grid's platform with each lane's emulated address, so that the PMPI library given it as
// MULTILANE_PLATFORM places ranks by lane address (every emulated node shares the host's name)
// and prices with the shaped rates rather than the veth's nominal speed.
Platform with_lane_addresses(Platform platform, const Plan& plan) {
  for (const NodePlan& node : plan.nodes) {
    std::vector<Lane>& lanes = platform.nodes.at(static_cast<std::size_t>(node.index)).lanes;
    for (std::size_t l = 0; l < node.lanes.size(); ++l) lanes.at(l).address = node.lanes[l].address;
  }
  return platform;
}

}  // namespace
}  // namespace emu

void emu_up(const Platform& platform, const EmuOptions& options) {
  using namespace emu;
  const Plan plan = make_plan(platform, options);
  require_emu_support();
  if (state_exists(plan.name)) claim_state(plan.name);  // throws "already up"
  check_no_leftovers(plan.name);
  claim_state(plan.name);
  try {
    save_plan(plan);
    write_file_atomically(run_dir(plan.name) + "/platform.toml",
                          platform_to_toml(with_lane_addresses(platform, plan)));
    build(plan, options.delay_line_program.empty() ? own_executable() : options.delay_line_program);
    mark_complete(plan.name);
  } catch (...) {
    try {
      emu_down(plan.name);
    } catch (...) {  // the first failure is the one to report
    }
    throw;
  }
}

}  // namespace multilane
