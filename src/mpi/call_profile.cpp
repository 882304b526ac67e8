// mpi/call_profile.cpp — MULTILANE_PROFILE's sums and report (call_profile.hpp).
#include "mpi/call_profile.hpp"

#include <fmt/format.h>

#include <array>
#include <cstdio>
#include <mutex>
#include <string>

namespace multilane::mpi {

namespace {

// Per kind of call, blocking then nonblocking: [calls, seconds].
constexpr std::size_t kKinds = 2 * kWrappedCalls;
// Threads of an MPI_THREAD_MULTIPLE program add to them at once.
std::mutex sums_mutex;
std::array<double, 2 * kKinds> sums{};
std::chrono::steady_clock::time_point program_start;

std::size_t kind_of(WrappedCall call, bool nonblocking) {
  return static_cast<std::size_t>(call) + (nonblocking ? kWrappedCalls : 0);
}

}  // namespace

void start_profile() {
  program_start = std::chrono::steady_clock::now();
}

void add_to_profile(WrappedCall call, bool nonblocking, std::chrono::steady_clock::duration time) {
  const std::size_t kind = kind_of(call, nonblocking);
  const std::lock_guard lock(sums_mutex);
  sums[2 * kind] += 1;
  sums[2 * kind + 1] += std::chrono::duration<double>(time).count();
}

void report_profile() {
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - program_start).count();
  std::array<double, 2 * kKinds + 1> mine{};
  {
    const std::lock_guard lock(sums_mutex);
    std::copy(sums.begin(), sums.end(), mine.begin());
  }
  mine.back() = elapsed;
  std::array<double, 2 * kKinds + 1> total{};
  int rank = 0;
  int ranks = 1;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &ranks);
  if (PMPI_Reduce(mine.data(), total.data(), static_cast<int>(total.size()), MPI_DOUBLE, MPI_SUM, 0,
                  MPI_COMM_WORLD) != MPI_SUCCESS ||
      rank != 0) {
    return;
  }
  std::string calls;
  double collectives = 0;
  for (std::size_t kind = 0; kind < kKinds; ++kind) {
    if (total[2 * kind] == 0) continue;
    const auto call = static_cast<WrappedCall>(kind % kWrappedCalls);
    const double seconds = total[2 * kind + 1] / ranks;
    collectives += seconds;
    calls += fmt::format("{} {:.0f} calls {:.3g} s; ", call_function(call, kind >= kWrappedCalls),
                         total[2 * kind] / ranks, seconds);
  }
  const double per_rank = total.back() / ranks;
  std::fprintf(stderr,
               "multilane-mpi: profile over %d ranks, per rank: %scollectives %.3g s of %.3g s "
               "since MPI_Init (%.1f%%)\n",
               ranks, calls.c_str(), collectives, per_rank,
               per_rank > 0 ? 100 * collectives / per_rank : 0.0);
}

}  // namespace multilane::mpi
