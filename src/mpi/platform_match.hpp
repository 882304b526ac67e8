// mpi/platform_match.hpp — the ranks of a communicator placed on the nodes of a platform file
// (MULTILANE_PLATFORM), by name.
//
// Without a file the library only knows which ranks share a host (host_identity.hpp): one site,
// one lane per node. A file adds what cannot be discovered cheaply yet: sites, WAN links, lanes
// and their addresses. Each rank names its node by MULTILANE_HOST_ID when set, else by its host
// name (the full name, or the part before the first dot); the rank goes on the file's node of
// that name, on its next free core. Ranks are placed in rank order, so the placement is the same
// on every rank. A rank whose node is not in the file, or a node with more ranks than cores, is
// an error naming the file, the rank and the name ("MULTILANE_PLATFORM=grid.toml: rank 3 runs on
// \"n17\", which is not a node of the file (nodes: n0, n1, ...)").
#pragma once

#include <string>
#include <vector>

#include "multilane/platform.hpp"

namespace multilane::mpi {

// This rank's node name: MULTILANE_HOST_ID, else the host name.
std::string node_name();
// `file` (its nodes, sites and links) with exactly the ranks of `names` (rank -> node name)
// placed; `path` names the file in errors. Throws UsageError.
Platform place_by_name(const Platform& file, const std::string& path,
                       const std::vector<std::string>& names);

}  // namespace multilane::mpi
