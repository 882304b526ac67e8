// runtime/streams/byte_ranges.cpp — merged byte ranges (see byte_ranges.hpp).
#include "runtime/streams/byte_ranges.hpp"

#include <algorithm>

namespace multilane::runtime {

void ByteRanges::add(std::uint64_t offset, std::uint64_t length) {
  if (length == 0) return;
  std::uint64_t begin = offset;
  std::uint64_t end = offset + length;
  // Swallow every range that overlaps or touches [begin, end).
  auto it = ranges_.upper_bound(begin);
  if (it != ranges_.begin() && std::prev(it)->second >= begin) --it;
  while (it != ranges_.end() && it->first <= end) {
    begin = std::min(begin, it->first);
    end = std::max(end, it->second);
    bytes_ -= it->second - it->first;
    it = ranges_.erase(it);
  }
  ranges_.emplace(begin, end);
  bytes_ += end - begin;
}

std::vector<ByteRange> ByteRanges::ranges() const {
  std::vector<ByteRange> out;
  out.reserve(ranges_.size());
  for (const auto& [begin, end] : ranges_) out.push_back({begin, end - begin});
  return out;
}

std::vector<ByteRange> ByteRanges::missing(std::uint64_t offset, std::uint64_t length) const {
  std::vector<ByteRange> out;
  std::uint64_t at = offset;
  const std::uint64_t end = offset + length;
  // The first range that may cover `at` starts at or before it.
  auto it = ranges_.upper_bound(at);
  if (it != ranges_.begin()) --it;
  for (; it != ranges_.end() && at < end; ++it) {
    const auto [begin, stop] = *it;
    if (stop <= at) continue;
    if (begin >= end) break;
    if (begin > at) out.push_back({at, begin - at});
    at = std::max(at, stop);
  }
  if (at < end) out.push_back({at, end - at});
  return out;
}

void ByteRanges::clear() {
  ranges_.clear();
  bytes_ = 0;
}

}  // namespace multilane::runtime
