// mpi/route_policy.cpp — the routing rule (route_policy.hpp).
#include "mpi/route_policy.hpp"

#include <fmt/format.h>

#include <cctype>

namespace multilane::mpi {

Route RoutePolicy::choose(WrappedCall call, std::uint64_t bytes, const CommShape& shape) const {
  const std::string& forced = settings_.forced[static_cast<std::size_t>(call)];
  if (!forced.empty()) {
    std::string name(call_name(call));
    for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    const std::string why = fmt::format("MULTILANE_ALGORITHM_{}={}", name, forced);
    if (forced == "mpi") return {false, "", why};
    if (shape.size > 1) return {true, forced, why};
  }
  if (shape.size == 1) return {false, "", "one rank"};
  if (bytes == 0 && call != WrappedCall::Barrier) return {false, "", "no data"};
  if (shape.nodes == 1) {
    if (call == WrappedCall::Barrier) return {false, "", "barrier on one node"};
    if (bytes < settings_.small_bytes) {
      return {false, "",
              fmt::format("{} B on one node, below {} B (MULTILANE_MPI_SMALL)", bytes,
                          settings_.small_bytes)};
    }
  }
  return {true, "auto", fmt::format("{} B on {} node(s)", bytes, shape.nodes)};
}

}  // namespace multilane::mpi
