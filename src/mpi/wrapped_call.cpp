// mpi/wrapped_call.cpp — names of the intercepted collectives.
#include "mpi/wrapped_call.hpp"

#include <array>
#include <string>

namespace multilane::mpi {

namespace {
constexpr std::array<std::string_view, kWrappedCalls> kNames = {
    "bcast",         "scatter",    "gather",
    "allgather",     "alltoall",   "barrier",
    "reduce",        "allreduce",  "reduce_scatter_block",
    "scan",          "exscan",     "gatherv",
    "scatterv",      "allgatherv", "alltoallv",
    "reduce_scatter"};
constexpr std::array<std::string_view, kWrappedCalls> kFunctions = {
    "Bcast",         "Scatter",    "Gather",
    "Allgather",     "Alltoall",   "Barrier",
    "Reduce",        "Allreduce",  "Reduce_scatter_block",
    "Scan",          "Exscan",     "Gatherv",
    "Scatterv",      "Allgatherv", "Alltoallv",
    "Reduce_scatter"};
}  // namespace

std::string_view call_name(WrappedCall call) {
  return kNames[static_cast<std::size_t>(call)];
}

std::string call_function(WrappedCall call, bool nonblocking) {
  std::string name = nonblocking ? "MPI_I" : "MPI_";
  std::string_view function = kFunctions[static_cast<std::size_t>(call)];
  if (nonblocking) {
    name += static_cast<char>(function[0] - 'A' + 'a');
    function.remove_prefix(1);
  }
  name += function;
  return name;
}

Collective carrier(WrappedCall call) {
  switch (call) {
    case WrappedCall::Bcast:
      return Collective::Bcast;
    case WrappedCall::Scatter:
      return Collective::Scatter;
    case WrappedCall::Gather:
      return Collective::Gather;
    case WrappedCall::Allgather:
      return Collective::Allgather;
    case WrappedCall::Alltoall:
      return Collective::Alltoall;
    case WrappedCall::Barrier:
      return Collective::Allgather;
    case WrappedCall::Reduce:
      return Collective::Reduce;
    case WrappedCall::Allreduce:
      return Collective::Allreduce;
    case WrappedCall::ReduceScatterBlock:
      return Collective::ReduceScatter;
    case WrappedCall::Scan:
      return Collective::Scan;
    case WrappedCall::Exscan:
      return Collective::Exscan;
    case WrappedCall::Gatherv:
      return Collective::Gatherv;
    case WrappedCall::Scatterv:
      return Collective::Scatterv;
    case WrappedCall::Allgatherv:
      return Collective::Allgatherv;
    case WrappedCall::Alltoallv:
      return Collective::Alltoallv;
    case WrappedCall::ReduceScatter:
      return Collective::ReduceScatterv;
  }
  return Collective::Bcast;
}

bool rooted(WrappedCall call) {
  return call == WrappedCall::Bcast || call == WrappedCall::Scatter ||
         call == WrappedCall::Gather || call == WrappedCall::Reduce ||
         call == WrappedCall::Gatherv || call == WrappedCall::Scatterv;
}

bool is_v_form(WrappedCall call) {
  return call >= WrappedCall::Gatherv;
}

bool sizes_per_rank(WrappedCall call) {
  return is_v_form(call) && counts_held_apart(carrier(call));
}

}  // namespace multilane::mpi
