// runtime/tcp/byte_ranges.cpp — merged byte ranges (see byte_ranges.hpp).
#include "runtime/tcp/byte_ranges.hpp"

#include <algorithm>

namespace multilane::runtime {

void ByteRanges::add(std::uint64_t offset, std::uint64_t length) {
  if (length == 0) return;
  std::uint64_t begin = offset;
  std::uint64_t end = offset + length;
  // Swallow every range that overlaps or touches [begin, end).
  const auto first = std::partition_point(ranges_.begin(), ranges_.end(),
                                          [&](const Run& run) { return run.end < begin; });
  auto last = first;
  for (; last != ranges_.end() && last->begin <= end; ++last) {
    begin = std::min(begin, last->begin);
    end = std::max(end, last->end);
    bytes_ -= last->end - last->begin;
  }
  if (first == last) {
    ranges_.insert(first, Run{begin, end});
  } else {
    *first = Run{begin, end};
    ranges_.erase(first + 1, last);
  }
  bytes_ += end - begin;
}

std::vector<ByteRange> ByteRanges::ranges() const {
  std::vector<ByteRange> out;
  out.reserve(ranges_.size());
  for (const Run& run : ranges_) out.push_back({run.begin, run.end - run.begin});
  return out;
}

std::vector<ByteRange> ByteRanges::missing(std::uint64_t offset, std::uint64_t length) const {
  std::vector<ByteRange> out;
  for_each_missing(offset, length, [&](const ByteRange& range) { out.push_back(range); });
  return out;
}

void ByteRanges::clear() {
  ranges_.clear();
  bytes_ = 0;
}

}  // namespace multilane::runtime
