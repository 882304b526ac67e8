// mpi/wrapped_call.hpp — the collectives the PMPI library intercepts, by kind (one name for the
// blocking and the non-blocking form), and how each maps to a multilane collective.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

#include "multilane/schedule.hpp"

namespace multilane::mpi {

enum class WrappedCall : std::size_t {
  Bcast,
  Scatter,
  Gather,
  Allgather,
  Alltoall,
  Barrier,
  Reduce,
  Allreduce,
  ReduceScatterBlock,
  Scan,
  Exscan,
  Gatherv,
  Scatterv,
  Allgatherv,
  Alltoallv,
  ReduceScatter,  // MPI_Reduce_scatter: a block size per rank
};
inline constexpr std::size_t kWrappedCalls = 16;

// "bcast", ..., "reduce_scatter_block": the suffix of MULTILANE_ALGORITHM_<COLL> in lower case.
std::string_view call_name(WrappedCall call);
// "MPI_Bcast", or "MPI_Ibcast" when non-blocking.
std::string call_function(WrappedCall call, bool nonblocking);
// The multilane collective that carries it (a barrier is a one-byte allgather).
Collective carrier(WrappedCall call);
// Whether the call has a root (bcast, scatter, gather, reduce and the rooted v-forms).
bool rooted(WrappedCall call);
// The v-forms: a count (and displacement) per rank.
bool is_v_form(WrappedCall call);
// The v-forms whose sizes no rank knows alike: gatherv's and scatterv's counts are significant
// only at the root, and in alltoallv each rank knows its own row and column. Their class has
// no size (call_class.hpp), and multilane's route exchanges the counts first.
bool sizes_per_rank(WrappedCall call);

}  // namespace multilane::mpi
