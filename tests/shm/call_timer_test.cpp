// The tuner's measurement (runtime/shm/call_timer.hpp) in real processes: every call it makes
// stays in the geometry under test, so no timed call pays for a change of geometry, and every
// rank gets the same time.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <stdexcept>

#include <unistd.h>

#include "runtime/shm/call_timer.hpp"
#include "runtime/shm/segment_name.hpp"
#include "shm/fork_ranks.hpp"

namespace multilane::runtime::shm {
namespace {

using testing::describe;
using testing::run_ranks;
using testing::unique_job_id;

ShmOptions roomy() {
  ShmOptions options;
  options.timeout = std::chrono::seconds(5);
  options.capacity = 1 << 20;
  return options;
}

// A measurement of another geometry than the group's changes geometry once (its warm-up), not
// once per repetition; measuring the default geometry after it changes back once more.
TEST(CallTimer, ChangesGeometryOnlyInItsWarmUp) {
  for (const Collective c : {Collective::Bcast, Collective::Scatter, Collective::Gather,
                             Collective::Allgather, Collective::Alltoall}) {
    const std::uint64_t job = unique_job_id();
    const auto outcomes = run_ranks(3, [&](int rank) {
      ShmGroup group(job, 0, rank, 3, roomy());
      CallTimer timer(group, {.iterations = 2, .repetitions = 7});
      timer.seconds_per_call(c, 1000, ShmTuning{});
      const std::uint64_t before = group.geometry_epochs();
      timer.seconds_per_call(c, 1000, ShmTuning{4096, 4, CopyMode::Twice});
      if (group.geometry_epochs() != before + 1) {
        throw std::runtime_error(fmt::format("{} geometry changes measuring another geometry",
                                             group.geometry_epochs() - before));
      }
      timer.seconds_per_call(c, 1000, ShmTuning{});
      if (group.geometry_epochs() != before + 2) {
        throw std::runtime_error(fmt::format("{} geometry changes measuring both geometries",
                                             group.geometry_epochs() - before));
      }
    });
    for (const auto& o : outcomes)
      ASSERT_TRUE(o.ok()) << to_string(c) << ": " << describe(outcomes);
    EXPECT_TRUE(list_segments(job).empty());
  }
}

// Every rank returns the slowest rank's time, so every rank makes the same choices from it:
// the two ranks' own times differ, the returned ones are equal to the bit.
TEST(CallTimer, EveryRankGetsTheSlowestRanksTime) {
  const std::uint64_t job = unique_job_id();
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  const auto outcomes = run_ranks(2, [&](int rank) {
    ShmGroup group(job, 0, rank, 2, roomy());
    CallTimer timer(group, {.iterations = 1, .repetitions = 3});
    const double seconds = timer.seconds_per_call(Collective::Bcast, 64, ShmTuning{});
    if (write(pipe_fds[1], &seconds, sizeof seconds) != sizeof seconds) {
      throw std::runtime_error("pipe");
    }
  });
  ASSERT_TRUE(outcomes[0].ok() && outcomes[1].ok()) << describe(outcomes);
  double times[2] = {};
  ASSERT_EQ(read(pipe_fds[0], &times[0], sizeof(double)), static_cast<ssize_t>(sizeof(double)));
  ASSERT_EQ(read(pipe_fds[0], &times[1], sizeof(double)), static_cast<ssize_t>(sizeof(double)));
  close(pipe_fds[0]);
  close(pipe_fds[1]);
  EXPECT_EQ(times[0], times[1]);
  EXPECT_GT(times[0], 0);
  EXPECT_TRUE(list_segments(job).empty());
}

}  // namespace
}  // namespace multilane::runtime::shm
