// emu/plan.hpp — everything an emulated grid is made of, decided before anything is built.
//
// make_plan turns a platform and the `up` options into names (namespaces, interfaces),
// addresses, shaping and TCP-buffer figures and delay-line parameters. It is pure: `up`
// creates exactly what the plan lists, `down`, `status`, `exec` and the delay lines read the
// plan back from /run/multilane/NAME/plan.json (plan_to_json / plan_from_json round-trip).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "multilane/emu.hpp"
#include "multilane/platform.hpp"

namespace multilane::emu {

// A tbf qdisc: rate, bucket depth and queue (bytes waiting for tokens; beyond it, drops).
struct Shaping {
  double bps = 0;
  std::uint64_t burst_bytes = 0;
  std::uint64_t queue_bytes = 0;
};

struct LanePlan {
  std::string node_interface;  // in the node's namespace: "lane<l>"
  std::string site_interface;  // its veth peer in the site's namespace: "n<g>l<l>"
  std::string address;         // "198.18.16.1"
  std::string mac;             // "02:6d:6c:00:00:01"
  Shaping up;                  // node -> bridge (tbf on node_interface)
  Shaping down;                // bridge -> node (tbf on site_interface)
};

struct NodePlan {
  int index = 0;
  std::string name;
  int site = 0;
  int cores = 1;
  std::string netns;
  std::vector<LanePlan> lanes;
  // TCP buffers of the node's sockets: the largest window of its WAN links (0: kernel
  // defaults kept), written as fixed buffers of 2·window (net.ipv4.tcp_{r,w}mem, receive
  // autotuning off): the kernel keeps about half of a socket buffer for bookkeeping, which is
  // also why SO_RCVBUF doubles its argument. The exact cap is the delay line's (WanPlan).
  std::uint64_t tcp_window_bytes = 0;
};

struct SitePlan {
  std::string name;
  std::string netns;
  std::string bridge = "sitebr";  // not "br": `ip link add br` reads it as "broadcast"
};

struct WanPlan {
  int index = 0;
  int site_a = 0, site_b = 0;
  std::string tap_a;  // TAP port on site_a's bridge: "wan<site_b>"
  std::string tap_b;  // TAP port on site_b's bridge: "wan<site_a>"
  double latency_s = 0;
  double bps = 0;  // each direction; 0: unlimited
  std::uint64_t queue_bytes = 0;
  double loss = 0;
  std::uint64_t seed = 1;
  std::uint64_t tcp_window_bytes = 0;  // the delay line caps every connection's window (0: no)
};

struct Plan {
  std::string name;
  std::string platform_name;
  std::string platform_source;
  int mtu = 9000;
  std::vector<SitePlan> sites;
  std::vector<NodePlan> nodes;
  std::vector<WanPlan> wans;
};

// Throws UsageError when the name is malformed or the platform exceeds the address plan
// (16 sites, 254 nodes per site, 32 lanes) or an option is out of range.
Plan make_plan(const Platform& platform, const EmuOptions& options);

// The TCP window of a WAN link: its tcp_window, else its one-connection cap times the round
// trip (0 when nothing caps a connection).
std::uint64_t wan_tcp_window(const WanLink& link);
// The largest window over the WAN links of `site` (0 when none has one).
std::uint64_t node_tcp_window(const Platform& platform, int site);

// Default WAN queue: one bandwidth-delay product (B·2L), at least 32 frames of the MTU.
std::uint64_t default_wan_queue(double bps, double latency_s, int mtu);

// A lane's tbf: bucket of max(2 frames, 0.5 ms at the rate); queue of one bandwidth-delay
// product of the longest round trip the lane carries (`rtt_s`), at least 1 ms and 4 buckets.
Shaping lane_shaping(double bps, double rtt_s, int mtu);

nlohmann::json plan_to_json(const Plan& plan);
// Throws EmuError naming the missing or mistyped field.
Plan plan_from_json(const nlohmann::json& json);

}  // namespace multilane::emu
