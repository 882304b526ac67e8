// multilane/wan_pairs.hpp — how many node pairs should cross the WAN (scatter/gather paper).
//
// Multi-lane scatter (Chiba, Endo, Matsuoka; IPSJ 2008): the root (site 0, n0 nodes) sends to
// P-1 "Dep_send" nodes of its site the blocks they will carry; each of the P senders (the root
// included) ships its share across the WAN to a "Dep_recv" partner in site 1 (n1 nodes), which
// hands the blocks out locally. With per-destination message M:
//
//   T(P) = L + X(P)·M / b_WAN(P) + Y(P)·M / b_LAN + α
//   X(P) = ceil(n1 / P)
//   Y(P) = n0 + n1 - 1 - X(P)   if n0 >= n1
//   Y(P) = n1 + P - 2           otherwise
//   1 <= P <= min(n0, n1);  P_opt = argmin T(P)
//
// b_WAN(P) is the per-connection WAN bandwidth with P connections active (the platform's
// table or TCP window cap, and at most B_WAN / P), b_LAN the node's bandwidth.
#pragma once

#include <cstdint>

#include "multilane/platform.hpp"

namespace multilane {

struct WanPairsInputs {
  int n0 = 1;                     // ranks in the root's site
  int n1 = 1;                     // ranks in the remote site
  double wan_latency_s = 0;       // L
  double lan_bps = 0;             // b_LAN
  double overhead_s = 0;          // α
  const WanLink* link = nullptr;  // gives b_WAN(P); nullptr: no WAN between the sites
};

int wan_pairs_x(int n1, int pairs);
int wan_pairs_y(int n0, int n1, int pairs);
int max_wan_pairs(const WanPairsInputs& in);
// b_WAN(P), never above the node bandwidth b_LAN.
double wan_pairs_connection_bps(const WanPairsInputs& in, int pairs);
double wan_pairs_time(const WanPairsInputs& in, int pairs, std::uint64_t size);
// The P in [1, min(n0, n1)] with the smallest T(P) (the smallest such P on ties).
int optimal_wan_pairs(const WanPairsInputs& in, std::uint64_t size);

// The model's inputs for scattering from `root`'s site to `remote_site` on a platform.
WanPairsInputs wan_pairs_inputs(const Platform& platform, int root, int remote_site);

}  // namespace multilane
