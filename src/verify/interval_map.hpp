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
//
// Runs live in a sorted vector, not a tree: schedules touch a buffer segment after segment, so
// the run wanted is almost always the one last touched or a neighbour (a remembered position
// makes the lookup O(1) then, binary search otherwise), and inserting a run moves only the
// few runs behind it. This is several times faster than std::map, in Debug builds
// especially, where the verifier runs thousands of schedules under the test suite.
#pragma once

#include <cstdint>
#include <vector>

namespace multilane::verify {

template <class V, class Traits>
class IntervalMap {
 public:
  IntervalMap() = default;
  IntervalMap(std::uint64_t size, const V& initial) : size_(size) {
    if (size_ > 0) runs_.push_back({0, initial});
  }

  std::uint64_t size() const { return size_; }
  std::size_t num_runs() const { return runs_.size(); }

  // Calls fn(begin, end, value) for each run overlapping [begin, end), clipped to it; `value`
  // describes byte `begin`. Requires end <= size().
  template <class Fn>
  void for_each(std::uint64_t begin, std::uint64_t end, Fn&& fn) const {
    if (begin >= end) return;
    for (std::size_t i = find(begin); i < runs_.size() && runs_[i].start < end; ++i) {
      const Run& run = runs_[i];
      const std::uint64_t from = run.start < begin ? begin : run.start;
      const std::uint64_t run_end = end_of(i);
      const std::uint64_t to = run_end < end ? run_end : end;
      fn(from, to, from == run.start ? run.value : Traits::shifted(run.value, from - run.start));
    }
  }

  // Sets [begin, end) to one run starting with `value`. Requires end <= size().
  void assign(std::uint64_t begin, std::uint64_t end, const V& value) {
    if (begin >= end) return;
    const std::size_t first = split_at(begin);
    const std::size_t last = split_at(end);  // inserts after `first`: `first` stays valid
    runs_[first].value = value;
    runs_.erase(runs_.begin() + static_cast<std::ptrdiff_t>(first) + 1,
                runs_.begin() + static_cast<std::ptrdiff_t>(last));
    merge(first, first + 1);
  }

  // Calls fn(begin, end, value&) on each run inside [begin, end) after splitting the runs at
  // both ends, so fn may change the value of exactly that part; then merges again.
  template <class Fn>
  void update(std::uint64_t begin, std::uint64_t end, Fn&& fn) {
    if (begin >= end) return;
    const std::size_t first = split_at(begin);
    const std::size_t last = split_at(end);
    for (std::size_t i = first; i < last; ++i) fn(runs_[i].start, end_of(i), runs_[i].value);
    merge(first, last);
  }

 private:
  struct Run {
    std::uint64_t start;
    V value;
  };

  std::uint64_t end_of(std::size_t i) const {
    return i + 1 < runs_.size() ? runs_[i + 1].start : size_;
  }

  bool contains(std::size_t i, std::uint64_t at) const {
    return i < runs_.size() && runs_[i].start <= at && at < end_of(i);
  }

  // Index of the run containing `at` (< size()).
  std::size_t find(std::uint64_t at) const {
    if (contains(hint_, at)) return hint_;
    if (contains(hint_ + 1, at)) return hint_ = hint_ + 1;
    if (hint_ > 0 && contains(hint_ - 1, at)) return hint_ = hint_ - 1;
    std::size_t lo = 0;  // runs_[lo].start <= at
    std::size_t hi = runs_.size();
    while (hi - lo > 1) {
      const std::size_t mid = lo + (hi - lo) / 2;
      if (runs_[mid].start <= at) {
        lo = mid;
      } else {
        hi = mid;
      }
    }
    return hint_ = lo;
  }

  // Makes `at` the start of a run; returns its index (runs_.size() when at == size()).
  std::size_t split_at(std::uint64_t at) {
    if (at >= size_) return runs_.size();
    const std::size_t i = find(at);
    if (runs_[i].start == at) return i;
    const Run piece{at, Traits::shifted(runs_[i].value, at - runs_[i].start)};
    runs_.insert(runs_.begin() + static_cast<std::ptrdiff_t>(i) + 1, piece);
    return i + 1;
  }

  // Merges the runs [first, last) with each other and with their outer neighbours.
  void merge(std::size_t first, std::size_t last) {
    std::size_t out = first > 0 ? first - 1 : first;
    const std::size_t stop = last < runs_.size() ? last : runs_.size() - 1;  // right neighbour
    for (std::size_t i = out + 1; i <= stop; ++i) {
      if (Traits::continues(runs_[out].value, runs_[i].start - runs_[out].start, runs_[i].value)) {
        continue;
      }
      ++out;
      if (out != i) runs_[out] = runs_[i];
    }
    runs_.erase(runs_.begin() + static_cast<std::ptrdiff_t>(out) + 1,
                runs_.begin() + static_cast<std::ptrdiff_t>(stop) + 1);
    hint_ = out;
  }

  std::uint64_t size_ = 0;
  std::vector<Run> runs_;
  mutable std::size_t hint_ = 0;  // the run last looked up
};

}  // namespace multilane::verify
