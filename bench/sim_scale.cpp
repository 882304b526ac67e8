// bench/sim_scale.cpp — how the simulator scales: builds and simulates one broadcast on a
// generated one-site platform (one rank per node, two 1 Gbit/s lanes) and prints wall time of
// the build and of the simulation, peak memory, events and transfers per second.
//
//   sim_scale ALGORITHM RANKS SIZE SEGMENTS     e.g. sim_scale binomial 1048576 1MiB 1
//                                                    sim_scale multilane 65536 64MiB 64
#include <fmt/format.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdlib>
#include <string>

#include "multilane/algorithms.hpp"
#include "multilane/sim.hpp"
#include "multilane/units.hpp"

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
  const SimResult r = simulate(schedule, platform);
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const double build_s = std::chrono::duration<double>(t1 - t0).count();
  fmt::print(
      "{} bcast, {} ranks, {} in {} segment(s): {} ops\n"
      "  platform+build {:.2f} s, simulate {:.2f} s, peak RSS {:.0f} MiB\n"
      "  simulated time {}, {} transfers, {} events, {} rate updates, peak {} flows\n"
      "  {:.2f} M events/s, {:.2f} M transfers/s\n",
      algo, ranks, format_size(size), segments, schedule.num_ops(), build_s, r.wall_s,
      usage.ru_maxrss / 1024.0, format_duration(r.time_s), r.transfers, r.events, r.rate_updates,
      r.peak_flows, r.events / r.wall_s / 1e6, r.transfers / r.wall_s / 1e6);
  return 0;
}
