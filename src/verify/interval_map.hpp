// verify/interval_map.hpp — a value for every byte of a buffer, stored as runs.
//
// Buffers reach ~130 MiB symbolically, so per-byte state is out of the question. The map
// covers [0, size) completely with runs [start, next start); a run's value describes its first
// byte, and Traits say how a value moves along the run and when two neighbouring runs are one:
//
//   static V shifted(const V& v, std::uint64_t delta);   // the value `delta` bytes further on
//   static bool continues(const V& left, std::uint64_t left_length, const V& right);
//
// Neighbouring runs that continue each other are merged after every change, so a buffer that
// was written in order by a few transfers stays a handful of runs.
#pragma once

#include <cstdint>
#include <iterator>
#include <map>

namespace multilane::verify {

template <class V, class Traits>
class IntervalMap {
 public:
  IntervalMap() = default;
  IntervalMap(std::uint64_t size, const V& initial) : size_(size) {
    if (size_ > 0) runs_.emplace(0, initial);
  }

  std::uint64_t size() const { return size_; }
  std::size_t num_runs() const { return runs_.size(); }

  // Calls fn(begin, end, value) for each run overlapping [begin, end), clipped to it; `value`
  // describes byte `begin`. Requires end <= size().
  template <class Fn>
  void for_each(std::uint64_t begin, std::uint64_t end, Fn&& fn) const {
    if (begin >= end) return;
    auto it = std::prev(runs_.upper_bound(begin));
    while (it != runs_.end() && it->first < end) {
      const auto next = std::next(it);
      const std::uint64_t run_end = next == runs_.end() ? size_ : next->first;
      const std::uint64_t from = it->first < begin ? begin : it->first;
      const std::uint64_t to = run_end < end ? run_end : end;
      fn(from, to, from == it->first ? it->second : Traits::shifted(it->second, from - it->first));
      it = next;
    }
  }

  // Sets [begin, end) to one run starting with `value`. Requires end <= size().
  void assign(std::uint64_t begin, std::uint64_t end, const V& value) {
    if (begin >= end) return;
    split_at(end);
    auto first = split_at(begin);
    auto last = end < size_ ? runs_.find(end) : runs_.end();
    first = runs_.erase(first, last);
    auto inserted = runs_.emplace_hint(first, begin, value);
    merge_around(inserted, inserted);
  }

  // Calls fn(begin, end, value&) on each run inside [begin, end) after splitting the runs at
  // both ends, so fn may change the value of exactly that part; then merges again.
  template <class Fn>
  void update(std::uint64_t begin, std::uint64_t end, Fn&& fn) {
    if (begin >= end) return;
    split_at(end);
    auto first = split_at(begin);
    auto it = first;
    auto last = it;
    while (it != runs_.end() && it->first < end) {
      const auto next = std::next(it);
      fn(it->first, next == runs_.end() ? size_ : next->first, it->second);
      last = it;
      it = next;
    }
    merge_around(first, last);
  }

 private:
  using Runs = std::map<std::uint64_t, V>;
  using Iterator = typename Runs::iterator;

  // Makes `at` the start of a run (when inside the buffer); returns that run, or end().
  Iterator split_at(std::uint64_t at) {
    if (at >= size_) return runs_.end();
    auto it = std::prev(runs_.upper_bound(at));
    if (it->first == at) return it;
    return runs_.emplace_hint(std::next(it), at, Traits::shifted(it->second, at - it->first));
  }

  // Merges runs first..last with each other and with their outer neighbours where possible.
  void merge_around(Iterator first, Iterator last) {
    const auto after_last = std::next(last);
    const std::uint64_t stop_key = after_last == runs_.end() ? size_ : after_last->first;
    auto it = first == runs_.begin() ? first : std::prev(first);
    for (auto next = std::next(it); next != runs_.end() && next->first <= stop_key;
         next = std::next(it)) {
      if (Traits::continues(it->second, next->first - it->first, next->second)) {
        runs_.erase(next);
      } else {
        it = next;
      }
    }
  }

  std::uint64_t size_ = 0;
  Runs runs_;
};

}  // namespace multilane::verify
