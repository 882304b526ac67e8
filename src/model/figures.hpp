// model/figures.hpp — the few numbers of a platform the closed forms need, and the pipeline
// formula they share.
#pragma once

#include <cstdint>
#include <vector>

#include "multilane/platform.hpp"

namespace multilane::model {

struct Figures {
  int p = 1;                     // ranks
  std::vector<int> site_ranks;   // ranks per site, the root's site first (empty sites skipped)
  int lanes = 1;                 // lanes of the root's node
  double lane_bps = 0;           // one lane (min of up and down)
  double node_bps = 0;           // b: all lanes
  double lan_s = 0;              // l
  double wan_s = 0;              // L (0 on one site)
  const WanLink* wan = nullptr;  // between the root's site and the next one
  double overhead_s = 0;         // o: per message
  double reduce_bps = 0;         // 1/gamma: bytes one core of the root's site combines per second

  int sites() const { return static_cast<int>(site_ranks.size()); }
  // Rate of one WAN hop opened with `connections` connections (striped over them), when
  // `concurrent` such hops cross at once.
  double wan_rate(int connections, int concurrent = 1) const;
};

Figures figures_of(const Platform& platform, int root, double overhead_s);

// The first site after the root's (wrapping) that has ranks; the root's site if none.
int remote_site(const Platform& platform, int root);

// Pipeline of `hops` hops (of which `wan_hops` cross a WAN), per-hop rate `rate`, message
// `size` cut in segments of `segment`: hops·latency + (hops-1)·(o + s/r) + n·o + M/r.
double pipeline(const Figures& f, int hops, int wan_hops, double rate, std::uint64_t size,
                std::uint64_t segment);

int ceil_log2(int n);   // ceil(log2 n), 0 for n <= 1
int floor_log2(int n);  // floor(log2 n), 0 for n <= 1

}  // namespace multilane::model
