// tests/shm/fake_segment.hpp — a group's segment in this process's memory, without a data
// area, for testing what ranks agree on through it (copy_chooser_test, root_share_test).
#pragma once

#include <algorithm>
#include <cstdlib>
#include <memory>

#include "runtime/shm/layout.hpp"

namespace multilane::runtime::shm::testing {

class FakeSegment {
 public:
  explicit FakeSegment(int ranks)
      : ranks_(ranks),
        memory_(static_cast<std::byte*>(std::aligned_alloc(4096, bytes(ranks))), &std::free) {
    std::fill_n(memory_.get(), bytes(ranks), std::byte{0});
  }
  SegmentView view() const { return view_segment(memory_.get(), ranks_, 0); }

 private:
  static std::size_t bytes(int ranks) { return (segment_bytes(ranks, 0) + 4095) / 4096 * 4096; }
  int ranks_;
  std::unique_ptr<std::byte, decltype(&std::free)> memory_;
};

}  // namespace multilane::runtime::shm::testing
