// bench/sim_scale.cpp — how the simulator scales: builds and simulates one broadcast on a
// generated one-site platform (one rank per node, two 1 Gbit/s lanes) and prints wall and CPU
// time of the build and of the simulation, memory, events and transfers per second.
//
//   sim_scale ALGORITHM RANKS SIZE SEGMENTS     e.g. sim_scale binomial 1048576 1MiB 1
//                                                    sim_scale multilane 65536 64MiB 64
//
// The machine this runs on is shared, so besides wall time the harness reports the CPU time of
// the simulation (user + system), which other processes disturb much less; rates are given for
// both. Memory: resident size after the build and the peak over the whole run, so the
// simulator's own share is their difference.
#include <fmt/format.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "multilane/algorithms.hpp"
#include "multilane/sim.hpp"
#include "multilane/units.hpp"

namespace {

double cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) { return double(t.tv_sec) + double(t.tv_usec) * 1e-6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

long minor_faults() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

double peak_rss_mib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return double(usage.ru_maxrss) / 1024.0;
}

// Current resident size (Linux /proc/self/statm: size and resident, in pages).
double rss_mib() {
  long pages_size = 0, pages_resident = 0;
  if (std::FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld %ld", &pages_size, &pages_resident) != 2) pages_resident = 0;
    std::fclose(f);
  }
  return double(pages_resident) * 4096.0 / (1024.0 * 1024.0);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace multilane;
  if (argc != 5) {
    fmt::print(stderr, "usage: sim_scale ALGORITHM RANKS SIZE SEGMENTS\n");
    return 2;
  }
  const std::string algo = argv[1];
  const int ranks = std::atoi(argv[2]);
  const std::uint64_t size = parse_size(argv[3]);
  const std::uint64_t segments = std::strtoull(argv[4], nullptr, 10);
  const auto t0 = std::chrono::steady_clock::now();
  const Platform platform = make_uniform_platform(1, ranks, 2, 1, 125e6, 50e-6, 0, 0, 0);
  BuildParams params;
  params.size = size;
  params.segment = std::max<std::uint64_t>(1, size / std::max<std::uint64_t>(segments, 1));
  const Schedule schedule = build_schedule(platform, Collective::Bcast, algo, params);
  const auto t1 = std::chrono::steady_clock::now();
  const double rss_built = rss_mib();
  const double cpu0 = cpu_seconds();
  const long faults0 = minor_faults();
  const SimResult r = simulate(schedule, platform);
  const double cpu_s = cpu_seconds() - cpu0;
  const long faults = minor_faults() - faults0;
  const double build_s = std::chrono::duration<double>(t1 - t0).count();
  fmt::print(
      "{} bcast, {} ranks, {} in {} segment(s): {} ops\n"
      "  platform+build {:.2f} s, simulate {:.2f} s wall, {:.2f} s CPU\n"
      "  RSS after build {:.0f} MiB, peak RSS {:.0f} MiB, {} page faults in simulate\n"
      "  simulated time {}, {} transfers, {} events, {} rate updates, peak {} flows\n"
      "  wall: {:.2f} M events/s, {:.2f} M transfers/s; CPU: {:.2f} M events/s, {:.2f} M "
      "transfers/s\n",
      algo, ranks, format_size(size), segments, schedule.num_ops(), build_s, r.wall_s, cpu_s,
      rss_built, peak_rss_mib(), faults, format_duration(r.time_s), r.transfers, r.events,
      r.rate_updates, r.peak_flows, r.events / r.wall_s / 1e6, r.transfers / r.wall_s / 1e6,
      r.events / cpu_s / 1e6, r.transfers / cpu_s / 1e6);
  return 0;
}
