// mpi/route_policy.hpp — a class's route before it is measured: the settings, the obvious
// cases, and across sites the model.
//
// The measured route (measured_route.hpp) decides what a class runs; this says what it runs
// when it is not measured (a nonblocking call, the frozen mode, past the cap on classes) and
// whether it is measured at all. Every input is the same on every rank of the call (the
// collective, its size, the communicator's platform, the settings) and the model is
// deterministic, so all ranks agree without talking. In order:
//   1. MULTILANE_ALGORITHM_<COLL> names the route: "mpi", "auto" or an algorithm (never
//      measured);
//   2. a communicator of one rank, or a call without data (a zero count), stays with the MPI
//      library;
//   3. within one site every call is measured (the barrier by the interval between its calls,
//      measured_route.hpp's rates_interval()); unmeasured, it is the MPI library's. The model
//      is not asked there: what decides within a site is what it does not see (the cost of
//      the MPI library's shared-memory transport, oversubscribed cores);
//   4. across sites the model prices two candidates:
//        multilane        its own choice among its algorithms (what "auto" runs,
//                         runtime/api/algorithm_choice.hpp)
//        the MPI library  the fastest of its textbook family on the same platform, one TCP
//                         stream per connection (mpi_library_model.hpp)
//      The cheaper is the default. When one costs kModelPruneFactor times the other or more,
//      the model decides alone; otherwise the route is measured.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "mpi/settings.hpp"
#include "mpi/wrapped_call.hpp"
#include "multilane/platform.hpp"

namespace multilane::mpi {

inline constexpr double kModelPruneFactor = 2.0;

struct Route {
  bool multilane = false;
  std::string algorithm;      // multilane's algorithm ("auto" or a name); empty for MPI
  bool measure = false;       // the class is measured; `multilane` is the route until decided
  double modelled_mpi_s = 0;  // across sites: the model's times, else 0
  double modelled_multilane_s = 0;
  std::string reason;  // for MULTILANE_EXPLAIN
};

struct RouteQuery {
  WrappedCall call = WrappedCall::Bcast;
  // The size in multilane's sense: the whole message of a bcast, one block otherwise.
  std::uint64_t bytes = 0;
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
  // The route rule 1 forces, or nullptr: checked on every call, before any table.
  const std::string* forced(WrappedCall call) const;
  // Multilane's candidate for `call`: the algorithm MULTILANE_ALGORITHM_<COLL> names; on a
  // communicator within one node, hier-shm where the collective has it (the model does not see
  // what TCP loopback and its engine cost against shared memory); else "auto", the model's best.
  std::string_view candidate(WrappedCall call) const;
  // The multilane algorithms a measured class times against the MPI library: candidate() when
  // it names one; for "auto", the model's kMostMultilaneCandidates fastest for this call
  // (`counts`: a v-form's, else empty; a gatherv's, scatterv's or alltoallv's algorithm that
  // reads every rank's counts pays for their exchange, runtime::CountsAt). The same on every
  // rank for the same class and counts.
  struct Candidates {
    std::vector<std::string> algorithms;
    // The model's times behind them (runtime::explain_choice) with MULTILANE_EXPLAIN; else empty.
    std::string ranking;
  };
  Candidates candidates(const RouteQuery& query, std::span<const std::uint64_t> counts) const;

  int ranks() const { return platform_.num_ranks(); }
  int nodes() const { return spread_.nodes; }
  int sites() const { return spread_.sites; }

 private:
  Route modelled(const RouteQuery& query) const;

  const Settings& settings_;
  Platform platform_;
  RankSpread spread_;
  std::array<std::string, kWrappedCalls> candidates_;  // candidate() of each call, made once
};

}  // namespace multilane::mpi
