// support/reused_queue.hpp — a first-in first-out queue that keeps its memory: a loop that
// pushes and pops one entry per iteration allocates nothing after the first (std::deque frees
// and allocates a block every few hundred bytes of entries).
//
// The entries live in one vector from `head_` on; popped ones are only skipped, and moved out
// of the way once they are the larger half, or all of it (no allocation either way).
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace multilane {

template <typename T>
class ReusedQueue {
 public:
  bool empty() const { return head_ == entries_.size(); }
  T& front() { return entries_[head_]; }
  void push_back(T entry) { entries_.push_back(std::move(entry)); }
  void pop_front() {
    ++head_;
    if (head_ == entries_.size()) {
      entries_.clear();
      head_ = 0;
    } else if (head_ > entries_.size() / 2) {
      entries_.erase(entries_.begin(), entries_.begin() + static_cast<std::ptrdiff_t>(head_));
      head_ = 0;
    }
  }
  // The entries in order, front first.
  std::span<T> entries() { return std::span(entries_).subspan(head_); }

 private:
  std::vector<T> entries_;
  std::size_t head_ = 0;
};

}  // namespace multilane
