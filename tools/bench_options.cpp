// tools/bench_options.cpp — see bench_options.hpp.
#include "bench_options.hpp"

#include "multilane/count_patterns.hpp"
#include "multilane/schedule.hpp"

namespace multilane::cli {

void BenchOptions::add_to(CLI::App& app) {
  app.add_option("--collective", collective, collective_names())->capture_default_str();
  reduction.add_to(app);
  app.add_option("--algorithm", algorithm, "algorithm name, auto, or all")->capture_default_str();
  app.add_option("--sizes", sizes,
                 "comma-separated sizes, e.g. 1KiB,1MiB,16MiB (reductions: bytes, cut to whole "
                 "elements of --type)")
      ->capture_default_str();
  app.add_option("--segment", segment, "segment size of pipelined algorithms, or auto")
      ->capture_default_str();
  app.add_option("--root", root, "root rank")->capture_default_str();
  app.add_option("--counts", counts,
                 "the v-forms: uneven block sizes, " + counts_pattern_names() +
                     " (each size is the largest block), or the counts, comma-separated (p of "
                     "them, p*p for alltoallv; then --sizes is not used)")
      ->capture_default_str();
  app.add_option("--iterations", iterations, "calls per timed repetition (0: from the size)")
      ->check(CLI::Range(0, 1000000))
      ->capture_default_str();
  app.add_option("--repetitions", repetitions, "timed repetitions; the median is reported")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  app.add_flag("--check", check, "fill buffers with a pattern and verify every byte on every rank");
  app.add_flag("--shared-buffers", shared_buffers,
               "collectives: send and receive buffers from multilane::SharedBuffer (like "
               "MPI_Alloc_mem): "
               "the ranks of a node then copy each other's with memcpy instead of the kernel");
  app.add_flag("--p2p", p2p, "point-to-point throughput from rank 0 to rank 1 instead");
  app.add_option("--size", size, "--p2p: bytes per transfer")->capture_default_str();
  app.add_flag("--pingpong", pingpong,
               "round trips between ranks 0 and 1 instead (each --sizes bytes there and back, "
               "blocking send and receive): the time of one round trip");
}

std::vector<std::string> BenchOptions::to_arguments() const {
  std::vector<std::string> args{"--collective",  collective,
                                "--algorithm",   algorithm,
                                "--sizes",       sizes,
                                "--segment",     segment,
                                "--counts",      counts,
                                "--root",        std::to_string(root),
                                "--iterations",  std::to_string(iterations),
                                "--repetitions", std::to_string(repetitions),
                                "--size",        size,
                                "--type",        reduction.type,
                                "--op",          reduction.op};
  if (check) args.push_back("--check");
  if (shared_buffers) args.push_back("--shared-buffers");
  if (p2p) args.push_back("--p2p");
  if (pingpong) args.push_back("--pingpong");
  if (!result_file.empty()) {
    args.push_back("--result-file");
    args.push_back(result_file);
  }
  return args;
}

}  // namespace multilane::cli
