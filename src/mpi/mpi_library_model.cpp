// mpi/mpi_library_model.cpp — the MPI library's modelled cost (mpi_library_model.hpp).
#include "mpi/mpi_library_model.hpp"

#include <algorithm>
#include <array>
#include <limits>

#include "multilane/sim.hpp"

namespace multilane::mpi {

namespace {

constexpr std::array<std::string_view, 3> kBcast{"binomial", "vandegeijn", "chain"};
constexpr std::array<std::string_view, 2> kRooted{"linear", "binomial"};
// Open MPI's and MPICH's gatherv and scatterv are linear only.
constexpr std::array<std::string_view, 1> kRootedUneven{"linear"};
constexpr std::array<std::string_view, 2> kAllgather{"ring", "recursive-doubling"};
constexpr std::array<std::string_view, 2> kAlltoall{"pairwise", "linear"};
constexpr std::array<std::string_view, 3> kReduce{"binomial", "chain", "rabenseifner"};
constexpr std::array<std::string_view, 3> kAllreduce{"recursive-doubling", "ring", "rabenseifner"};
constexpr std::array<std::string_view, 3> kReduceScatter{"ring", "recursive-halving", "pairwise"};
// MPICH's scans double recursively; Open MPI's basic ones pass the prefix along the ranks.
constexpr std::array<std::string_view, 2> kScan{"recursive-doubling", "chain"};

}  // namespace

std::span<const std::string_view> mpi_library_family(Collective collective) {
  switch (collective) {
    case Collective::Bcast:
      return kBcast;
    case Collective::Scatter:
    case Collective::Gather:
      return kRooted;
    case Collective::Allgather:
      return kAllgather;
    case Collective::Alltoall:
      return kAlltoall;
    case Collective::Reduce:
      return kReduce;
    case Collective::Allreduce:
      return kAllreduce;
    case Collective::ReduceScatter:
    case Collective::ReduceScatterv:
      return kReduceScatter;
    case Collective::Scan:
    case Collective::Exscan:
      return kScan;
    case Collective::Gatherv:
    case Collective::Scatterv:
      return kRootedUneven;
    case Collective::Allgatherv:
      return kAllgather;
    case Collective::Alltoallv:
      return kAlltoall;
  }
  return {};
}

Platform one_stream_per_connection(Platform platform, int wan_streams) {
  const double share = 1.0 / std::max(wan_streams, 1);
  for (WanLink& link : platform.wan_links) {
    for (WanLink::Point& point : link.per_connection_table) point.bps *= share;
    link.tcp_window_bytes *= share;
  }
  return platform;
}

runtime::Candidate model_mpi_library(const Platform& multilanes, Collective collective,
                                     const BuildParams& params, int wan_streams) {
  const Platform platform = one_stream_per_connection(multilanes, wan_streams);
  SimOptions options;
  options.per_message_overhead_s = kMpiMessageOverheadS;
  runtime::Candidate best{
      .algorithm = "", .params = params, .modelled_s = std::numeric_limits<double>::infinity()};
  for (std::string_view algorithm : mpi_library_family(collective)) {
    const BuildParams resolved = runtime::resolve_params(platform, collective, algorithm, params);
    const Schedule schedule = build_schedule(platform, collective, algorithm, resolved);
    const double time_s = simulate(schedule, platform, options).time_s + kMpiCallOverheadS;
    if (time_s < best.modelled_s) {
      best = {.algorithm = std::string(algorithm), .params = resolved, .modelled_s = time_s};
    }
  }
  return best;
}

}  // namespace multilane::mpi
