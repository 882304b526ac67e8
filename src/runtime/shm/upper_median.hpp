// runtime/shm/upper_median.hpp — the median the shm layer's measurements take.
//
// The middle element, the upper one of an even count (no averaging: it is a time that was
// measured). Takes its argument by value, since finding it reorders the values.
#pragma once

#include <algorithm>
#include <vector>

namespace multilane::runtime::shm {

inline double upper_median(std::vector<double> values) {
  const auto middle = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
  std::nth_element(values.begin(), middle, values.end());
  return *middle;
}

}  // namespace multilane::runtime::shm
