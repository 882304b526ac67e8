// runtime/shm/topology.hpp — this machine's cores and NUMA nodes, from hwloc.
//
// Used where no platform file describes the node: how many ranks `multilane tune shm` runs by
// default (one per core, the paper's B), whether the ranks of a group outnumber the cores
// (then waiters yield the core while they poll; shm_group.hpp default_polling()), and which
// processing unit `multilane launch` binds each rank to (rank_binding.hpp). Discovery runs
// once per process; when hwloc fails, the figures fall back to sysconf's online processors and
// one NUMA node.
#pragma once

#include <vector>

namespace multilane::runtime::shm {

struct Topology {
  int cores = 1;             // physical cores
  int hardware_threads = 1;  // processing units (cores x SMT)
  int numa_nodes = 1;
  bool from_hwloc = false;  // false: the sysconf fallback
  // Operating-system indices of the processing units this process may run on: the first of
  // every core, in core order (so NUMA nodes fill one after the other), then the others.
  // Empty in the sysconf fallback.
  std::vector<int> units_by_core;
};

const Topology& machine_topology();

}  // namespace multilane::runtime::shm
