// mpi/route_tuning.hpp — the routes the MPI library measured, as a tuning file a later run
// starts from (MULTILANE_TUNING=FILE, docs/mpi.md "The tuning file").
//
// The file is TOML and meant to be read and edited. It shares its file with the
// shared-memory tuning of `multilane tune shm` ([[shm]] tables, runtime/shm/tuning_file.hpp),
// which is kept as it is when the routes are written:
//
//   [[placement]]
//   mpi_library = "Open MPI v4.1.4, package: Debian OpenMPI, ..."   # PMPI_Get_library_version
//   multilane = "0.1.0"
//   placement = "4 ranks on 1 node of 1 site"                       # for the reader
//   fingerprint = "9f0c6a1e2b7d4c55"   # where each rank runs (site, node, lanes): the key
//   ranks = 4
//
//     [[placement.class]]
//     call = "MPI_Allreduce"          # MPI_Bcast ... MPI_Reduce_scatter_block, MPI_Barrier
//     bytes = 1024                    # the class holds calls of bytes .. 2 * bytes - 1
//     type = "float"                  # reductions only: element type and operation
//     op = "sum"
//     route = "multilane"             # "mpi" or "multilane": what the class runs
//     source = "measured"             # measured, pruned, model or tuning file
//     mpi_us = 41.2                   # the agreed times (mean over ranks; slowest from 1 MiB)
//     multilane_us = 18.0
//
// Only a placement whose four keys match the run is used; the others are kept for other runs.
// Errors name the file, the line and the key.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "mpi/measured_route.hpp"

namespace multilane::mpi {

struct PlacementRoutes {
  std::string mpi_library;
  std::string multilane_version;
  std::string placement;    // words for the reader
  std::string fingerprint;  // placement_fingerprint()
  int ranks = 0;
  std::map<std::uint64_t, ClassDecision> classes;  // by CallClass::key()

  bool same_run(const PlacementRoutes& other) const {
    return mpi_library == other.mpi_library && multilane_version == other.multilane_version &&
           fingerprint == other.fingerprint && ranks == other.ranks;
  }
};

struct RouteTuning {
  std::vector<PlacementRoutes> placements;
  std::string others;  // the file's other tables ([[shm]]), as TOML, kept on writing
};

// Throws UsageError naming `path`, the line and the key.
RouteTuning parse_route_tuning(std::string_view text, const std::string& path);
std::string format_route_tuning(const RouteTuning& tuning);

}  // namespace multilane::mpi
