// mpi/route_policy.cpp — the default route of a class (route_policy.hpp).
#include "mpi/route_policy.hpp"

#include <fmt/format.h>

#include <cctype>
#include <set>
#include <utility>

#include "mpi/measured_route.hpp"
#include "mpi/mpi_library_model.hpp"
#include "multilane/algorithms.hpp"
#include "multilane/collective.hpp"
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
    : settings_(settings), platform_(std::move(platform)), spread_(spread_of(platform_)) {
  for (std::size_t i = 0; i < kWrappedCalls; ++i) {
    const auto call = static_cast<WrappedCall>(i);
    std::string& candidate = candidates_[i];
    if (const std::string* named = forced(call); named && *named != "auto" && *named != "mpi") {
      candidate = *named;
    } else if (spread_.nodes == 1 && find_algorithm(carrier(call), "hier-shm") != nullptr) {
      candidate = "hier-shm";
    } else {
      candidate = "auto";
    }
  }
}

const std::string* RoutePolicy::forced(WrappedCall call) const {
  const std::string& forced = settings_.forced[static_cast<std::size_t>(call)];
  return forced.empty() ? nullptr : &forced;
}

std::string_view RoutePolicy::candidate(WrappedCall call) const {
  return candidates_[static_cast<std::size_t>(call)];
}

RoutePolicy::Candidates RoutePolicy::candidates(const RouteQuery& query,
                                                std::span<const std::uint64_t> counts) const {
  const std::string_view named = candidate(query.call);
  if (named != "auto") return {.algorithms = {std::string(named)}, .ranking = {}};
  // A v-form's size is its largest block (its class may not know it: sizes per rank).
  const std::uint64_t size = !counts.empty()                      ? largest_count(counts)
                             : query.call == WrappedCall::Barrier ? 1
                                                                  : query.bytes;
  const BuildParams params{.root = 0,
                           .size = size,
                           .element_size = query.element_size,
                           .counts = {counts.begin(), counts.end()}};
  const Collective collective = carrier(query.call);
  const runtime::AlgorithmChoice choice = runtime::choose_algorithm(
      platform_, collective, params,
      sizes_per_rank(query.call) ? runtime::CountsAt::TheirOwners : runtime::CountsAt::EveryRank);
  Candidates fastest;
  if (settings_.explain) {
    fastest.ranking = runtime::explain_choice(choice, collective, params, ranks());
  }
  for (const runtime::Candidate& c : choice.candidates) {
    if (fastest.algorithms.size() == kMostMultilaneCandidates) break;
    fastest.algorithms.push_back(c.algorithm);
  }
  if (fastest.algorithms.empty()) fastest.algorithms.emplace_back("auto");
  return fastest;
}

Route RoutePolicy::choose(const RouteQuery& query) const {
  if (const std::string* forced_route = forced(query.call)) {
    std::string name(call_name(query.call));
    for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    const std::string why = fmt::format("MULTILANE_ALGORITHM_{}={}", name, *forced_route);
    if (*forced_route == "mpi") return stay_with_mpi(why);
    if (ranks() > 1) return take_multilane(std::string(candidate(query.call)), why);
  }
  if (ranks() == 1) return stay_with_mpi("one rank");
  if (query.bytes == 0 && query.call != WrappedCall::Barrier && !sizes_per_rank(query.call)) {
    return stay_with_mpi("no data");
  }
  if (is_v_form(query.call)) {
    // The model prices even blocks; a v-form's counts differ from call to call and rank to rank.
    Route route = stay_with_mpi("a v-form: measured, not modelled");
    route.measure = true;
    return route;
  }
  if (spread_.sites == 1) {
    Route route = stay_with_mpi(fmt::format("{} node(s) of one site", spread_.nodes));
    route.measure = true;
    return route;
  }
  return modelled(query);
}

Route RoutePolicy::modelled(const RouteQuery& query) const {
  const Collective collective = carrier(query.call);
  const BuildParams params{.root = 0,
                           .size = query.call == WrappedCall::Barrier ? 1 : query.bytes,
                           .element_size = query.element_size};
  const runtime::Candidate mine = runtime::choose_algorithm(platform_, collective, params).best;
  const runtime::Candidate theirs =
      model_mpi_library(platform_, collective, params, CommunicatorOptions{}.wan_streams);
  const std::string why = fmt::format(
      "modelled across {} sites: multilane {} {}, MPI library {} {}", spread_.sites, mine.algorithm,
      format_duration(mine.modelled_s), theirs.algorithm, format_duration(theirs.modelled_s));
  Route route = mine.modelled_s < theirs.modelled_s
                    ? take_multilane(std::string(candidate(query.call)), why)
                    : stay_with_mpi(why);
  route.modelled_mpi_s = theirs.modelled_s;
  route.modelled_multilane_s = mine.modelled_s;
  const double ratio = std::max(mine.modelled_s, theirs.modelled_s) /
                       std::max(1e-12, std::min(mine.modelled_s, theirs.modelled_s));
  route.measure = ratio < kModelPruneFactor;
  return route;
}

}  // namespace multilane::mpi
