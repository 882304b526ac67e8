// runtime/api/job_sharing.hpp — a communicator that shares the job of another over the same
// ranks, in a call space of its own (runtime/transport/call_space.hpp).
//
// For the PMPI library: an MPI program's MPI_Comm_dup, split or create gives a communicator over
// the job's ranks or some of them, in their order or another, and sharing the job spares it the
// threads, listeners, connections and shared memory of a job of its own. Which space it takes
// is agreed by its ranks beforehand (every rank must take the same one): free_spaces() says
// which this rank could give, share() takes one, and numbering() and continue_numbering() make
// its ranks number their calls alike (a space's ranks may have used it with different others).
// A communicator over some of the job's ranks takes a space on those ranks only: ranks that do
// not meet may use one space for two communicators at once.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "multilane/communicator.hpp"
#include "multilane/platform.hpp"

namespace multilane::runtime {

// The ranks of a communicator that shares a job over some of the job's ranks, or all of them in
// another order: for each of its ranks the job's rank, this rank among them, and the platform
// with its ranks placed in that order.
struct JobMembership {
  std::vector<int> job_ranks;
  int rank = 0;
  Platform platform;
};

// Where a communicator's numbering of its calls stands: its last call's sequence number and
// its space's generation (which tells its shared-memory groups apart from earlier ones).
struct CallNumbering {
  std::uint64_t sequence = 0;
  std::uint32_t generation = 0;
};

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
  // `membership`: the new communicator's ranks when they are not the member's job's ranks in
  // their order (UsageError when they do not fit the job: a rank out of range or twice, this
  // rank's job rank not the member's, a platform of another size).
  static std::optional<Communicator> share(const Communicator& member, std::uint32_t space,
                                           bool concurrent_calls,
                                           const JobMembership* membership = nullptr);
  static CallNumbering numbering(const Communicator& shared);
  // Goes on from `agreed` (the highest of its ranks' numbering()s) where that is further: before
  // its first call, on every rank.
  static void continue_numbering(Communicator& shared, CallNumbering agreed);
};

}  // namespace multilane::runtime
