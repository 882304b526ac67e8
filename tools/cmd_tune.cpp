// `multilane tune shm`: sweeps the shared-memory layer's buffer size (1 KiB .. 1 MiB) and
// pipeline depth (2 .. 32) per collective and size on RANKS local ranks, and tries each size
// copying once (cross-memory attach) too; prints the chosen values and their gain over the
// defaults, and writes a tuning file the runtime reads (MULTILANE_TUNING=FILE;
// runtime/shm/tuning_file.hpp).
//
//   multilane tune shm [-n RANKS] [--quick] [--sizes LIST] [--buffer-sizes LIST]
//                      [--depths LIST] [--collectives LIST] [--iterations N]
//                      [--repetitions N] [--purge-cache] [-o FILE]
#include <fmt/format.h>

#include <algorithm>
#include <fstream>

#include "command.hpp"
#include "multilane/errors.hpp"
#include "multilane/units.hpp"
#include "runtime/shm/topology.hpp"
#include "runtime/shm/tune.hpp"
#include "runtime/shm/tuning_file.hpp"

namespace multilane::cli {
namespace {

using runtime::shm::CallTiming;
using runtime::shm::TuneRequest;
using runtime::shm::TuneResult;

struct TuneOptions {
  int ranks = 0;  // 0: one per core of this machine (hwloc)
  bool quick = false;
  std::string sizes = "1KiB,16KiB,128KiB,1MiB";
  std::string buffer_sizes = "1KiB,4KiB,16KiB,64KiB,256KiB,1MiB";
  std::string depths = "2,4,8,16,32";
  std::string collectives = "bcast,scatter,gather,allgather,alltoall";
  int iterations = CallTiming{}.iterations;
  int repetitions = CallTiming{}.repetitions;
  bool purge_cache = false;
  std::string output = "multilane-shm-tuning.toml";
  double timeout_s = 60;
};

std::vector<int> parse_int_list(const std::string& text, const char* what) {
  std::vector<int> out;
  std::size_t begin = 0;
  while (begin <= text.size()) {
    const std::size_t end = std::min(text.find(',', begin), text.size());
    try {
      out.push_back(std::stoi(text.substr(begin, end - begin)));
    } catch (const std::exception&) {
      throw UsageError(fmt::format("{}: \"{}\" is not a list of integers", what, text));
    }
    begin = end + 1;
  }
  return out;
}

TuneRequest request_of(const TuneOptions& o) {
  TuneRequest r;
  r.ranks = o.ranks;
  if (r.ranks == 0) r.ranks = std::max(runtime::shm::machine_topology().cores, 2);
  std::size_t begin = 0;
  while (begin <= o.collectives.size()) {
    const std::size_t end = std::min(o.collectives.find(',', begin), o.collectives.size());
    const std::string name = o.collectives.substr(begin, end - begin);
    const auto c = parse_collective(name);
    if (!c || is_reduction(*c)) {  // the shared-memory layer tunes its group calls only
      throw UsageError(fmt::format(
          "--collectives: unknown collective \"{}\" (bcast, scatter, gather, allgather, alltoall)",
          name));
    }
    r.collectives.push_back(*c);
    begin = end + 1;
  }
  // Quick mode: a corner of the grid, for tests and a first look.
  r.sizes = parse_size_list(o.quick ? "1KiB,8KiB" : o.sizes);
  r.buffer_sizes = parse_size_list(o.quick ? "4KiB,64KiB" : o.buffer_sizes);
  r.depths = parse_int_list(o.quick ? "2,16" : o.depths, "--depths");
  r.timing = {o.quick ? 1 : o.iterations, o.quick ? 3 : o.repetitions, o.purge_cache};
  r.timeout = std::chrono::milliseconds(static_cast<long long>(o.timeout_s * 1000));
  return r;
}

std::string time_text(double s) {
  if (s < 1e-5) return fmt::format("{:.2f} us", s * 1e6);  // small calls take well under 1 us
  return s < 1e-3 ? fmt::format("{:.1f} us", s * 1e6) : fmt::format("{:.2f} ms", s * 1e3);
}

int run_tune(const TuneOptions& o) {
  const TuneRequest request = request_of(o);
  const std::vector<TuneResult> results = runtime::shm::tune_shm(request);
  runtime::shm::TuningTable table;
  const runtime::shm::Topology& machine = runtime::shm::machine_topology();
  fmt::print("this machine: {} cores, {} hardware threads, {} NUMA node{} ({})\n", machine.cores,
             machine.hardware_threads, machine.numa_nodes, machine.numa_nodes == 1 ? "" : "s",
             machine.from_hwloc ? "hwloc" : "sysconf");
  fmt::print("shared-memory tuning on {} local ranks (default: {} buffers of {})\n", request.ranks,
             runtime::shm::ShmTuning{}.pipeline_buffers,
             format_size(runtime::shm::ShmTuning{}.buffer_size));
  fmt::print("{:<10} {:>10}  {:>6} {:>8} {:>6}  {:>10} {:>10} {:>6}\n", "collective", "size",
             "copies", "buffer", "depth", "tuned", "default", "gain");
  for (const TuneResult& r : results) {
    // A call that copies once does not go through the buffers: their size and depth do not
    // matter for it.
    const bool once = r.single_copy;
    fmt::print("{:<10} {:>10}  {:>6} {:>8} {:>6}  {:>10} {:>10} {:>5.2f}x\n",
               to_string(r.collective), format_size(r.size), once ? "once" : "twice",
               once ? "-" : format_size(r.best.buffer_size),
               once ? std::string("-") : std::to_string(r.best.pipeline_buffers),
               time_text(r.best_s), time_text(r.default_s), r.gain());
    table.entries.push_back({r.collective, r.size, r.best});
  }
  std::ofstream out(o.output);
  out << runtime::shm::tuning_to_toml(
      table, fmt::format("multilane shm tuning: {} local ranks, written by `multilane tune shm`",
                         request.ranks));
  if (!out) throw UsageError(fmt::format("{}: cannot write", o.output));
  fmt::print("wrote {} (use it with MULTILANE_TUNING={})\n", o.output, o.output);
  return 0;
}

const bool tune_registered = register_command(
    {"tune", "Measure and choose tuning parameters (shm: shared-memory buffers)",
     [](CLI::App& app) -> Runner {
       auto o = std::make_shared<TuneOptions>();
       app.require_subcommand(1);
       CLI::App* shm = app.add_subcommand(
           "shm",
           "Sweep buffer size and pipeline depth per collective and size on one node, "
           "and try copying once");
       shm->add_option("-n,--ranks", o->ranks,
                       "local ranks (processes on this machine); default: one per core (hwloc)")
           ->check(CLI::Range(1, 4096));
       shm->add_flag("--quick", o->quick, "a small corner of the grid (2 sizes, 2 x 2 geometries)");
       shm->add_option("--sizes", o->sizes, "bytes per block (whole message for bcast)");
       shm->add_option("--buffer-sizes", o->buffer_sizes, "buffer sizes B to try");
       shm->add_option("--depths", o->depths, "pipeline depths D to try (1..64)");
       shm->add_option("--collectives", o->collectives, "collectives to tune");
       shm->add_option("--iterations", o->iterations, "calls per measurement")
           ->check(CLI::Range(1, 100000));
       shm->add_option("--repetitions", o->repetitions,
                       "measurements per point (the median counts)")
           ->check(CLI::Range(1, 1000));
       shm->add_flag("--purge-cache", o->purge_cache, "write 64 MiB before each measurement");
       shm->add_option("-o,--output", o->output, "tuning file to write");
       shm->add_option("--timeout", o->timeout_s, "seconds any wait may take")
           ->check(CLI::Range(0.001, 86400.0));
       return [o] { return run_tune(*o); };
     }});

}  // namespace
}  // namespace multilane::cli
