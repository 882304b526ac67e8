#include "verify/access.hpp"

#include "multilane/collective.hpp"

namespace multilane::verify {

std::uint64_t buffer_bytes(const Schedule& schedule, int rank, Buffer buffer) {
  if (buffer == Buffer::Scratch) return schedule.scratch_bytes[rank];
  return buffer_size(schedule.collective, buffer, rank, schedule.num_ranks(), schedule.root,
                     schedule.size, schedule.counts);
}

}  // namespace multilane::verify
