// mpi/discovery.cpp — gather, then measure or recall the round trips (discovery.hpp).
#include "mpi/discovery.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <utility>

#include "mpi/all_gather_text.hpp"
#include "mpi/host_identity.hpp"
#include "mpi/listen_address.hpp"
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
            a == b ? 0 : seconds_.at(key(nodes[static_cast<std::size_t>(a)], nodes[static_cast<std::size_t>(b)]));
      }
    }
  }
  void keep(const std::vector<std::uint64_t>& nodes, const RoundTrips& trips) {
    std::lock_guard lock(mutex_);
    for (int a = 0; a < trips.nodes; ++a) {
      for (int b = a + 1; b < trips.nodes; ++b) {
        seconds_[key(nodes[static_cast<std::size_t>(a)], nodes[static_cast<std::size_t>(b)])] = trips.at(a, b);
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

RoundTrips node_round_trips(MPI_Comm comm, int rank, const Discovery& found) {
  const std::vector<int> first_rank = found.first_rank_of_nodes();
  std::vector<std::uint64_t> node_hashes;
  for (const int r : first_rank) node_hashes.push_back(found.hashes[static_cast<std::size_t>(r)]);
  const int nodes = static_cast<int>(first_rank.size());
  RoundTrips trips{.nodes = nodes, .seconds = std::vector<double>(static_cast<std::size_t>(nodes * nodes))};
  int known = rank == 0 && memory().knows(node_hashes) ? 1 : 0;
  pmpi_check(PMPI_Bcast(&known, 1, MPI_INT, 0, comm), "PMPI_Bcast (round trips known)");
  if (known == 1) {
    if (rank == 0) memory().recall(node_hashes, trips);
  } else {
    const bool leader = std::find(first_rank.begin(), first_rank.end(), rank) != first_rank.end();
    MPI_Comm leaders = MPI_COMM_NULL;
    pmpi_check(PMPI_Comm_split(comm, leader ? 0 : MPI_UNDEFINED, rank, &leaders),
               "PMPI_Comm_split (node leaders)");
    if (leaders != MPI_COMM_NULL) {
      const std::vector<LocalLane>& lanes = found.lanes[static_cast<std::size_t>(rank)];
      trips = measure_round_trips(leaders,
                                  lanes.empty() ? listen_address(true) : lanes.front().address);
      pmpi_check(PMPI_Comm_free(&leaders), "PMPI_Comm_free (node leaders)");
    }
  }
  pmpi_check(PMPI_Bcast(trips.seconds.data(), nodes * nodes, MPI_DOUBLE, 0, comm),
             "PMPI_Bcast (round trips)");
  memory().keep(node_hashes, trips);
  return trips;
}

}  // namespace

Discovery discover(MPI_Comm comm, int rank, int size) {
  Discovery found;
  const std::uint64_t mine = this_host().hash;
  found.hashes.resize(static_cast<std::size_t>(size));
  pmpi_check(PMPI_Allgather(&mine, 1, MPI_UINT64_T, found.hashes.data(), 1, MPI_UINT64_T, comm),
             "PMPI_Allgather (host hashes)");
  found.site_names = all_gather_text(comm, size, site_name(), "site names");
  const std::vector<std::string> lanes = all_gather_text(comm, size, local_lanes_or_error(), "lanes");
  for (std::size_t r = 0; r < lanes.size(); ++r) {
    if (lanes[r].starts_with('!')) {
      throw UsageError(fmt::format("rank {}: {}", r, lanes[r].substr(1)));
    }
    found.lanes.push_back(parse_lanes_text(lanes[r]));
  }
  if (!found.any_site_named() && found.first_rank_of_nodes().size() > 1) {
    found.round_trips = node_round_trips(comm, rank, found);
  }
  return found;
}

}  // namespace multilane::mpi
