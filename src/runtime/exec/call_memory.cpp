// runtime/exec/call_memory.cpp — see call_memory.hpp.
#include "runtime/exec/call_memory.hpp"

namespace multilane::runtime {

CallMemory::CallMemory(const Schedule& schedule, int rank, CallBuffers buffers)
    : buffers_(buffers),
      scratch_(schedule.scratch_bytes.empty() ? 0 : schedule.scratch_bytes[rank]) {}

std::span<std::byte> CallMemory::bytes(const Range& range) {
  std::span<std::byte> buffer;
  switch (range.buffer) {
    case Buffer::Send:
      buffer = {const_cast<std::byte*>(buffers_.send.data()), buffers_.send.size()};
      break;
    case Buffer::Recv:
      buffer = buffers_.recv;
      break;
    case Buffer::Scratch:
      buffer = scratch_;
      break;
  }
  return buffer.subspan(range.offset, range.length);
}

}  // namespace multilane::runtime
