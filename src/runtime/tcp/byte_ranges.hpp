// runtime/tcp/byte_ranges.hpp — a set of byte ranges [begin, end) of one message.
//
// A receiver records which bytes of a message arrived (chunks may arrive twice when a sender
// re-sent a stalled stream's share on other streams, see docs/runtime.md), and a sender works
// out which bytes a stalled stream may not have delivered. Both only need: add a range, count
// the bytes covered, list the ranges, and the parts of a range not covered yet (a receiver hands
// only those on, so a reduction combines every byte once). Adjacent and overlapping ranges are
// merged, so a message received in order is one range.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace multilane::runtime {

struct ByteRange {
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
  std::uint64_t end() const { return offset + length; }
  friend bool operator==(const ByteRange&, const ByteRange&) = default;
};

class ByteRanges {
 public:
  void add(std::uint64_t offset, std::uint64_t length);
  void add(const ByteRange& range) { add(range.offset, range.length); }
  std::uint64_t bytes() const { return bytes_; }  // bytes covered, each counted once
  bool empty() const { return ranges_.empty(); }
  std::vector<ByteRange> ranges() const;  // disjoint, in offset order
  // The parts of [offset, offset + length) not covered, disjoint, in offset order.
  std::vector<ByteRange> missing(std::uint64_t offset, std::uint64_t length) const;
  // Calls visit(ByteRange) for each of those, in order, without collecting them.
  template <typename Visit>
  void for_each_missing(std::uint64_t offset, std::uint64_t length, Visit&& visit) const {
    std::uint64_t at = offset;
    const std::uint64_t end = offset + length;
    // From the first range that ends after `at`.
    auto it = std::partition_point(ranges_.begin(), ranges_.end(),
                                   [&](const Run& run) { return run.end <= at; });
    for (; it != ranges_.end() && at < end; ++it) {
      if (it->begin >= end) break;
      if (it->begin > at) visit(ByteRange{at, it->begin - at});
      at = std::max(at, it->end);
    }
    if (at < end) visit(ByteRange{at, end - at});
  }
  void clear();

 private:
  // Few ranges at a time (a message arrives roughly in order on each stream), so a sorted
  // vector, whose storage clear() keeps for the next message.
  struct Run {
    std::uint64_t begin;
    std::uint64_t end;
  };
  std::vector<Run> ranges_;  // disjoint, not touching, in order
  std::uint64_t bytes_ = 0;
};

}  // namespace multilane::runtime
