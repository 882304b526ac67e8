// `multilane bench`: launches a job of N ranks of itself (`bench-rank`), which measure
// collectives or point-to-point throughput over the real runtime; prints a table or JSON.
//
//   multilane bench -n 8 --collective bcast --algorithm all --sizes 1KiB,1MiB,16MiB --check
//   multilane bench -n 2 --p2p --streams 1,4 --size 256MiB
//   multilane bench -n 2 --pingpong --sizes 8,1KiB,64KiB
//   multilane bench --emu grid -n 8 --collective bcast --sizes 16MiB   (emulated grid, emu_job.hpp)
#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "bench_options.hpp"
#include "bench_report.hpp"
#include "cli_options.hpp"
#include "command.hpp"
#include "emu_job.hpp"
#include "exec_command.hpp"
#include "multilane/algorithms.hpp"
#include "multilane/collective.hpp"
#include "multilane/count_patterns.hpp"
#include "multilane/units.hpp"
#include "plot.hpp"
#include "runtime/launch/job_env.hpp"
#include "runtime/launch/launcher.hpp"
#include "tuning_option.hpp"

namespace multilane::cli {
namespace {

struct BenchCli {
  BenchOptions bench;
  int ranks = 2;
  std::string platform;
  double timeout_s = 60;
  bool json = false;
  bool explain = false;
  std::string streams = "1";
  std::string plot;
  std::string emulated_grid;  // --emu NAME
  std::string tuning_file;    // --tuning FILE
};

// A temporary file for rank 0's results, removed when the run ends.
struct ResultFile {
  std::filesystem::path path;
  ResultFile() {
    std::string name = (std::filesystem::temp_directory_path() / "multilane-bench-XXXXXX").string();
    const int fd = ::mkstemp(name.data());
    if (fd < 0) throw UsageError("cannot create a temporary file for the results");
    ::close(fd);
    path = name;
  }
  ~ResultFile() { std::filesystem::remove(path); }
  nlohmann::json read() const {
    std::ifstream in(path);
    nlohmann::json doc;
    try {
      in >> doc;
    } catch (const nlohmann::json::exception&) {
      throw CommunicationError(ErrorKind::internal,
                               "the benchmark job ended without results from rank 0");
    }
    return doc;
  }
};

void validate(const BenchCli& o) {
  if (o.bench.pingpong) {
    if (o.ranks < 2) throw UsageError("--pingpong needs -n 2 or more");
    if (o.bench.p2p) throw UsageError("--pingpong and --p2p exclude each other");
    parse_option("--sizes", o.bench.sizes, parse_size_list);
    return;
  }
  const auto collective = parse_collective(o.bench.collective);
  if (!collective) {
    throw UsageError(fmt::format("--collective \"{}\": choose one of {}", o.bench.collective,
                                 collective_names()));
  }
  if (is_reduction(*collective)) o.bench.reduction.parse();
  const auto& a = o.bench.algorithm;
  if (a != "all" && a != "auto" && !find_algorithm(*collective, a)) {
    throw UsageError("--algorithm: " + unknown_algorithm_message(*collective, a, {"all", "auto"}));
  }
  parse_option("--sizes", o.bench.sizes, parse_size_list);
  // Checked before the job starts, so that no rank fails alone.
  const CountsSpec counts = parse_option("--counts", o.bench.counts, parse_counts_spec);
  if (!counts.given.empty() && o.ranks > 0) {
    if (const auto error = counts_error(*collective, o.ranks, counts.given)) {
      throw UsageError("--counts: " + *error);
    }
  }
  if (o.bench.segment != "auto" && parse_option("--segment", o.bench.segment, parse_size) == 0) {
    throw UsageError("--segment must be at least 1 byte, or auto");
  }
  if (o.bench.root < 0 || o.bench.root >= o.ranks) {
    throw UsageError(
        fmt::format("--root {} is out of range: must be 0..{}", o.bench.root, o.ranks - 1));
  }
  if (o.bench.p2p && o.ranks < 2) throw UsageError("--p2p needs -n 2 or more");
  if (o.timeout_s <= 0) throw UsageError("--timeout must be a number of seconds > 0");
}

// One job; returns its results (throws when the job failed).
nlohmann::json run_job(const BenchCli& o,
                       const std::vector<std::pair<std::string, std::string>>& env) {
  ResultFile results;
  BenchOptions bench = o.bench;
  bench.result_file = results.path.string();
  runtime::LaunchSpec spec;
  spec.ranks = o.ranks;
  spec.command = {this_program().string(), "bench-rank"};
  for (auto& arg : bench.to_arguments()) spec.command.push_back(arg);
  spec.platform_file = o.platform;
  spec.timeout = std::chrono::milliseconds(static_cast<long long>(o.timeout_s * 1000));
  spec.explain = o.explain;
  spec.extra_environment = env;
  if (!o.tuning_file.empty()) spec.extra_environment.push_back(tuning_environment(o.tuning_file));
  std::optional<EmulatedJob> on_grid;
  if (!o.emulated_grid.empty()) on_grid.emplace(o.emulated_grid, spec);
  const runtime::LaunchResult result = runtime::launch_job(spec);
  if (result.exit_code != 0) {
    std::string text = "the benchmark job failed";
    for (const auto& failure : result.failures) text += "\n  " + failure;
    // A rank that failed exited with its error's status (multilane/errors.hpp).
    throw CommunicationError(kind_of_exit_status(result.exit_code), text);
  }
  return results.read();
}

bool all_checks_passed(const nlohmann::json& rows) {
  for (const auto& row : rows) {
    if (row.value("checked", false) && !row.value("check_ok", false)) return false;
  }
  return true;
}

int run_bench(const BenchCli& o) {
  validate(o);
  nlohmann::json rows;
  nlohmann::json doc;
  if (o.bench.p2p) {
    rows = nlohmann::json::array();
    for (std::uint64_t streams : parse_option("--streams", o.streams, parse_size_list)) {
      if (streams < 1 || streams > 256) {
        throw UsageError(fmt::format("--streams {} is out of range: must be 1..256", streams));
      }
      const std::string k = std::to_string(streams);
      rows.push_back(run_job(o, {{"MULTILANE_STREAMS_LAN", k}, {"MULTILANE_STREAMS_WAN", k}}));
    }
    doc = {{"kind", "p2p"}, {"results", rows}};
    fmt::print("{}", o.json ? doc.dump(2) + "\n" : p2p_table(rows));
  } else {
    doc = run_job(o, {});
    rows = doc["results"];
    fmt::print("{}", o.json ? doc.dump(2) + "\n" : collective_table(doc));
    if (!o.plot.empty()) {
      run_plot(doc.dump(), o.plot,
               fmt::format("{} on {} ranks (real runtime, {} platform)", o.bench.collective,
                           o.ranks, doc["platform"].get<std::string>()));
    }
  }
  if (!all_checks_passed(rows)) {
    fmt::print(stderr, "multilane bench: the --check verification FAILED (see above)\n");
    return 1;
  }
  return 0;
}

const bool bench_registered = register_command(
    {"bench",
     "Measure collectives (or point-to-point throughput, or ping-pong round trips) on the real "
     "runtime",
     [](CLI::App& sub) -> Runner {
       auto o = std::make_shared<BenchCli>();
       sub.add_option("-n,--ranks", o->ranks, "number of ranks to launch")
           ->check(CLI::Range(1, 4096))
           ->capture_default_str();
       sub.add_option("--platform", o->platform, "platform TOML file (default: one node per rank)");
       sub.add_option("--emu", o->emulated_grid,
                      "run the ranks on the emulated grid NAME (default platform: the grid's)");
       sub.add_option("--timeout", o->timeout_s, "seconds without progress before a rank gives up")
           ->capture_default_str();
       sub.add_flag("--json", o->json, "print JSON instead of a table");
       sub.add_flag("--explain", o->explain, "rank 0 explains each algorithm choice");
       sub.add_option("--tuning", o->tuning_file,
                      "shared-memory tuning file of `multilane tune shm` (MULTILANE_TUNING)");
       sub.add_option("--plot", o->plot, "draw time vs size per algorithm into this PNG");
       sub.add_option("--streams", o->streams, "--p2p: comma-separated stream counts, e.g. 1,2,4,8")
           ->capture_default_str();
       o->bench.add_to(sub);
       return [o] { return run_bench(*o); };
     }});

}  // namespace
}  // namespace multilane::cli
