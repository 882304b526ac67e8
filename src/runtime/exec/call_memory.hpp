// runtime/exec/call_memory.hpp — the memory one rank's part of a collective call works in: the
// caller's send and receive buffers and the call's scratch space, addressed by the schedule's
// ranges (schedule.hpp's Range: buffer, offset, length).
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "multilane/schedule.hpp"

namespace multilane::runtime {

struct CallBuffers {
  std::span<const std::byte> send;
  std::span<std::byte> recv;
};

class CallMemory {
 public:
  // Allocates the scratch space `rank`'s program of `schedule` needs.
  CallMemory(const Schedule& schedule, int rank, CallBuffers buffers);
  // Works in `scratch` instead, grown when too small and left as it is after the call.
  CallMemory(const Schedule& schedule, int rank, CallBuffers buffers,
             std::vector<std::byte>& scratch);

  // The bytes `range` names. Schedules only read the Send buffer (the verifier checks it), so
  // handing it out writable is safe.
  std::span<std::byte> bytes(const Range& range);

 private:
  CallBuffers buffers_;
  std::vector<std::byte> own_scratch_;
  std::span<std::byte> scratch_;
};

}  // namespace multilane::runtime
