// mpi/shared_jobs.hpp — communicators over ranks of one multilane job share it.
//
// MPI_Comm_dup, split and create give communicators over the ranks of one that may have a
// multilane job already: the same ranks in the same order (a dup, a split that keeps the group),
// in another order, or some of them (the rows and columns of a process grid). Such a
// communicator takes a call space of that job (runtime/api/job_sharing.hpp) instead of a job of
// its own: no more threads, listeners, connections or job slots, and its calls still never meet
// the other communicators' (runtime/transport/call_space.hpp).
//
// The jobs are kept by group: the MPI_COMM_WORLD ranks of a communicator that has one, in its
// order, with the job's own group. A communicator takes the job of its own group if there is
// one, else that of the smallest group holding all its ranks (the same on every rank). Ranks
// agree on the job and the space, since another thread may make or free a communicator
// meanwhile:
//   1. one PMPI_Allgather: each rank's job (its id, 0 without one) and the spaces free there,
//      and rank 0's random place to start looking;
//   2. if every rank has the same job, each takes the first space free on every rank from that
//      place (the same on every rank: a function of the gathered values), and one
//      PMPI_Allreduce(MAX) says whether every rank got it and where each numbers its calls in
//      that space (ranks that used it with other ranks number them differently): all go on
//      from the highest. If one did not get it (another thread took it here meanwhile), all give
//      it back and try again from another place, at most kShareAttempts times.
// Intercommunicators share no job.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "multilane/communicator.hpp"
#include "multilane/platform.hpp"

namespace multilane::mpi {

// The MPI_COMM_WORLD rank of each rank of `comm` (not collective).
std::vector<int> world_ranks(MPI_Comm comm);

struct SharedSeat {
  std::shared_ptr<Communicator> communicator;
  std::uint32_t space = 0;
  std::vector<int> job_group;  // the job's ranks in MPI_COMM_WORLD, in the job's order
};

// A seat in a job holding `group` (world_ranks(comm)) that every rank of `comm` takes, or
// nullopt when the ranks do not all find the same job or no space is free on all of them
// (collective over `comm`: every rank calls it at the same point). `platform`: comm's ranks
// placed in its order.
std::optional<SharedSeat> share_job(MPI_Comm comm, const std::vector<int>& group,
                                    const Platform& platform);
inline constexpr int kShareAttempts = 4;

// Remembers `communicator` (over `group`, in a job over `job_group`) as a way into its job for
// later communicators; forgotten when it is gone.
void remember_job(const std::vector<int>& group, const std::vector<int>& job_group,
                  const std::shared_ptr<Communicator>& communicator);

}  // namespace multilane::mpi
