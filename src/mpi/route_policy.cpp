// mpi/route_policy.cpp — the routing rule (route_policy.hpp).
#include "mpi/route_policy.hpp"

#include <fmt/format.h>

#include <cctype>
#include <set>
#include <utility>

#include "mpi/mpi_library_model.hpp"
#include "multilane/communicator.hpp"
#include "multilane/units.hpp"
#include "runtime/api/algorithm_choice.hpp"

namespace multilane::mpi {

namespace {

Route stay_with_mpi(std::string reason) {
  return {.multilane = false, .algorithm = "", .reason = std::move(reason)};
}

Route take_multilane(std::string algorithm, std::string reason) {
  return {.multilane = true, .algorithm = std::move(algorithm), .reason = std::move(reason)};
}

}  // namespace

RankSpread spread_of(const Platform& platform) {
  std::set<int> nodes, sites;
  for (int rank = 0; rank < platform.num_ranks(); ++rank) {
    nodes.insert(platform.node_of(rank));
    sites.insert(platform.site_of(rank));
  }
  return {.nodes = static_cast<int>(nodes.size()), .sites = static_cast<int>(sites.size())};
}

RoutePolicy::RoutePolicy(const Settings& settings, Platform platform)
    : settings_(settings), platform_(std::move(platform)), spread_(spread_of(platform_)) {}

Route RoutePolicy::choose(const RouteQuery& query) const {
  const Key key{query.call, query.bytes, rooted(query.call) ? query.root : 0, query.element_size};
  std::lock_guard lock(mutex_);
  if (auto it = routes_.find(key); it != routes_.end()) return it->second;
  return routes_.emplace(key, choose_uncached(query)).first->second;
}

Route RoutePolicy::choose_uncached(const RouteQuery& query) const {
  const std::string& forced = settings_.forced[static_cast<std::size_t>(query.call)];
  if (!forced.empty()) {
    std::string name(call_name(query.call));
    for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    const std::string why = fmt::format("MULTILANE_ALGORITHM_{}={}", name, forced);
    if (forced == "mpi") return stay_with_mpi(why);
    if (ranks() > 1) return take_multilane(forced, why);
  }
  if (ranks() == 1) return stay_with_mpi("one rank");
  if (query.bytes == 0 && query.call != WrappedCall::Barrier) return stay_with_mpi("no data");
  if (spread_.sites == 1) {
    if (query.call == WrappedCall::Barrier) return stay_with_mpi("barrier in one site");
    if (const std::uint64_t from = one_site_from(query.call); query.bytes < from) {
      return stay_with_mpi(fmt::format("{} B on {} node(s) of one site, below {} B", query.bytes,
                                       spread_.nodes, from));
    }
    return take_multilane(
        "auto", fmt::format("{} B on {} node(s) of one site, from {} B", query.bytes, spread_.nodes,
                            one_site_from(query.call)));
  }
  return modelled(query);
}

Route RoutePolicy::modelled(const RouteQuery& query) const {
  const Collective collective = carrier(query.call);
  const BuildParams params{.root = rooted(query.call) ? query.root : 0,
                           .size = query.call == WrappedCall::Barrier ? 1 : query.bytes,
                           .element_size = query.element_size};
  const runtime::Candidate mine = runtime::choose_algorithm(platform_, collective, params).best;
  const double mine_s = mine.modelled_s + kMultilaneCallOverheadS;
  const runtime::Candidate theirs =
      model_mpi_library(platform_, collective, params, CommunicatorOptions{}.wan_streams);
  const std::string why =
      fmt::format("modelled: multilane {} {}, MPI library {} {}; {} node(s) of {} site(s)",
                  mine.algorithm, format_duration(mine_s), theirs.algorithm,
                  format_duration(theirs.modelled_s), spread_.nodes, spread_.sites);
  if (mine_s < theirs.modelled_s) return take_multilane("auto", why);
  return stay_with_mpi(why);
}

std::uint64_t RoutePolicy::one_site_from(WrappedCall call) const {
  if (settings_.small_bytes > 0) return settings_.small_bytes;
  if (spread_.nodes > 1) return 256u << 10;
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
