// runtime/check/reduction_inputs.hpp — the inputs of checked reductions and the check of their
// results (data_check.hpp tells which values and why they make every result exact).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "multilane/reduction.hpp"

namespace multilane::runtime {

// Fills `input` (whole elements) with rank `rank`'s values; element i of the buffer is input
// element i.
void fill_reduction_input(const Reduction& reduction, int rank, std::span<std::byte> input);

// "" when `result` holds, element by element, the reduction over `ranks` ranks of their input
// elements from byte `input_offset` on; else the first wrong element, named by its place in
// the receive buffer.
std::string check_reduced(const Reduction& reduction, int rank, int ranks,
                          std::uint64_t input_offset, std::span<const std::byte> result);

}  // namespace multilane::runtime
