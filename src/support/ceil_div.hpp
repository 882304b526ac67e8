// ceil_div.hpp — integer division rounded up, and rounding up to a multiple.
//
// One spelling for the `(a + b - 1) / b` idiom, so that a reader sees the intent (how many
// pieces of b cover a) instead of re-deriving it at each call site.
#pragma once

#include <concepts>

namespace multilane {

// The number of pieces of `divisor` that cover `dividend`: ceil(dividend / divisor), for
// dividend >= 0 and divisor > 0 (and dividend + divisor - 1 representable in T).
template <std::integral T>
constexpr T ceil_div(T dividend, T divisor) {
  return (dividend + divisor - 1) / divisor;
}

// The smallest multiple of `unit` that is at least `value` (unit > 0).
template <std::integral T>
constexpr T round_up(T value, T unit) {
  return ceil_div(value, unit) * unit;
}

}  // namespace multilane
