// bench/simgrid_peer.cpp — multilane's simulator side by side with SimGrid on the same schedules.
//
// For every algorithm and size, builds the schedule once, simulates it with multilane's
// simulate() and replays it in SimGrid (simgrid_replay.hpp; each SimGrid run in a child process,
// see simgrid_child.hpp), several times each, and prints a Markdown table: simulated time of both
// and their difference, and the time each takes to simulate (CPU and wall-clock, medians) with
// the speed-up.
//
//   simgrid_peer --platform examples/platforms/two-sites-16x2.toml
//                [--collective bcast] [--algorithms binomial,binary,...] [--sizes 64KiB,1MiB,16MiB]
//                [--segment 64KiB] [--root 0] [--runs 5] [--latency overlapped|per-message|both]
//                [--tcp-window SIZE] [--check MARGIN] [--timeout SECONDS]
//
// --tcp-window sets a TCP window on every WAN link of the platform (both simulators see it), so
// that the per-connection cap, and SimGrid's TCP-gamma, come into play. --check MARGIN exits with
// status 1 when SimGrid's (overlapped latency) completion time or any rank's differs from
// multilane's by more than MARGIN (a fraction of the completion time). Bad arguments exit with
// status 2 and say why.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <simgrid/s4u/Engine.hpp>  // before version.h, which needs the macros it brings

#include <simgrid/version.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "cli_options.hpp"  // tools/: parse_option
#include "multilane/algorithms.hpp"
#include "multilane/errors.hpp"
#include "multilane/platform_file.hpp"
#include "multilane/sim.hpp"
#include "multilane/units.hpp"
#include "simgrid_child.hpp"
#include "simgrid_platform.hpp"
#include "simgrid_replay.hpp"

namespace multilane::simgrid_peer {

namespace {

struct Options {
  std::string platform;
  std::string collective = "bcast";
  std::string algorithms = "binomial,binary,chain,multilane,multilane-sites,vandegeijn";
  std::string sizes = "64KiB,1MiB,16MiB";
  std::string segment = "64KiB";
  int root = 0;
  int runs = 5;
  std::string latency = "both";
  std::string tcp_window;
  double check = -1;  // negative: no check
  double timeout_s = 600;
};

// Simulated time (the same in every run: both simulators are deterministic) and the median
// wall-clock and CPU times to simulate.
struct Measured {
  double time_s = 0;
  std::vector<double> rank_finish_s;
  double wall_s = 0;
  double cpu_s = 0;
  double setup_s = 0;  // SimGrid: wall time to build its platform and the replay, not counted
};

// Largest difference of b from a, relative to a's completion time, over the completion time and
// every rank's.
double relative_difference(const Measured& a, const Measured& b) {
  double worst = std::abs(b.time_s - a.time_s);
  for (std::size_t r = 0; r < a.rank_finish_s.size() && r < b.rank_finish_s.size(); ++r) {
    worst = std::max(worst, std::abs(b.rank_finish_s[r] - a.rank_finish_s[r]));
  }
  return a.time_s > 0 ? worst / a.time_s : worst;
}

// One algorithm at one size.
struct Row {
  std::string algorithm;
  std::uint64_t size = 0;
  std::uint64_t transfers = 0;
  Measured ours;
  std::optional<Measured> simgrid;          // overlapped latency
  std::optional<Measured> simgrid_per_msg;  // per-message latency

  // SimGrid at its best: the latency mode that took less CPU time.
  const Measured& fastest_simgrid() const {
    if (!simgrid) return *simgrid_per_msg;
    if (!simgrid_per_msg) return *simgrid;
    return simgrid->cpu_s <= simgrid_per_msg->cpu_s ? *simgrid : *simgrid_per_msg;
  }
};

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::vector<LatencyMode> parse_modes(const std::string& text) {
  if (text == "overlapped") return {LatencyMode::Overlapped};
  if (text == "per-message") return {LatencyMode::PerMessage};
  if (text == "both") return {LatencyMode::Overlapped, LatencyMode::PerMessage};
  throw UsageError(
      fmt::format("--latency: \"{}\" is not one of overlapped, per-message, both", text));
}

double process_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

Measured measure_ours(const Schedule& schedule, const Platform& platform, int runs,
                      std::uint64_t& transfers) {
  std::vector<double> walls, cpus;
  Measured m;
  for (int i = 0; i < runs; ++i) {
    const double cpu_start = process_cpu_s();
    const auto wall_start = std::chrono::steady_clock::now();
    const SimResult r = simulate(schedule, platform);
    walls.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count());
    cpus.push_back(process_cpu_s() - cpu_start);
    if (i > 0 && r.time_s != m.time_s) {
      throw std::runtime_error(fmt::format(
          "multilane's simulator is not deterministic: {} then {} s", m.time_s, r.time_s));
    }
    m.time_s = r.time_s;
    m.rank_finish_s = r.rank_finish_s;
    transfers = r.transfers;
  }
  m.wall_s = median(walls);
  m.cpu_s = median(cpus);
  return m;
}

Measured measure_simgrid(const Schedule& schedule, const Platform& platform, LatencyMode mode,
                         const Options& o) {
  std::vector<double> walls, cpus, setups;
  Measured m;
  for (int i = 0; i < o.runs; ++i) {
    const ChildOutcome outcome = run_in_child(
        [&] { return encode_result(replay_in_simgrid(schedule, platform, mode)); }, o.timeout_s);
    if (outcome.status == ChildOutcome::Status::UsageError) throw UsageError(outcome.text);
    if (outcome.status != ChildOutcome::Status::Ok) {
      throw std::runtime_error(fmt::format("{} {} bytes, SimGrid ({} latency): {}",
                                           schedule.algorithm, schedule.size, to_string(mode),
                                           outcome.text));
    }
    const ReplayResult r = decode_result(outcome.text);
    if (i > 0 && r.time_s != m.time_s) {
      throw std::runtime_error(
          fmt::format("SimGrid is not deterministic: {} then {} s", m.time_s, r.time_s));
    }
    m.time_s = r.time_s;
    m.rank_finish_s = r.rank_finish_s;
    walls.push_back(r.run_s);
    cpus.push_back(r.run_cpu_s);
    setups.push_back(r.setup_s);
  }
  m.wall_s = median(walls);
  m.cpu_s = median(cpus);
  m.setup_s = median(setups);
  return m;
}

std::string percent(double ratio) {
  return fmt::format("{:+.2f}%", (ratio - 1) * 100);
}

void print_header(const Options& o, const Platform& platform, const std::vector<LatencyMode>& modes,
                  std::uint64_t segment) {
  int major = 0, minor = 0, patch = 0;
  sg_version_get(&major, &minor, &patch);
  const SimGridSettings settings = simgrid_settings(platform);
  std::string cfg;
  for (const auto& c : settings.config) cfg += " --cfg=" + c;
  fmt::print("multilane simulate() vs SimGrid {}.{}.{} (S4U activities)\n", major, minor, patch);
  fmt::print(
      "platform {} ({}): {} sites, {} nodes, {} ranks{}\n", platform.name, o.platform,
      platform.num_sites(), platform.nodes.size(), platform.num_ranks(),
      o.tcp_window.empty() ? "" : fmt::format("; TCP window {} on every WAN link", o.tcp_window));
  fmt::print("{} from rank {}, segment {}; medians of {} run(s)\n", o.collective, o.root,
             format_size(segment), o.runs);
  fmt::print("SimGrid:{}", cfg);
  for (LatencyMode m : modes) {
    fmt::print("{}",
               m == LatencyMode::Overlapped
                   ? "; overlapped: latency factor 0 for data, a 0-byte comm carries the latency"
                   : "; per-message: CM02 as is (latency, then bytes, per message)");
  }
  fmt::print("\n");
  for (const auto& c : settings.caveats) fmt::print("caveat: {}\n", c);
  fmt::print(
      "time to simulate: the whole simulate() call vs SimGrid's Engine::run alone (not its "
      "platform), of the latency mode that took less CPU; cpu = CPU time of the process, wall = "
      "elapsed (the machine is shared)\n\n");
}

void print_table_head(const std::vector<LatencyMode>& modes) {
  std::string head = "| algorithm | size | transfers | multilane | ";
  std::string rule = "|---|---|---:|---:|";
  for (LatencyMode m : modes) {
    head += m == LatencyMode::Overlapped ? "SimGrid | diff | " : "SimGrid per-message | ";
    rule += m == LatencyMode::Overlapped ? "---:|---:|" : "---:|";
  }
  head += "multilane cpu | SimGrid cpu | speed-up cpu | speed-up wall |";
  rule += "---:|---:|---:|---:|";
  fmt::print("{}\n{}\n", head, rule);
}

void print_row(const Row& r) {
  std::string line = fmt::format("| {} | {} | {} | {} | ", r.algorithm, format_size(r.size),
                                 r.transfers, format_duration(r.ours.time_s));
  if (r.simgrid) {
    line += fmt::format("{} | {} | ", format_duration(r.simgrid->time_s),
                        percent(r.simgrid->time_s / r.ours.time_s));
  }
  if (r.simgrid_per_msg) line += fmt::format("{} | ", format_duration(r.simgrid_per_msg->time_s));
  const Measured& sg = r.fastest_simgrid();
  line +=
      fmt::format("{} | {} | {:.0f}x | {:.0f}x |", format_duration(r.ours.cpu_s),
                  format_duration(sg.cpu_s), sg.cpu_s / r.ours.cpu_s, sg.wall_s / r.ours.wall_s);
  fmt::print("{}\n", line);
  std::fflush(stdout);
}

Row measure_row(const Platform& platform, const Options& o, Collective collective,
                const std::string& algorithm, std::uint64_t size, std::uint64_t segment,
                const std::vector<LatencyMode>& modes) {
  BuildParams params;
  params.root = o.root;
  params.size = size;
  params.segment = segment;
  const Schedule schedule = build_schedule(platform, collective, algorithm, params);
  Row row;
  row.algorithm = algorithm;
  row.size = size;
  row.ours = measure_ours(schedule, platform, o.runs, row.transfers);
  for (LatencyMode mode : modes) {
    (mode == LatencyMode::Overlapped ? row.simgrid : row.simgrid_per_msg) =
        measure_simgrid(schedule, platform, mode, o);
  }
  return row;
}

int run(const Options& o) {
  if (o.runs < 1 || o.runs > 1000) {
    throw UsageError(fmt::format("--runs must be between 1 and 1000, got {}", o.runs));
  }
  if (!(o.timeout_s > 0))
    throw UsageError(fmt::format("--timeout must be positive, got {}", o.timeout_s));
  const std::vector<LatencyMode> modes = parse_modes(o.latency);
  if (o.check >= 0 && modes.front() != LatencyMode::Overlapped) {
    throw UsageError("--check compares overlapped latency: use --latency overlapped or both");
  }
  const auto collective = parse_collective(o.collective);
  if (!collective) {
    throw UsageError(fmt::format("--collective: unknown collective \"{}\"", o.collective));
  }
  Platform platform = load_platform_file(o.platform);
  if (!o.tcp_window.empty()) {
    const std::uint64_t window = cli::parse_option("--tcp-window", o.tcp_window, parse_size);
    if (window == 0) throw UsageError("--tcp-window must be positive");
    for (auto& link : platform.wan_links) link.tcp_window_bytes = double(window);
  }
  const std::uint64_t segment = cli::parse_option("--segment", o.segment, parse_size);
  const std::vector<std::uint64_t> sizes = cli::parse_option("--sizes", o.sizes, parse_size_list);
  const std::vector<std::string> algorithms = split_list(o.algorithms);
  if (algorithms.empty() || sizes.empty())
    throw UsageError("--algorithms and --sizes must not be empty");

  print_header(o, platform, modes, segment);
  print_table_head(modes);
  double worst = 0;
  std::string worst_row;
  double setup = 0;
  for (const auto& algorithm : algorithms) {
    for (std::uint64_t size : sizes) {
      const Row row = measure_row(platform, o, *collective, algorithm, size, segment, modes);
      print_row(row);
      setup = std::max(setup, row.fastest_simgrid().setup_s);
      const double difference = row.simgrid ? relative_difference(row.ours, *row.simgrid) : 0;
      if (row.simgrid && difference >= worst) {
        worst = difference;
        worst_row = fmt::format("{} {}", algorithm, format_size(size));
      }
    }
  }
  if (modes.front() == LatencyMode::Overlapped) {
    fmt::print(
        "\nlargest difference of SimGrid (overlapped latency), completion time or any rank's, "
        "relative to the completion time: {:.2g}% ({})\n",
        worst * 100, worst_row);
  }
  fmt::print(
      "SimGrid setup, not counted above (platform: one Full zone, every route declared): "
      "up to {} wall per run\n",
      format_duration(setup));
  if (o.check >= 0 && worst > o.check) {
    fmt::print(stderr,
               "simgrid_peer: check failed: {} differs by {:.2g}% of its completion time, more "
               "than {:.2g}%\n",
               worst_row, worst * 100, o.check * 100);
    return 1;
  }
  return 0;
}

}  // namespace

}  // namespace multilane::simgrid_peer

int main(int argc, char** argv) {
  using namespace multilane;
  simgrid_peer::Options o;
  CLI::App app{"simgrid_peer — multilane's simulator and SimGrid on the same schedules"};
  app.add_option("--platform", o.platform, "platform TOML file")->required();
  app.add_option("--collective", o.collective, "collective")->capture_default_str();
  app.add_option("--algorithms", o.algorithms, "comma-separated algorithms")->capture_default_str();
  app.add_option("--sizes", o.sizes, "comma-separated message sizes")->capture_default_str();
  app.add_option("--segment", o.segment, "segment size of pipelined algorithms")
      ->capture_default_str();
  app.add_option("--root", o.root, "root rank")->capture_default_str();
  app.add_option("--runs", o.runs, "runs of each simulator per case (medians)")
      ->capture_default_str();
  app.add_option("--latency", o.latency, "SimGrid latency: overlapped, per-message or both")
      ->capture_default_str();
  app.add_option("--tcp-window", o.tcp_window, "TCP window set on every WAN link (e.g. 1MiB)");
  app.add_option("--check", o.check,
                 "fail (exit 1) when SimGrid's simulated time differs by more than this fraction");
  app.add_option("--timeout", o.timeout_s, "seconds one SimGrid run may take")
      ->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int status = app.exit(e);
    return status == 0 ? 0 : 2;
  }
  try {
    return simgrid_peer::run(o);
  } catch (const UsageError& e) {
    fmt::print(stderr, "simgrid_peer: {}\n", e.what());
    return 2;
  } catch (const PlatformError& e) {
    fmt::print(stderr, "{}\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "simgrid_peer: error: {}\n", e.what());
    return 1;
  }
}
