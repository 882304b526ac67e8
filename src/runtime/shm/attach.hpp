// runtime/shm/attach.hpp — how the ranks of a node come to share one segment.
//
// Local rank 0 creates the segment (runtime/shm/segment_name.hpp for its name), fills in the
// header and publishes it. Every other rank looks for it in /dev/shm (polling until the
// timeout: ranks start in any order), maps it, checks that it was made for the same group
// (ranks, data area), and registers its pid. Every rank then waits until all have attached;
// the last one to attach removes the name, so from then on nothing is left in /dev/shm even if
// every rank is killed. On failure (timeout, a rank that died, a mismatch) the rank breaks the
// group and removes the name if the group never completed, so no segment outlives a failed
// setup either; segments of ranks killed during setup are removed by remove_stale_segments().
#pragma once

#include <cstdint>

#include "runtime/shm/segment.hpp"
#include "runtime/shm/sync_word.hpp"

namespace multilane::runtime::shm {

struct GroupIdentity {
  std::uint64_t job_id = 0;
  std::uint32_t node_id = 0;
  std::uint32_t instance = 0;
  int local_rank = 0;
  int local_size = 1;
  std::uint64_t capacity = 0;  // bytes of the data area
};

// "shm group job 000000000000002a node 0, local rank 1": the start of every error message.
std::string group_label(const GroupIdentity& group);

// Returns the mapped segment once every rank of the group has attached. Throws ShmError.
ShmSegment attach_group(const GroupIdentity& group, const WaitPolicy& policy);

}  // namespace multilane::runtime::shm
