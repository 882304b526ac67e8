// bench/simgrid_platform.hpp — a multilane Platform rebuilt as a SimGrid platform with the S4U
// NetZone API, and the SimGrid configuration that makes SimGrid's network model comparable to
// multilane's simulator.
//
// SimGrid routes a communication between two hosts along one fixed list of links, while a node of
// ours has several NICs (lanes) and a transfer names the lane it uses. So every (node, lane)
// becomes a SimGrid host, and a transfer on lane i is a comm between the lane-i hosts of the two
// nodes. Links and routes (one Full zone, every route declared one way):
//
//   node<N>/lane<I>-up, -down   SHARED, the lane's up / down bandwidth, no latency (full duplex)
//   <site>-lan                  FATPIPE (a non-blocking switch), the site's LAN latency
//   <siteA>-><siteB>            SHARED, the WAN link's aggregate bandwidth (FATPIPE when it has
//                               none), its one-way latency; one link per direction
//   route, same site:           lane up, <site>-lan, lane down
//   route, across sites:        lane up, <siteA>-><siteB>, lane down
//
// so the latency of a route is exactly what multilane's simulator charges a message: the LAN
// latency or the WAN latency. Each node also gets a host node<N>/memory with one core per core of
// the node at the site's copy bandwidth (flop/s = bytes/s), where a local Copy runs as an Exec of
// `bytes` flops: capped at one core's copy bandwidth, sharing the node's copy_bps x cores like
// the simulator's memory resource.
//
// The per-connection WAN cap is SimGrid's TCP-gamma: CM02 bounds a flow's rate by
// gamma / (2 x route latency), which is the cap window / RTT of a TCP window; simgrid_settings()
// derives gamma from the platform and says where SimGrid cannot express the platform exactly.
#pragma once

#include <string>
#include <vector>

#include "multilane/platform.hpp"

namespace simgrid::s4u {
class Host;
class Link;
}  // namespace simgrid::s4u

namespace multilane::simgrid_peer {

// Configuration strings for simgrid::s4u::Engine::set_config ("key:value"), and what SimGrid
// cannot reproduce of the platform (empty when it is exact). Pure: needs no SimGrid engine.
struct SimGridSettings {
  std::vector<std::string> config;
  double tcp_gamma_bytes = 0;
  std::vector<std::string> caveats;
};
SimGridSettings simgrid_settings(const Platform& platform);

// The SimGrid platform of `platform`, created in the running engine, which must have been
// configured with simgrid_settings() and must have no netzone yet (this creates the root zone).
class SimGridPlatform {
 public:
  explicit SimGridPlatform(const Platform& platform);

  simgrid::s4u::Host* lane_host(int node, int lane) const {
    return lane_hosts_[lane_base_[node] + lane];
  }
  simgrid::s4u::Host* memory_host(int node) const { return memory_hosts_[node]; }
  // Whether a route joins the lane hosts of two nodes of these sites (false: no WAN link).
  bool sites_connected(int site_a, int site_b) const;

 private:
  const Platform& platform_;
  std::vector<int> lane_base_;  // per node, index of its lane 0 in lane_hosts_
  std::vector<simgrid::s4u::Host*> lane_hosts_;
  std::vector<simgrid::s4u::Host*> memory_hosts_;
  std::vector<simgrid::s4u::Link*> lane_up_, lane_down_;  // parallel to lane_hosts_
  std::vector<simgrid::s4u::Link*> site_lan_;             // per site
  std::vector<simgrid::s4u::Link*> wan_;                  // sites x sites, nullptr when none
};

}  // namespace multilane::simgrid_peer
