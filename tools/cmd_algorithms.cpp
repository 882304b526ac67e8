// `multilane algorithms`: every collective and algorithm, with a summary and its origin.
#include <fmt/format.h>

#include "command.hpp"
#include "multilane/algorithms.hpp"

namespace {

int list_algorithms() {
  for (auto collective : multilane::kAllCollectives) {
    fmt::print("{}\n", multilane::to_string(collective));
    for (const auto& a : multilane::all_algorithms()) {
      if (a.collective != collective) continue;
      std::string flags;
      if (a.pipelined) flags += " [pipelined: --segment]";
      if (a.uses_wan_pairs()) flags += " [--wan-pairs]";
      fmt::print("  {:<19} {}{}\n  {:<19} from: {}\n", a.name, a.summary, flags, "", a.origin);
      if (a.takes_leaders_algorithm) {
        fmt::print("  {:<19} also {}:X, X between the node leaders, one of {}\n", "", a.name,
                   multilane::leaders_algorithm_names(collective));
      }
    }
  }
  return 0;
}

const bool algorithms_registered = multilane::cli::register_command(
    {"algorithms", "List every collective and algorithm, with where it comes from",
     [](CLI::App&) -> multilane::cli::Runner { return list_algorithms; }});

}  // namespace
