// builders.hpp — every schedule builder, declared for the registry (registry.cpp).
//
// One file per collective (bcast_*.cpp, scatter*.cpp, allgather.cpp, alltoall.cpp), algorithms
// side by side. Parameters are validated by build_schedule() before a builder runs.
#pragma once

#include "multilane/algorithms.hpp"

namespace multilane::algo {

Schedule bcast_linear(const Platform&, const BuildParams&);
Schedule bcast_chain(const Platform&, const BuildParams&);
Schedule bcast_binary(const Platform&, const BuildParams&);
Schedule bcast_binomial(const Platform&, const BuildParams&);
Schedule bcast_vandegeijn(const Platform&, const BuildParams&);
Schedule bcast_multilane(const Platform&, const BuildParams&);
Schedule bcast_multilane_sites(const Platform&, const BuildParams&);
Schedule bcast_dbtree(const Platform&, const BuildParams&);
Schedule bcast_site_binomial(const Platform&, const BuildParams&);

Schedule scatter_linear(const Platform&, const BuildParams&);
Schedule scatter_binomial(const Platform&, const BuildParams&);
Schedule scatter_single_lane(const Platform&, const BuildParams&);
Schedule scatter_multilane(const Platform&, const BuildParams&);
// The node pairs scatter_multilane (and gather_multilane, its reverse) makes cross the WAN:
// the most any remote site gets.
int scatter_multilane_wan_pairs(const Platform&, const BuildParams&);
Schedule gather_linear(const Platform&, const BuildParams&);
Schedule gather_binomial(const Platform&, const BuildParams&);
Schedule gather_single_lane(const Platform&, const BuildParams&);
Schedule gather_multilane(const Platform&, const BuildParams&);

Schedule allgather_ring(const Platform&, const BuildParams&);
Schedule allgather_recursive_doubling(const Platform&, const BuildParams&);
Schedule allgather_multilane_sites(const Platform&, const BuildParams&);

Schedule reduce_binomial(const Platform&, const BuildParams&);
Schedule reduce_binary(const Platform&, const BuildParams&);
Schedule reduce_chain(const Platform&, const BuildParams&);
Schedule reduce_two_tree(const Platform&, const BuildParams&);
Schedule reduce_multilane(const Platform&, const BuildParams&);
Schedule reduce_rabenseifner(const Platform&, const BuildParams&);
Schedule reduce_multilane_sites(const Platform&, const BuildParams&);
// k, the lanes across the WAN of every multilane-sites reduction (site_lanes.cpp).
int multilane_sites_wan_pairs(const Platform&, const BuildParams&);

Schedule allreduce_recursive_doubling(const Platform&, const BuildParams&);
Schedule allreduce_ring(const Platform&, const BuildParams&);
Schedule allreduce_rabenseifner(const Platform&, const BuildParams&);
Schedule allreduce_two_tree(const Platform&, const BuildParams&);
Schedule allreduce_multilane(const Platform&, const BuildParams&);
Schedule allreduce_multilane_sites(const Platform&, const BuildParams&);

Schedule reduce_scatter_ring(const Platform&, const BuildParams&);
Schedule reduce_scatter_pairwise(const Platform&, const BuildParams&);
Schedule reduce_scatter_recursive_halving(const Platform&, const BuildParams&);
Schedule reduce_scatter_multilane_sites(const Platform&, const BuildParams&);

// The prefix reductions (scan.cpp).
Schedule scan_chain(const Platform&, const BuildParams&);
Schedule scan_recursive_doubling(const Platform&, const BuildParams&);
Schedule scan_multilane_sites(const Platform&, const BuildParams&);
// k, the lanes into each later site of the multilane-sites scans (the fewest of any site).
int scan_multilane_sites_wan_pairs(const Platform&, const BuildParams&);
Schedule exscan_chain(const Platform&, const BuildParams&);
Schedule exscan_recursive_doubling(const Platform&, const BuildParams&);
Schedule exscan_multilane_sites(const Platform&, const BuildParams&);

Schedule alltoall_pairwise(const Platform&, const BuildParams&);
Schedule alltoall_linear(const Platform&, const BuildParams&);
Schedule alltoall_multilane_sites(const Platform&, const BuildParams&);

// Two-level SMP collectives (hier_shm.cpp).
Schedule bcast_hier_shm(const Platform&, const BuildParams&);
Schedule bcast_hier_shm_vdg(const Platform&, const BuildParams&);
Schedule scatter_hier_shm(const Platform&, const BuildParams&);
Schedule gather_hier_shm(const Platform&, const BuildParams&);
// The node pairs of the leaders' scatter of scatter_hier_shm (and gather_hier_shm, its
// reverse) for `hier-shm:X`; 0 when the nodes' blocks go without X (the flat tree).
int hier_shm_scatter_wan_pairs(const Platform&, const BuildParams&);
Schedule allgather_hier_shm(const Platform&, const BuildParams&);
Schedule alltoall_hier_shm(const Platform&, const BuildParams&);
// Reductions through a node's shared memory, slices across the nodes on rails
// (hier_shm_reduce.cpp).
Schedule reduce_hier_shm(const Platform&, const BuildParams&);
Schedule allreduce_hier_shm(const Platform&, const BuildParams&);

}  // namespace multilane::algo
