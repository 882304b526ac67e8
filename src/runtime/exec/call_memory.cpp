// runtime/exec/call_memory.cpp — see call_memory.hpp.
#include "runtime/exec/call_memory.hpp"

namespace multilane::runtime {

namespace {

std::size_t scratch_of(const Schedule& schedule, int rank) {
  return schedule.scratch_bytes.empty() ? 0 : schedule.scratch_bytes[rank];
}

}  // namespace

CallMemory::CallMemory(const Schedule& schedule, int rank, CallBuffers buffers)
    : buffers_(buffers), own_scratch_(scratch_of(schedule, rank)), scratch_(own_scratch_) {}

CallMemory::CallMemory(const Schedule& schedule, int rank, CallBuffers buffers,
                       std::vector<std::byte>& scratch)
    : buffers_(buffers) {
  const std::size_t needed = scratch_of(schedule, rank);
  if (scratch.size() < needed) scratch.resize(needed);
  scratch_ = std::span<std::byte>(scratch).first(needed);
}

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
