// mpi/discovered_platform.hpp — the platform of a communicator when no file describes it:
// nodes from host hashes (host_identity.hpp), sites from MULTILANE_SITE.
//
// Ranks with equal host hashes share a node, numbered by their first rank; every node has one
// lane and as many cores as ranks. Each rank may name its site (MULTILANE_SITE, "" when unset);
// a node belongs to the site of its ranks, and sites are numbered by their first rank (one site
// "mpi" when nobody names one). The figures are guesses that only serve to rank the algorithms,
// the runtime's defaults for a job without a file: 10 Gbit/s lanes, 20 us inside a site, and
// between sites 5 ms one way, 10 Gbit/s in all and 4 MiB TCP windows. MULTILANE_PLATFORM gives
// real ones.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "multilane/platform.hpp"

namespace multilane::mpi {

// This rank's site name: MULTILANE_SITE, or "".
std::string site_name();
// rank -> host hash and rank -> site name, as gathered. Throws UsageError when two ranks of one
// node name different sites.
Platform discovered_platform(const std::vector<std::uint64_t>& hashes,
                             const std::vector<std::string>& sites);

}  // namespace multilane::mpi
