// tools/cli_options.hpp — helpers shared by the subcommands' option handling.
#pragma once

#include <fmt/format.h>

#include <chrono>
#include <string>
#include <string_view>

#include "multilane/errors.hpp"

namespace multilane::cli {

// Runs `parse(text)` and prefixes a UsageError's message with the option's name, so the user
// sees which argument was wrong: `--lane-bandwidth: bandwidth "1Gb" does not parse: ...`.
template <typename Parse>
auto parse_option(std::string_view option, const std::string& text, Parse parse) {
  try {
    return parse(text);
  } catch (const UsageError& e) {
    throw UsageError(fmt::format("{}: {}", option, e.what()));
  }
}

// An option given in seconds (--timeout 2.5), as the runtime's durations take it.
inline std::chrono::milliseconds seconds(double s) {
  return std::chrono::milliseconds(static_cast<long long>(s * 1000));
}

}  // namespace multilane::cli
