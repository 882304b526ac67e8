// runtime/shm/topology.cpp — see topology.hpp.
#include "runtime/shm/topology.hpp"

#include <hwloc.h>
#include <unistd.h>

#include <algorithm>

namespace multilane::runtime::shm {

namespace {

Topology fallback() {
  Topology t;
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  t.cores = t.hardware_threads = static_cast<int>(std::max(online, 1L));
  return t;
}

// The first allowed processing unit of every core, then the other allowed units. hwloc 2 keeps
// only the units this process may use in a topology loaded with the default flags.
std::vector<int> list_units_by_core(hwloc_topology_t topology) {
  std::vector<int> first, others;
  const int cores = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_CORE);
  for (int c = 0; c < cores; ++c) {
    const hwloc_obj_t core =
        hwloc_get_obj_by_type(topology, HWLOC_OBJ_CORE, static_cast<unsigned>(c));
    bool seen_first = false;
    for (int unit = hwloc_bitmap_first(core->cpuset); unit >= 0;
         unit = hwloc_bitmap_next(core->cpuset, unit)) {
      (seen_first ? others : first).push_back(unit);
      seen_first = true;
    }
  }
  first.insert(first.end(), others.begin(), others.end());
  return first;
}

Topology discover() {
  hwloc_topology_t topology;
  if (hwloc_topology_init(&topology) != 0) return fallback();
  Topology t = fallback();
  if (hwloc_topology_load(topology) == 0) {
    const int cores = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_CORE);
    const int threads = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_PU);
    const int numa = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_NUMANODE);
    if (cores > 0 && threads > 0) {
      t.cores = cores;
      t.hardware_threads = threads;
      t.numa_nodes = std::max(numa, 1);
      t.from_hwloc = true;
      t.units_by_core = list_units_by_core(topology);
    }
  }
  hwloc_topology_destroy(topology);
  return t;
}

}  // namespace

const Topology& machine_topology() {
  static const Topology topology = discover();
  return topology;
}

}  // namespace multilane::runtime::shm
