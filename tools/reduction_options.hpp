// tools/reduction_options.hpp — `--type` and `--op`: what a reduction combines, for every
// subcommand that runs or builds reductions (bench, verify, schedule, sim, model).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

#include "multilane/reduction.hpp"

namespace multilane::cli {

struct ReductionOptions {
  std::string type;
  std::string op = "sum";

  explicit ReductionOptions(std::string default_type) : type(std::move(default_type)) {}
  void add_to(CLI::App& app);
  // Throws UsageError naming --type or --op and the allowed values, or why the two do not go
  // together ("--op bxor applies to integer types only, not float").
  Reduction parse() const;
};

// A size given in bytes for a reduction, cut to whole elements (as the OSU micro-benchmarks
// do: count = size / element size).
std::uint64_t whole_elements(std::uint64_t bytes, const Reduction& reduction);

}  // namespace multilane::cli
