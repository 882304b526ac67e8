// mpi/route_policy.hpp — per call, who runs a collective: multilane or the MPI library.
//
// The one place the rule lives, so that measurements can later drive it. Every input is the
// same on every rank of the call (the collective, its size in bytes, where the communicator's
// ranks are, the settings), so all ranks take the same route without talking: a route that
// differed between ranks would deadlock.
//
// Today's rule, in order:
//   1. MULTILANE_ALGORITHM_<COLL> names the route ("mpi", "auto" or an algorithm);
//   2. a communicator of one rank, or a call without data (a zero count), stays with MPI;
//   3. within one site, the barrier and calls below a size stay with MPI (its latency is
//      lower): on one node, per collective, bcast 2 MiB, scatter and gather 512 KiB, allgather
//      and alltoall 64 KiB per block; on several nodes 256 KiB (where multilane overtook Open
//      MPI 4.1 on one 2-core host, shared memory or TCP loopback, docs/mpi.md);
//      MULTILANE_MPI_SMALL sets one size for all;
//   4. everything else is multilane's, algorithm "auto" (the model picks); across sites that
//      is every size, since the MPI library does not know which links are the WAN's.
#pragma once

#include <cstdint>
#include <string>

#include "mpi/settings.hpp"
#include "mpi/wrapped_call.hpp"

namespace multilane::mpi {

// Where the ranks of a communicator are, as far as the policy cares.
struct CommShape {
  int size = 1;
  int nodes = 1;  // distinct hosts
  int sites = 1;
};

struct Route {
  bool multilane = false;
  std::string algorithm;  // multilane's algorithm ("auto" or a name); empty for MPI
  std::string reason;     // for MULTILANE_EXPLAIN
};

class RoutePolicy {
 public:
  explicit RoutePolicy(const Settings& settings) : settings_(settings) {}
  // `bytes`: the size in multilane's sense (the whole message of a bcast, one block otherwise).
  Route choose(WrappedCall call, std::uint64_t bytes, const CommShape& shape) const;
  // The size from which a call within one site is multilane's.
  std::uint64_t one_site_from(WrappedCall call, const CommShape& shape) const;

 private:
  const Settings& settings_;
};

}  // namespace multilane::mpi
