// mpi/shared_jobs.hpp — communicators over the same ranks share one multilane job.
//
// MPI_Comm_dup, and a split or create that keeps the group, give a communicator over the same
// ranks in the same order as one that may have a multilane job already. Such a communicator
// takes a call space of that job (runtime/api/job_sharing.hpp) instead of a job of its own:
// no more threads, listeners, connections or job slots, and its calls still never meet the
// other communicators' (runtime/transport/call_space.hpp).
//
// The jobs are kept by group: the ranks' MPI_COMM_WORLD ranks, in order. Ranks agree on the job
// and the space, since another thread may make or free a communicator meanwhile:
//   1. one PMPI_Allgather: each rank's job for the group (its id, 0 without one) and the spaces
//      free there, and rank 0's random place to start looking;
//   2. if every rank has the same job, each takes the first space free on every rank from that
//      place (the same on every rank: a function of the gathered values), and one
//      PMPI_Allreduce(MIN) says whether every rank got it; if not (another thread took it here
//      meanwhile), all give it back and try again from another place, at most kShareAttempts times.
// Intercommunicators share no job.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "multilane/communicator.hpp"

namespace multilane::mpi {

// The MPI_COMM_WORLD rank of each rank of `comm` (not collective).
std::vector<int> world_ranks(MPI_Comm comm);

struct SharedSeat {
  std::shared_ptr<Communicator> communicator;
  std::uint32_t space = 0;
};

// A seat in a job of `group` (world_ranks(comm)) that every rank of `comm` takes, or nullopt
// when the ranks do not all have one job for the group or no space is free on all of them
// (collective over `comm`: every rank calls it at the same point).
std::optional<SharedSeat> share_job(MPI_Comm comm, const std::vector<int>& group);
inline constexpr int kShareAttempts = 4;

// Remembers `communicator` as a way into its job for later communicators of `group`; forgotten
// when it is gone.
void remember_job(const std::vector<int>& group, const std::shared_ptr<Communicator>& communicator);

}  // namespace multilane::mpi
