// multilane/model.hpp — closed-form cost models of the collective algorithms.
//
// model_time() gives the papers' closed forms, generalised to the platform at hand and to the
// pipelining the builders do (segment size s, n = ceil(M/s) segments, per-message overhead o):
// a pipeline of h hops at per-hop rate r costs  h·l + (h-1)·(o + s/r) + n·o + M/r.
//
//   bcast   chain        pipeline over p-1 hops (a WAN hop costs L and runs at the WAN rate)
//           binary       root feeds one representative per remote site, then a pipelined
//                        heap-shaped binary tree per site, one lane per child: 2M/b
//           multilane    two binary trees of M/2 each, leaves swap halves: M/b
//           multilane-sites  the same per site, sites chained
//           dbtree       two trees of M/2, every rank inner in at most one
//           binomial     ceil(log2 p)·(l + M/b);  site-binomial: MagPIe, the paper's sec. 6 form
//           linear       l + (p-1)·M/b
//           vandegeijn   2·ceil(log2 p)·l + 2·(p-1)/p·M/b
//   scatter, gather   linear, binomial, single-lane (MagPIe:  L + n1·M/b_WAN(1) +
//           (max(n0,n1)-1)·(l + M/b_LAN)), multilane (T(P) of wan_pairs.hpp)
//   allgather ring, recursive-doubling; alltoall pairwise, linear (one site)
//
// Here b is the node bandwidth (sum of the root node's lanes), l the LAN and L the WAN
// latency; a WAN hop of k connections runs at min(b, k·cap(k), B_WAN). The two-level SMP sum
// (tunable SMP collectives paper) is smp_two_level_time(). Throws UsageError when an
// algorithm has no closed form on the platform, saying so.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "multilane/algorithms.hpp"
#include "multilane/platform.hpp"
#include "multilane/schedule.hpp"

namespace multilane {

// Closed-form completion time of `algorithm` for `params` (size, segment, wan_pairs, root).
double model_time(const Platform& platform, Collective collective, std::string_view algorithm,
                  const BuildParams& params, double per_message_overhead_s = 0);
bool has_closed_form(const Platform& platform, Collective collective, std::string_view algorithm);

// Two-level sum of the SMP paper: the inter-node algorithm over one rank per node, plus the
// intra-node stage through shared memory (sender put + group sync + group get:
// sync + 2·M/copy_bps for bcast, and for scatter/gather the root node's cores-1 blocks).
double smp_two_level_time(const Platform& platform, Collective collective,
                          std::string_view inter_node_algorithm, const BuildParams& params);

// Segment sizes worth simulating for a pipelined algorithm: the three with the best model time
// among the powers of two in [max(min_segment, M/max_segments), M] (and M itself), best first.
// The model's optimum is s* = sqrt(M·o·r/(h-1)); with o = 0 it is the smallest segment allowed,
// so max_segments bounds the cost of simulating it.
std::vector<std::uint64_t> segment_candidates(const Platform& platform, Collective collective,
                                              std::string_view algorithm, const BuildParams& params,
                                              double overhead_s, int max_segments = 1024,
                                              std::uint64_t min_segment = 4096);
// The best of segment_candidates() by the model alone.
std::uint64_t choose_segment(const Platform& platform, Collective collective,
                             std::string_view algorithm, const BuildParams& params,
                             double overhead_s, int max_segments = 1024);

// T(P) for every P in 1..min(n0, n1) (the scatter/gather paper's figures 9-10), for the
// root's site and the first other site.
struct WanPairsPoint {
  int pairs = 0;
  double time_s = 0;
};
std::vector<WanPairsPoint> wan_pairs_sweep(const Platform& platform, int root, std::uint64_t size);

}  // namespace multilane
