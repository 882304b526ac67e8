// runtime/exec/chunk_combiner.cpp — see chunk_combiner.hpp.
#include "runtime/exec/chunk_combiner.hpp"
#include "support/ceil_div.hpp"

namespace multilane::runtime {

ChunkCombiner::ChunkCombiner(std::span<std::byte> destination, const Reduction& reduction)
    : destination_(destination), reduction_(reduction), element_(element_size(reduction.type)) {
  if (destination.size() > kInlineBytes) {
    heap_staging_ = std::make_unique_for_overwrite<std::byte[]>(destination.size());
  }
}

void ChunkCombiner::combine(std::uint64_t first_element, std::uint64_t count) {
  const std::uint64_t at = first_element * element_;
  reduce_elements(reduction_, destination_.data() + at, staging_bytes() + at, count);
}

void ChunkCombiner::add_split(std::uint64_t index, std::uint64_t bytes) {
  std::uint64_t& have = split_bytes_[index];
  have += bytes;
  if (have < element_) return;
  split_bytes_.erase(index);
  combine(index, 1);
}

void ChunkCombiner::landed(std::uint64_t offset, std::uint64_t length) {
  if (length == 0) return;
  const std::uint64_t end = offset + length;
  const std::uint64_t whole_begin = ceil_div<std::uint64_t>(offset, element_);  // first inside
  const std::uint64_t whole_end = end / element_;  // one past the last inside
  if (whole_begin > whole_end) {                   // the chunk lies inside one element
    return add_split(offset / element_, length);
  }
  if (offset % element_ != 0) add_split(offset / element_, whole_begin * element_ - offset);
  if (whole_end > whole_begin) combine(whole_begin, whole_end - whole_begin);
  if (end % element_ != 0) add_split(whole_end, end - whole_end * element_);
}

}  // namespace multilane::runtime
