// tools/sweep_command.hpp — the options shared by `multilane sim` and `multilane model`, and
// the run that follows: build each algorithm's schedule per size, simulate it (sim) or cost it
// with the closed forms (model), print a table or JSON, optionally plot and sweep P.
//
//   --platform FILE --collective C --algorithm A|all --sizes LIST [--segment SIZE|auto]
//   [--wan-pairs P|auto] [--root R] [--counts PATTERN] [--overhead DURATION] [--json]
//   [--trace OUT.json] [--plot OUT.png] [--sweep-pairs]
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "reduction_options.hpp"

namespace multilane::cli {

struct SweepCli {
  std::string platform, collective = "bcast", algorithm = "all", sizes, segment = "auto";
  std::string wan_pairs = "auto", overhead = "0s", trace, plot, counts = "ramp";
  int root = 0;
  bool json = false, compare_model = false, sweep_pairs = false;
  ReductionOptions reduction{"float"};
};

// Which of the two commands sharing these options runs: `multilane sim` or `multilane model`.
enum class SweepEngine { Simulator, Model };

void add_sweep_options(CLI::App& app, SweepCli& options, SweepEngine engine);
// Returns the process exit status.
int run_sweep_command(const SweepCli& options, SweepEngine engine);

}  // namespace multilane::cli
