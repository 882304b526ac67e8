// runtime/shm/topology.hpp — this machine's cores and NUMA nodes, from hwloc.
//
// Used where no platform file describes the node: how many ranks `multilane tune shm` runs by
// default (one per core, the paper's B), and whether the ranks of a group outnumber the cores
// (then waiters sleep at once instead of polling; shm_group.hpp default_spin()). Discovery runs
// once per process; when hwloc fails, the figures fall back to sysconf's online processors and
// one NUMA node.
#pragma once

namespace multilane::runtime::shm {

struct Topology {
  int cores = 1;             // physical cores
  int hardware_threads = 1;  // processing units (cores x SMT)
  int numa_nodes = 1;
  bool from_hwloc = false;  // false: the sysconf fallback
};

const Topology& machine_topology();

}  // namespace multilane::runtime::shm
