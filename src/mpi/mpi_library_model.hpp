// mpi/mpi_library_model.hpp — the MPI library's own collective as a candidate of the route.
//
// An MPI library (Open MPI's coll/tuned, MPICH's defaults) runs textbook algorithms over one
// connection per pair of ranks, blind to lanes, sites and the WAN. Its modelled cost for a call
// is the fastest of its family for the collective, each built and simulated on the
// communicator's platform as the MPI library uses it, the way multilane's candidates are
// (runtime/api/algorithm_choice.hpp), with the MPI library's smaller per-message overhead, plus
// its per-call cost. The platform as the MPI library uses it: one TCP stream per pair of ranks,
// where multilane's runtime opens `wan_streams` per WAN connection, so each WAN connection
// carries 1/wan_streams of what the platform's figures (multilane's) say.
//
//
//   bcast           binomial, vandegeijn (scatter + allgather), chain (pipelined)
//   scatter, gather linear, binomial
//   allgather       ring, recursive-doubling          (and the barrier: 1 byte each)
//   alltoall        pairwise, linear
//   reduce          binomial, chain, rabenseifner
//   allreduce       recursive-doubling, ring, rabenseifner
//   reduce-scatter  ring, recursive-halving, pairwise
#pragma once

#include <span>
#include <string_view>

#include "multilane/algorithms.hpp"
#include "multilane/platform.hpp"
#include "runtime/api/algorithm_choice.hpp"

namespace multilane::mpi {

// Software cost of one message of the MPI library (its shared-memory or TCP transport).
inline constexpr double kMpiMessageOverheadS = 2e-6;
// What one collective call of the MPI library costs beyond its messages (argument checks,
// selection): Open MPI 4.1 takes 0.3-19 µs for calls whose data cost nothing
// (docs/performance.md).
inline constexpr double kMpiCallOverheadS = 5e-6;

// The algorithms the MPI library runs for `collective` (the table above).
std::span<const std::string_view> mpi_library_family(Collective collective);

// The fastest of the family on `platform` for `params`, its time including kMpiCallOverheadS.
// `wan_streams`: the TCP streams of one of multilane's WAN connections (CommunicatorOptions).
runtime::Candidate model_mpi_library(const Platform& platform, Collective collective,
                                     const BuildParams& params, int wan_streams);
// `platform` with every WAN connection one TCP stream of the `wan_streams` its figures assume.
Platform one_stream_per_connection(Platform platform, int wan_streams);

}  // namespace multilane::mpi
