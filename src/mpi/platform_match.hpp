// mpi/platform_match.hpp — the ranks of a communicator placed on the nodes of a platform file
// (MULTILANE_PLATFORM), by name or by lane address.
//
// A file gives what discovery (discovery.hpp) guesses or cannot see: bandwidths, TCP windows,
// the WAN's per-connection figures (`multilane platform probe` measures them and writes such a
// file). Each rank names its node by MULTILANE_HOST_ID when set, else by its host name; the rank
// goes on the file's node of that name (the full name, or the part before the first dot), else
// on the node one of whose lane addresses is an address of the rank's host (the emulated grid's
// nodes share one host name), on its next free core. Ranks are placed in rank order, so the
// placement is the same on every rank. A rank whose node is not in the file, or a node with more
// ranks than cores, is an error naming the file, the rank and the name
// ("MULTILANE_PLATFORM=grid.toml: rank 3 runs on \"n17\", which is not a node of the file
// (nodes: n0, n1, ...)").
#pragma once

#include <string>
#include <vector>

#include "multilane/platform.hpp"

namespace multilane::mpi {

// Where a rank runs: its node name (MULTILANE_HOST_ID, else the host name) and its host's
// IPv4 addresses.
struct RankHost {
  std::string name;
  std::vector<std::string> addresses;
};
RankHost this_rank_host();
// As one line of text for an all-gather, and back (throws CommunicationError).
std::string rank_host_text(const RankHost& host);
RankHost parse_rank_host(const std::string& text);

// `file` (its nodes, sites and links) with exactly the ranks of `hosts` (rank -> where it
// runs) placed; `path` names the file in errors. Throws UsageError.
Platform place_on_file(const Platform& file, const std::string& path,
                       const std::vector<RankHost>& hosts);

}  // namespace multilane::mpi
