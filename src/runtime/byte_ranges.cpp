// runtime/byte_ranges.cpp — merged byte ranges (see byte_ranges.hpp).
#include "runtime/byte_ranges.hpp"

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

void ByteRanges::clear() {
  ranges_.clear();
  bytes_ = 0;
}

std::vector<std::vector<ByteRange>> share_out(const std::vector<ByteRange>& ranges, int parts,
                                              std::uint64_t max_piece) {
  std::uint64_t total = 0;
  for (const ByteRange& r : ranges) total += r.length;
  std::vector<std::vector<ByteRange>> out;
  if (total == 0 || parts < 1) return out;
  const auto n = static_cast<std::uint64_t>(parts);
  const std::uint64_t share = (total + n - 1) / n;  // bytes per part, the last may get fewer
  const std::uint64_t piece_limit = std::max<std::uint64_t>(1, std::min(share, max_piece));
  out.emplace_back();
  std::uint64_t in_part = 0;
  for (ByteRange rest : ranges) {
    while (rest.length > 0) {
      if (in_part == share) {
        out.emplace_back();
        in_part = 0;
      }
      const std::uint64_t take = std::min({rest.length, piece_limit, share - in_part});
      out.back().push_back({rest.offset, take});
      in_part += take;
      rest.offset += take;
      rest.length -= take;
    }
  }
  return out;
}

}  // namespace multilane::runtime
