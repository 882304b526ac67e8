// mpi/discovery.cpp — gather, then measure or recall the round trips (discovery.hpp).
#include "mpi/discovery.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <string_view>
#include <utility>

#include "mpi/all_gather_text.hpp"
#include "mpi/host_identity.hpp"
#include "mpi/pmpi_check.hpp"
#include "mpi/round_trips.hpp"
#include "multilane/errors.hpp"

namespace multilane::mpi {

namespace {

// Round trips this process has seen, by pair of host hashes (smaller first).
class RoundTripMemory {
 public:
  bool knows(const std::vector<std::uint64_t>& nodes) const {
    std::lock_guard lock(mutex_);
    for (std::size_t a = 0; a < nodes.size(); ++a) {
      for (std::size_t b = a + 1; b < nodes.size(); ++b) {
        if (!seconds_.contains(key(nodes[a], nodes[b]))) return false;
      }
    }
    return true;
  }
  void recall(const std::vector<std::uint64_t>& nodes, RoundTrips& trips) const {
    std::lock_guard lock(mutex_);
    for (int a = 0; a < trips.nodes; ++a) {
      for (int b = 0; b < trips.nodes; ++b) {
        trips.seconds[static_cast<std::size_t>(a * trips.nodes + b)] =
            a == b ? 0
                   : seconds_.at(key(nodes[static_cast<std::size_t>(a)],
                                     nodes[static_cast<std::size_t>(b)]));
      }
    }
  }
  void keep(const std::vector<std::uint64_t>& nodes, const RoundTrips& trips) {
    std::lock_guard lock(mutex_);
    for (int a = 0; a < trips.nodes; ++a) {
      for (int b = a + 1; b < trips.nodes; ++b) {
        seconds_[key(nodes[static_cast<std::size_t>(a)], nodes[static_cast<std::size_t>(b)])] =
            trips.at(a, b);
      }
    }
  }

 private:
  static std::pair<std::uint64_t, std::uint64_t> key(std::uint64_t a, std::uint64_t b) {
    return a < b ? std::pair{a, b} : std::pair{b, a};
  }
  mutable std::mutex mutex_;
  std::map<std::pair<std::uint64_t, std::uint64_t>, double> seconds_;
};

RoundTripMemory& memory() {
  static RoundTripMemory kept;
  return kept;
}

// This rank's lanes as text, or "!" and why it cannot say: a failure travels with the gather
// so that every rank reports it.
std::string local_lanes_or_error() {
  try {
    if (const char* host = std::getenv("MULTILANE_HOST"); host != nullptr && *host != '\0') {
      LocalLane named;
      named.address = host;
      return lanes_text({named});
    }
    return lanes_text(discover_lanes());
  } catch (const std::exception& e) {
    return std::string("!") + e.what();
  }
}

// Each pair's figure is its faster direction; the diagonal is 0.
RoundTrips symmetric(int nodes, std::vector<double> rows) {
  RoundTrips trips{.nodes = nodes, .seconds = std::move(rows)};
  for (int a = 0; a < nodes; ++a) {
    for (int b = a + 1; b < nodes; ++b) {
      double& ab = trips.seconds[static_cast<std::size_t>(a * nodes + b)];
      double& ba = trips.seconds[static_cast<std::size_t>(b * nodes + a)];
      ab = ba = std::min(ab, ba);
    }
    trips.seconds[static_cast<std::size_t>(a * nodes + a)] = 0;
  }
  return trips;
}

// The leaders time their connects and all ranks gather the leaders' rows; or, when rank 0 has
// seen all these nodes before, rank 0 broadcasts what it kept.
RoundTrips node_round_trips(MPI_Comm comm, int rank, int size, const Discovery& found,
                            const RoundTripListener& listener,
                            const std::vector<std::string>& endpoints) {
  const std::vector<int> first_rank = found.first_rank_of_nodes();
  std::vector<std::uint64_t> node_hashes;
  std::vector<std::string> leader_endpoints;
  for (const int r : first_rank) {
    node_hashes.push_back(found.hashes[static_cast<std::size_t>(r)]);
    leader_endpoints.push_back(endpoints[static_cast<std::size_t>(r)]);
  }
  const int nodes = static_cast<int>(first_rank.size());
  std::vector<double> rows(static_cast<std::size_t>(nodes * nodes));
  int known = rank == 0 && memory().knows(node_hashes) ? 1 : 0;
  pmpi_check(PMPI_Bcast(&known, 1, MPI_INT, 0, comm), "PMPI_Bcast (round trips known)");
  if (known == 1) {
    RoundTrips kept{.nodes = nodes, .seconds = std::move(rows)};
    if (rank == 0) memory().recall(node_hashes, kept);
    pmpi_check(PMPI_Bcast(kept.seconds.data(), nodes * nodes, MPI_DOUBLE, 0, comm),
               "PMPI_Bcast (round trips)");
    return kept;
  }
  const auto leader = std::find(first_rank.begin(), first_rank.end(), rank);
  std::vector<double> row;
  if (leader != first_rank.end()) {
    row = time_connects(listener, leader_endpoints, static_cast<int>(leader - first_rank.begin()));
  }
  // Only leaders contribute (a row each, in node order); the gather also keeps every listener
  // open until every leader has finished connecting.
  std::vector<int> counts(static_cast<std::size_t>(size), 0),
      offsets(static_cast<std::size_t>(size), 0);
  for (int node = 0; node < nodes; ++node) {
    counts[static_cast<std::size_t>(first_rank[static_cast<std::size_t>(node)])] = nodes;
    offsets[static_cast<std::size_t>(first_rank[static_cast<std::size_t>(node)])] = node * nodes;
  }
  pmpi_check(PMPI_Allgatherv(row.data(), static_cast<int>(row.size()), MPI_DOUBLE, rows.data(),
                             counts.data(), offsets.data(), MPI_DOUBLE, comm),
             "PMPI_Allgatherv (round trips)");
  RoundTrips trips = symmetric(nodes, std::move(rows));
  memory().keep(node_hashes, trips);
  return trips;
}

// This rank's facts, one line each: host hash, round-trip endpoint, site name, lanes (or "!"
// and why this rank cannot take part).
std::string local_facts(const std::optional<RoundTripListener>& listener,
                        const std::string& lanes) {
  const std::string site = site_name();
  if (site.find('\n') != std::string::npos) {
    return fmt::format("{:016x}\n-\n\n!MULTILANE_SITE: a site name is one line", this_host().hash);
  }
  return fmt::format("{:016x}\n{}\n{}\n{}", this_host().hash, listener ? listener->endpoint() : "-",
                     site, lanes);
}

struct Facts {
  std::uint64_t hash = 0;
  std::string endpoint, site, lanes;
};

Facts parse_facts(const std::string& text, std::size_t rank) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  for (int line = 0; line < 3; ++line) {
    const std::size_t end = text.find('\n', start);
    if (end == std::string::npos) {
      throw CommunicationError(ErrorKind::protocol,
                               fmt::format("rank {} sent malformed host facts", rank));
    }
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  if (lines[0].size() != 16 ||
      lines[0].find_first_not_of("0123456789abcdef") != std::string::npos) {
    throw CommunicationError(ErrorKind::protocol,
                             fmt::format("rank {} sent malformed host facts", rank));
  }
  return {.hash = std::stoull(lines[0], nullptr, 16),
          .endpoint = lines[1],
          .site = lines[2],
          .lanes = text.substr(start)};
}

}  // namespace

Discovery discover(MPI_Comm comm, int rank, int size) {
  std::string lanes = local_lanes_or_error();
  std::optional<RoundTripListener> listener;
  if (!lanes.starts_with('!')) {
    try {
      const std::vector<LocalLane> mine = parse_lanes_text(lanes);
      listener.emplace(mine.empty() ? std::string("127.0.0.1") : mine.front().address);
    } catch (const std::exception& e) {
      lanes = std::string("!") + e.what();
    }
  }
  const std::vector<std::string> texts =
      all_gather_text(comm, size, local_facts(listener, lanes), "host facts");
  Discovery found;
  std::vector<std::string> endpoints;
  for (std::size_t r = 0; r < texts.size(); ++r) {
    Facts facts = parse_facts(texts[r], r);
    if (facts.lanes.starts_with('!')) {
      throw UsageError(fmt::format("rank {}: {}", r, facts.lanes.substr(1)));
    }
    found.hashes.push_back(facts.hash);
    found.site_names.push_back(std::move(facts.site));
    found.lanes.push_back(parse_lanes_text(facts.lanes));
    endpoints.push_back(std::move(facts.endpoint));
  }
  if (!found.any_site_named() && found.first_rank_of_nodes().size() > 1) {
    found.round_trips = node_round_trips(comm, rank, size, found, *listener, endpoints);
  }
  return found;
}

}  // namespace multilane::mpi
