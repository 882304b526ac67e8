// tools/bench_options.hpp — the options of `multilane bench`, shared by the command the user
// runs (which launches the job) and the hidden `bench-rank` command every rank runs.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "reduction_options.hpp"

namespace multilane::cli {

struct BenchOptions {
  std::string collective = "bcast";
  std::string algorithm = "all";
  std::string sizes = "1KiB,1MiB";
  std::string segment = "auto";
  std::string counts = "ramp";  // the v-forms: a pattern, or the counts (count_patterns.hpp)
  int root = 0;
  int iterations = 0;
  int repetitions = 5;
  bool check = false;
  bool shared_buffers = false;  // buffers from SharedBuffer instead of the application's memory
  bool p2p = false;
  bool pingpong = false;                // round trips of each size between ranks 0 and 1
  std::string size = "64MiB";           // --p2p
  std::string result_file;              // bench-rank: where rank 0 writes its JSON
  ReductionOptions reduction{"float"};  // as the OSU micro-benchmarks' allreduce

  // Declares the options shared by `bench` and `bench-rank`.
  void add_to(CLI::App& app);
  // The same options as arguments for `bench-rank`.
  std::vector<std::string> to_arguments() const;
};

}  // namespace multilane::cli
