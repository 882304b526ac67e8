// tools/reduction_options.cpp — see reduction_options.hpp.
#include "reduction_options.hpp"

#include <fmt/format.h>

#include "multilane/errors.hpp"

namespace multilane::cli {

void ReductionOptions::add_to(CLI::App& app) {
  app.add_option("--type", type, fmt::format("reductions: element type ({})", element_type_names()))
      ->capture_default_str();
  app.add_option("--op", op, fmt::format("reductions: operation ({})", reduce_op_names()))
      ->capture_default_str();
}

Reduction ReductionOptions::parse() const {
  const auto t = parse_element_type(type);
  if (!t) {
    throw UsageError(
        fmt::format("--type \"{}\" is unknown: choose one of {}", type, element_type_names()));
  }
  const auto o = parse_reduce_op(op);
  if (!o) {
    throw UsageError(
        fmt::format("--op \"{}\" is unknown: choose one of {}", op, reduce_op_names()));
  }
  const Reduction reduction{*t, *o};
  if (const std::string why = reduction_mismatch(reduction); !why.empty()) {
    throw UsageError(fmt::format("--op {}", why));
  }
  return reduction;
}

std::uint64_t whole_elements(std::uint64_t bytes, const Reduction& reduction) {
  const std::uint64_t e = element_size(reduction.type);
  return bytes / e * e;
}

}  // namespace multilane::cli
