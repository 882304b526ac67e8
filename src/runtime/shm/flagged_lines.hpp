// runtime/shm/flagged_lines.hpp — a small stage's bytes in lines with their own flags.
//
// A stage placed in FlaggedLines (layout.hpp, Step::place) keeps byte `offset` of the stage in
// line offset / kFlaggedLineBytes of its slot, at offset % kFlaggedLineBytes; puts and gets are
// cut at the line boundaries. The stage's one writer stamps every line it wrote with
// line_flag() after the bytes, line by line in order, each flag a release store. A reader
// waits until the last line of its range carries its stage's value (lines_stamped()); that
// flag's release orders every byte and earlier flag before it, so the reader then reads all
// its lines at once.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "runtime/shm/layout.hpp"

namespace multilane::runtime::shm {

// The lines [first, end) that hold `length` bytes from `offset` (none for 0 bytes).
struct LineRange {
  std::uint64_t first = 0;
  std::uint64_t end = 0;
};
inline LineRange lines_holding(std::uint64_t offset, std::uint64_t length) {
  if (length == 0) return {};
  return {offset / kFlaggedLineBytes, (offset + length - 1) / kFlaggedLineBytes + 1};
}

// What the writer stamps: the stage's sync value, and 32 bits of its call fingerprint that
// readers compare with their own (a difference is either another call or a line left from a
// stage 2^32 stages earlier; the reader then checks the whole tag).
inline std::uint64_t line_flag(std::uint32_t stage_value, std::uint64_t fingerprint) {
  return static_cast<std::uint64_t>(static_cast<std::uint32_t>(fingerprint)) << 32 | stage_value;
}

inline std::uint64_t load_flag(const FlaggedLine& line) {
  return std::atomic_ref<const std::uint64_t>(line.flag).load(std::memory_order_acquire);
}

// Whether the lines holding [offset, offset + length) carry `stage_value`. The writer stamps
// its lines in order, each flag released after all its bytes: the last line's flag tells for
// all of them, and a reader that polled every line would take them from the writer between
// its stores.
inline bool lines_stamped(const FlaggedLine* lines, std::uint64_t offset, std::uint64_t length,
                          std::uint32_t stage_value) {
  const LineRange range = lines_holding(offset, length);
  return static_cast<std::uint32_t>(load_flag(lines[range.end - 1])) == stage_value;
}

// Whether every line holding [offset, offset + length) carries exactly `flag`.
bool lines_carry(const FlaggedLine* lines, std::uint64_t offset, std::uint64_t length,
                 std::uint64_t flag);

// The writer's stamp on every line holding [offset, offset + length), after its bytes.
void stamp_lines(FlaggedLine* lines, std::uint64_t offset, std::uint64_t length,
                 std::uint64_t flag);

void copy_into_lines(FlaggedLine* lines, std::uint64_t offset, const std::byte* source,
                     std::uint64_t length);
void copy_out_of_lines(std::byte* destination, const FlaggedLine* lines, std::uint64_t offset,
                       std::uint64_t length);

}  // namespace multilane::runtime::shm
