// runtime/launch/rank_binding.cpp — see rank_binding.hpp.
#include "runtime/launch/rank_binding.hpp"

#include <algorithm>

#include "runtime/shm/topology.hpp"

namespace multilane::runtime {

std::optional<RankBinding> parse_rank_binding(std::string_view text) {
  if (text == "auto") return RankBinding::Auto;
  if (text == "core") return RankBinding::Core;
  if (text == "none") return RankBinding::None;
  return std::nullopt;
}

std::string_view to_string(RankBinding binding) {
  switch (binding) {
    case RankBinding::Auto:
      return "auto";
    case RankBinding::Core:
      return "core";
    case RankBinding::None:
      return "none";
  }
  return "none";
}

std::vector<int> rank_units(int ranks, RankBinding binding, const std::vector<int>& units_by_core,
                            int cores) {
  std::vector<int> units(static_cast<std::size_t>(std::max(ranks, 0)), -1);
  cores = std::min(cores, static_cast<int>(units_by_core.size()));
  if (cores < 1 || binding == RankBinding::None) return units;
  if (binding == RankBinding::Auto && ranks > cores) return units;
  for (int rank = 0; rank < ranks; ++rank) {
    units[static_cast<std::size_t>(rank)] = units_by_core[static_cast<std::size_t>(rank % cores)];
  }
  return units;
}

std::vector<int> rank_units_here(int ranks, RankBinding binding) {
  const shm::Topology& topology = shm::machine_topology();
  return rank_units(ranks, binding, topology.units_by_core, topology.cores);
}

}  // namespace multilane::runtime
