// verify/access.hpp — which bytes an operation touches, and how big each buffer is.
//
// A Send reads its range; a Recv writes its range; a Copy reads `source` and writes `range`;
// a group op reads `source` and writes `range` (either may be empty: nothing). A RecvReduce
// reads and writes `range`; a Reduce reads `source` and `range` and writes `range`: their
// second read is combined_range().
// Buffer sizes come from the collective (Send, Recv) and from the schedule (Scratch).
#pragma once

#include <cstdint>
#include <optional>

#include "multilane/schedule.hpp"

namespace multilane::verify {

inline constexpr int kNumBuffers = 3;  // Send, Recv, Scratch
inline int buffer_index(Buffer b) {
  return static_cast<int>(b);
}

std::uint64_t buffer_bytes(const Schedule& schedule, int rank, Buffer buffer);

inline std::optional<Range> read_range(const Op& op) {
  if (op.kind == OpKind::Send || op.kind == OpKind::RecvReduce) return op.range;
  if (op.kind == OpKind::Copy || op.kind == OpKind::Reduce) return op.source;
  if (is_group_op(op.kind) && op.source.length > 0) return op.source;
  return std::nullopt;
}

// The accumulator a Reduce reads besides its source (a RecvReduce's read_range() is it).
inline std::optional<Range> combined_range(const Op& op) {
  if (op.kind == OpKind::Reduce) return op.range;
  return std::nullopt;
}

inline std::optional<Range> written_range(const Op& op) {
  if (is_receive(op.kind) || op.kind == OpKind::Copy || op.kind == OpKind::Reduce) return op.range;
  if (is_group_op(op.kind) && op.range.length > 0) return op.range;
  return std::nullopt;
}

}  // namespace multilane::verify
