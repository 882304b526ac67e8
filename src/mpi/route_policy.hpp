// mpi/route_policy.hpp — per call, who runs a collective: multilane or the MPI library.
//
// The one place the rule lives. Every input is the same on every rank of the call (the
// collective, its size, its root, the communicator's platform, the settings) and the model is
// deterministic, so all ranks take the same route without talking: a route that differed
// between ranks would deadlock.
//
// The rule, in order:
//   1. MULTILANE_ALGORITHM_<COLL> names the route ("mpi", "auto" or an algorithm);
//   2. a communicator of one rank, or a call without data (a zero count), stays with MPI;
//   3. within one site, measured sizes decide: the barrier and calls below a size stay with
//      MPI. On one node, per collective, bcast 2 MiB, scatter and gather 512 KiB, allgather
//      and alltoall 64 KiB per block, reductions never; on several nodes 256 KiB (where
//      multilane overtook Open MPI 4.1 on one 2-core host, shared memory or TCP loopback,
//      docs/mpi.md). MULTILANE_MPI_SMALL sets one size for all. Within a site what decides is
//      what the simulator does not see (the hand-off to the engine thread, oversubscribed
//      cores): the model there prefers the MPI library at every size on two nodes, where
//      multilane measured 1.6-1.8x faster from 1 MiB;
//   4. across sites the model decides between two candidates, the cheaper wins:
//        multilane        its own choice among its algorithms (what "auto" runs,
//                         runtime/api/algorithm_choice.hpp) + kMultilaneCallOverheadS
//        the MPI library  the fastest of its textbook family on the same platform, one TCP
//                         stream per connection (mpi_library_model.hpp) + kMpiCallOverheadS
//      The per-call costs carry what the simulator does not see: multilane's call crosses to
//      its engine thread and back and waits by polling, the MPI library's runs on the caller's
//      thread. So the smallest calls stay with the MPI library, whose latency is lower, and
//      from a few KiB on multilane's hierarchical algorithms cross the WAN fewer times.
// A route is computed once per (collective, size, root, element size) and kept.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

#include "mpi/settings.hpp"
#include "mpi/wrapped_call.hpp"
#include "multilane/platform.hpp"

namespace multilane::mpi {

// What one call on multilane's route costs beyond what the simulator models: the hand-off to
// the engine thread, the wake-up and the PMPI library's bookkeeping: forced through multilane,
// calls whose data cost nothing take 56-197 µs against Open MPI's 0.3-19 µs
// (docs/performance.md).
inline constexpr double kMultilaneCallOverheadS = 100e-6;

struct Route {
  bool multilane = false;
  std::string algorithm;  // multilane's algorithm ("auto" or a name); empty for MPI
  std::string reason;     // for MULTILANE_EXPLAIN
};

struct RouteQuery {
  WrappedCall call = WrappedCall::Bcast;
  // The size in multilane's sense: the whole message of a bcast, one block otherwise.
  std::uint64_t bytes = 0;
  int root = 0;
  std::uint32_t element_size = 1;  // a reduction's element; 1 otherwise
};

// How many nodes and sites hold the platform's ranks.
struct RankSpread {
  int nodes = 1;
  int sites = 1;
};
RankSpread spread_of(const Platform& platform);

class RoutePolicy {
 public:
  // `platform`: the communicator's, with exactly its ranks placed.
  RoutePolicy(const Settings& settings, Platform platform);
  Route choose(const RouteQuery& query) const;

  int ranks() const { return platform_.num_ranks(); }
  int nodes() const { return spread_.nodes; }
  int sites() const { return spread_.sites; }

 private:
  Route choose_uncached(const RouteQuery& query) const;
  Route modelled(const RouteQuery& query) const;
  // The size from which a call within one site is multilane's (rule 3).
  std::uint64_t one_site_from(WrappedCall call) const;

  const Settings& settings_;
  Platform platform_;
  RankSpread spread_;
  using Key = std::tuple<WrappedCall, std::uint64_t, int, std::uint32_t>;
  mutable std::mutex mutex_;
  mutable std::map<Key, Route> routes_;
};

}  // namespace multilane::mpi
