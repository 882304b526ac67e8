// mpi/route_policy.cpp — the routing rule (route_policy.hpp).
#include "mpi/route_policy.hpp"

#include <fmt/format.h>

#include <cctype>
#include <utility>

namespace multilane::mpi {

namespace {

Route stay_with_mpi(std::string reason) {
  return {.multilane = false, .algorithm = "", .reason = std::move(reason)};
}

Route take_multilane(std::string algorithm, std::string reason) {
  return {.multilane = true, .algorithm = std::move(algorithm), .reason = std::move(reason)};
}

}  // namespace

Route RoutePolicy::choose(WrappedCall call, std::uint64_t bytes, const CommShape& shape) const {
  const std::string& forced = settings_.forced[static_cast<std::size_t>(call)];
  if (!forced.empty()) {
    std::string name(call_name(call));
    for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    const std::string why = fmt::format("MULTILANE_ALGORITHM_{}={}", name, forced);
    if (forced == "mpi") return stay_with_mpi(why);
    if (shape.size > 1) return take_multilane(forced, why);
  }
  if (shape.size == 1) return stay_with_mpi("one rank");
  if (bytes == 0 && call != WrappedCall::Barrier) return stay_with_mpi("no data");
  if (shape.sites == 1) {
    if (call == WrappedCall::Barrier) return stay_with_mpi("barrier in one site");
    if (const std::uint64_t from = one_site_from(call, shape); bytes < from) {
      return stay_with_mpi(
          fmt::format("{} B on {} node(s) of one site, below {} B", bytes, shape.nodes, from));
    }
  }
  return take_multilane(
      "auto", fmt::format("{} B on {} node(s) of {} site(s)", bytes, shape.nodes, shape.sites));
}

std::uint64_t RoutePolicy::one_site_from(WrappedCall call, const CommShape& shape) const {
  if (settings_.small_bytes > 0) return settings_.small_bytes;
  if (shape.nodes > 1) return 256u << 10;
  switch (call) {
    case WrappedCall::Bcast:
      return 2u << 20;
    case WrappedCall::Scatter:
    case WrappedCall::Gather:
      return 512u << 10;
    case WrappedCall::Allgather:
    case WrappedCall::Alltoall:
      return 64u << 10;
    case WrappedCall::Barrier:
      break;
    case WrappedCall::Reduce:
    case WrappedCall::Allreduce:
    case WrappedCall::ReduceScatterBlock:
      // hier-shm's allreduce on one node is 0.32-1.08x Open MPI's over vader
      // (docs/performance.md): on one node reductions stay with the MPI library.
      break;
  }
  return ~std::uint64_t{0};
}

}  // namespace multilane::mpi
