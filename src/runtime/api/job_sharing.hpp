// runtime/api/job_sharing.hpp — a communicator that shares the job of another over the same
// ranks, in a call space of its own (runtime/transport/call_space.hpp).
//
// For the PMPI library: an MPI program's MPI_Comm_dup (or a split that keeps the group) gives a
// communicator over the same ranks in the same order, and sharing the job spares it the threads,
// listeners, connections and shared memory of a job of its own. Which space it takes is agreed
// by its ranks beforehand (every rank must take the same one): free_spaces() says which this
// rank could give, share() takes one.
#pragma once

#include <cstdint>
#include <optional>

#include "multilane/communicator.hpp"

namespace multilane::runtime {

class JobSharing {
 public:
  // The job's id: the same on every rank of the job, and for every communicator sharing it.
  static std::uint64_t job_id(const Communicator& member);
  // One bit per call space (bit s: space s) that no communicator of the job has now.
  static std::uint64_t free_spaces(const Communicator& member);
  // A communicator in call space `space` of the member's job; nullopt when a communicator of
  // this process has it (one made by another thread since free_spaces()). The job lives as
  // long as any of its communicators; one that shares it must not be dropped with calls in
  // flight (the engine would complete them after it is gone).
  // `concurrent_calls`: the job's communicators may have calls in flight on several threads at
  // once (MPI_THREAD_MULTIPLE). Then, while two of them live, a blocking call's shared-memory
  // steps never run on the thread that drives the engine (another communicator's call may need
  // it meanwhile): they go to the group's thread, a hand-off each way.
  static std::optional<Communicator> share(const Communicator& member, std::uint32_t space,
                                           bool concurrent_calls);
};

}  // namespace multilane::runtime
