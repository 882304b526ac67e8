#include "runtime/shm/flagged_lines.hpp"

#include <algorithm>

#include "runtime/shm/copy_bytes.hpp"

namespace multilane::runtime::shm {
namespace {

// Calls `copy(line, at, done, n)` for each piece of [offset, offset + length) within one line:
// `n` bytes at `at` in line `line`, `done` bytes into the range.
template <typename Copy>
void for_each_piece(std::uint64_t offset, std::uint64_t length, Copy copy) {
  std::uint64_t done = 0;
  while (done < length) {
    const std::uint64_t at = offset + done;
    const std::uint64_t in_line = at % kFlaggedLineBytes;
    const std::uint64_t n = std::min(length - done, kFlaggedLineBytes - in_line);
    copy(at / kFlaggedLineBytes, in_line, done, n);
    done += n;
  }
}

}  // namespace

bool lines_carry(const FlaggedLine* lines, std::uint64_t offset, std::uint64_t length,
                 std::uint64_t flag) {
  const LineRange range = lines_holding(offset, length);
  for (std::uint64_t i = range.first; i < range.end; ++i) {
    if (load_flag(lines[i]) != flag) return false;
  }
  return true;
}

void stamp_lines(FlaggedLine* lines, std::uint64_t offset, std::uint64_t length,
                 std::uint64_t flag) {
  const LineRange range = lines_holding(offset, length);
  for (std::uint64_t i = range.first; i < range.end; ++i) {
    std::atomic_ref<std::uint64_t>(lines[i].flag).store(flag, std::memory_order_release);
  }
}

void copy_into_lines(FlaggedLine* lines, std::uint64_t offset, const std::byte* source,
                     std::uint64_t length) {
  for_each_piece(offset, length,
                 [&](std::uint64_t line, std::uint64_t at, std::uint64_t done, std::uint64_t n) {
                   copy_few_bytes(lines[line].data + at, source + done, n);
                 });
}

void copy_out_of_lines(std::byte* destination, const FlaggedLine* lines, std::uint64_t offset,
                       std::uint64_t length) {
  for_each_piece(offset, length,
                 [&](std::uint64_t line, std::uint64_t at, std::uint64_t done, std::uint64_t n) {
                   copy_few_bytes(destination + done, lines[line].data + at, n);
                 });
}

}  // namespace multilane::runtime::shm
