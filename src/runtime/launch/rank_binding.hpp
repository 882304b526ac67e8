// runtime/launch/rank_binding.hpp — which processing unit each rank of a local job runs on.
//
// `multilane launch` binds rank i to one core, as mpirun does by default for small jobs: a
// rank that the scheduler moves between cores loses its caches, and two ranks of a node that
// land on one core take turns instead of copying in parallel (the shared-memory collectives'
// large calls were bimodal from run to run because of it). Ranks go to cores in hwloc's core
// order, rank i to the first processing unit of core i mod cores.
//
//   auto  bind when the ranks fit the cores this process may use, else leave them unbound
//         (mpirun's default too: ranks that share cores are better left to the scheduler)
//   core  always bind, wrapping round the cores when the ranks outnumber them
//   none  never bind
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace multilane::runtime {

enum class RankBinding { Auto, Core, None };

// "auto", "core", "none"; nullopt for anything else.
std::optional<RankBinding> parse_rank_binding(std::string_view text);
std::string_view to_string(RankBinding binding);

// Per rank, the processing unit it is bound to, or -1 when it is not bound. `units_by_core`
// as in shm::Topology, `cores` how many of them lead a core; no units: nobody is bound.
std::vector<int> rank_units(int ranks, RankBinding binding, const std::vector<int>& units_by_core,
                            int cores);

// rank_units() on this machine (shm::machine_topology()).
std::vector<int> rank_units_here(int ranks, RankBinding binding);

}  // namespace multilane::runtime
