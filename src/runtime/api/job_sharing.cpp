// runtime/api/job_sharing.cpp — see job_sharing.hpp.
#include "runtime/api/job_sharing.hpp"

#include <memory>
#include <mutex>

#include "runtime/api/communicator_impl.hpp"

namespace multilane::runtime {

std::uint64_t JobSharing::job_id(const Communicator& member) {
  return member.impl_->job_id();
}

std::uint64_t JobSharing::free_spaces(const Communicator& member) {
  SharedJob& job = *member.impl_->shared_job();
  std::lock_guard lock(job.mutex);
  std::uint64_t free = 0;
  for (std::uint32_t space = 0; space < kCallSpaces; ++space) {
    if (!job.spaces[space].in_use) free |= std::uint64_t{1} << space;
  }
  return free;
}

std::optional<Communicator> JobSharing::share(const Communicator& member, std::uint32_t space,
                                              bool concurrent_calls,
                                              const JobMembership* membership) {
  if (membership) CommunicatorImpl::check_membership(*member.impl_, *membership);
  // take_space() refuses a space out of range or taken (by another thread since free_spaces()).
  try {
    return Communicator(
        std::make_unique<CommunicatorImpl>(*member.impl_, space, concurrent_calls, membership));
  } catch (const UsageError&) {
    return std::nullopt;
  }
}

CallNumbering JobSharing::numbering(const Communicator& shared) {
  return shared.impl_->numbering();
}

void JobSharing::continue_numbering(Communicator& shared, CallNumbering agreed) {
  shared.impl_->continue_numbering(agreed);
}

}  // namespace multilane::runtime
