// sim/event_queue.hpp — the simulator's pending events, earliest first.
//
// An event is a time and a 64-bit key. Events pop in (time, key) order, a total order as long
// as keys of equal times differ (the engine's keys name the event's kind and target), so the
// pop order does not depend on the order of the pushes. Times must not go backwards: a push
// earlier than the last popped time is treated as happening at that time (the engine never
// does this; it would mean a negative latency).
//
// A radix heap (Ahuja, Mehlhorn, Orlin and Tarjan) on the bit pattern of the time, which orders
// non-negative doubles like their values: bucket i >= 1 holds the events whose time first
// differs from the current time in bit i-1. Pushing is O(1); popping the first event of a new
// instant scans the lowest non-empty bucket and spreads it into lower buckets (an event moves
// at most 64 times in all, in practice a few), then radix-sorts that instant's keys. Simulations of
// regular platforms have thousands of events per instant (every flow of a round of a tree ends
// at once), which a comparison heap would pop one O(log n) sift at a time and this queue sorts
// in one sequential pass. Events pushed for the current instant while it is being popped are
// merged in key order. Nothing is allocated once the buckets have reached their peak sizes.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <functional>
#include <vector>

#include "sim/huge_page_allocator.hpp"
#include "sim/radix_sort.hpp"

namespace multilane::sim {

class EventQueue {
 public:
  struct Event {
    double time;
    std::uint64_t key;
  };

  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }

  void push(double time, std::uint64_t key) {
    if (!(time > now_)) time = now_;  // also maps -0.0 to the current time's bits
    ++size_;
    const std::uint64_t bits = std::bit_cast<std::uint64_t>(time);
    if (bits == now_bits_) {
      late_.push_back(key);
      std::push_heap(late_.begin(), late_.end(), std::greater<>());
      return;
    }
    const int b = bucket_of(bits);
    buckets_[b].push_back({time, key});
    occupied_ |= std::uint64_t{1} << (b - 1);
  }

  // Time of the earliest event (the queue must not be empty). Moves on to that instant, so
  // nothing earlier may be pushed afterwards.
  double next_time() {
    if (!in_instant()) advance();
    return now_;
  }
  // True while events of the instant of the last next_time() remain.
  bool in_instant() const { return pos_ < current_.size() || !late_.empty(); }

  // Removes and returns the earliest event (the queue must not be empty).
  Event pop() {
    if (!in_instant()) advance();
    --size_;
    std::uint64_t key;
    if (!late_.empty() && (pos_ == current_.size() || late_.front() < current_[pos_])) {
      key = late_.front();
      std::pop_heap(late_.begin(), late_.end(), std::greater<>());
      late_.pop_back();
    } else {
      key = current_[pos_++];
    }
    return {now_, key};
  }

 private:
  int bucket_of(std::uint64_t bits) const { return 64 - std::countl_zero(bits ^ now_bits_); }

  // Moves to the next instant: the earliest time among the buckets becomes the current time,
  // its events (sorted by key) the current run, and the rest of its bucket moves down.
  void advance() {
    current_.clear();
    pos_ = 0;
    const int b = std::countr_zero(occupied_) + 1;
    auto& bucket = buckets_[b];
    double earliest = bucket.front().time;
    for (const Event& e : bucket) earliest = std::min(earliest, e.time);
    now_ = earliest;
    now_bits_ = std::bit_cast<std::uint64_t>(earliest);
    occupied_ &= ~(std::uint64_t{1} << (b - 1));
    for (const Event& e : bucket) {
      const std::uint64_t bits = std::bit_cast<std::uint64_t>(e.time);
      if (bits == now_bits_) {
        current_.push_back(e.key);
      } else {
        const int lower = bucket_of(bits);
        buckets_[lower].push_back(e);
        occupied_ |= std::uint64_t{1} << (lower - 1);
      }
    }
    bucket.clear();
    radix_sort(current_, sort_scratch_);
  }

  double now_ = 0;
  std::uint64_t now_bits_ = 0;
  std::uint64_t occupied_ = 0;  // bit i-1 set when bucket i is not empty
  std::size_t size_ = 0;
  std::array<BigVector<Event>, 65> buckets_;  // bucket 0 unused: the current instant is below
  BigVector<std::uint64_t> current_;          // keys of the current instant, sorted
  BigVector<std::uint64_t> sort_scratch_;
  std::size_t pos_ = 0;              // next of current_ to pop
  std::vector<std::uint64_t> late_;  // min-heap: pushed for the current instant
};

}  // namespace multilane::sim
