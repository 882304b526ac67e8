// ShmGroup across real processes (fork): every collective, 2..8 ranks, sizes around every
// switch point, exact bytes; the segment's name is gone once the group is up, and nothing is
// left in /dev/shm afterwards.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "multilane/errors.hpp"
#include "runtime/shm/shm_group.hpp"
#include "runtime/shm/topology.hpp"
#include "shm/collective_data.hpp"
#include "shm/fork_ranks.hpp"
#include "shm/group_steps.hpp"

namespace multilane::runtime::shm {
namespace {

using testing::describe;
using testing::run_and_check;
using testing::run_ranks;
using testing::unique_job_id;

ShmOptions small_buffers() {
  ShmOptions options;
  options.tuning = {256, 3};  // small, so few bytes already cross every switch point
  options.capacity = 64 * 1024;
  options.timeout = std::chrono::seconds(5);
  return options;
}

// small_buffers(), copying once from `size` bytes on (0: never).
ShmOptions small_buffers_once_from(std::uint64_t size) {
  ShmOptions options = small_buffers();
  options.single_copy = SingleCopyLimits::from_size(size);
  return options;
}

// Sizes around the switch points of p ranks with a buffer of b bytes.
std::vector<std::uint64_t> sizes_around(int p, std::uint64_t b) {
  const auto up = static_cast<std::uint64_t>(p);
  return {0, 1, 13, b / up / up + 1, b / up, b / up + 1, b - 1, b + 1, 3 * b + 5};
}

void expect_ok(const std::vector<testing::RankOutcome>& outcomes) {
  for (const auto& outcome : outcomes) EXPECT_TRUE(outcome.ok()) << describe(outcomes);
}

class ShmGroupCollective : public ::testing::TestWithParam<Collective> {};

TEST_P(ShmGroupCollective, ExactBytesFromTwoToEightRanks) {
  const Collective collective = GetParam();
  for (int p = 2; p <= 8; ++p) {
    const std::uint64_t job = unique_job_id();
    const auto outcomes = run_ranks(p, [&](int rank) {
      ShmGroup group(job, 0, rank, p, small_buffers());
      std::uint32_t seed = 0;
      for (const std::uint64_t size : sizes_around(p, 256)) {
        for (const int root : {0, p - 1}) {
          const std::string problem = run_and_check(group, collective, root, size, ++seed);
          if (!problem.empty()) throw std::runtime_error(problem);
        }
      }
      // Past the default buffer too, and with a per-call tuning of another geometry.
      for (const auto& tuning : {ShmTuning{1024, 2}, ShmTuning{4096, 8}}) {
        const std::string problem =
            run_and_check(group, collective, p / 2, 20'000 + 3, ++seed, tuning);
        if (!problem.empty()) throw std::runtime_error(problem);
      }
    });
    expect_ok(outcomes);
    EXPECT_TRUE(list_segments(job).empty()) << p << " ranks";
  }
}

INSTANTIATE_TEST_SUITE_P(All, ShmGroupCollective, ::testing::ValuesIn(kGroupCollectives),
                         [](const auto& info) { return std::string(to_string(info.param)); });

TEST(ShmGroup, DefaultTuningAroundOneMebibyte) {
  const std::uint64_t job = unique_job_id();
  const auto outcomes = run_ranks(3, [&](int rank) {
    ShmOptions options;
    options.timeout = std::chrono::seconds(5);
    ShmGroup group(job, 0, rank, 3, options);
    std::uint32_t seed = 100;
    for (const Collective c : kGroupCollectives) {
      const std::uint64_t size = c == Collective::Bcast ? (1u << 20) + 1 : (1u << 18) - 3;
      const std::string problem = run_and_check(group, c, 1, size, ++seed);
      if (!problem.empty()) throw std::runtime_error(problem);
    }
  });
  expect_ok(outcomes);
  EXPECT_TRUE(list_segments(job).empty());
}

// Single copy (one copy straight between the ranks' buffers) and the paper's two copies through
// the shared buffers give the same bytes, for every collective, either way round in one group.
TEST(ShmGroup, SingleCopyAndTwoCopiesAgree) {
  for (const std::uint64_t from : {std::uint64_t{1}, std::uint64_t{0}}) {
    const std::uint64_t job = unique_job_id();
    const auto outcomes = run_ranks(4, [&](int rank) {
      // 1: every call with bytes; 0: never.
      ShmGroup group(job, 0, rank, 4, small_buffers_once_from(from));
      std::uint32_t seed = 300;
      for (const Collective c : kGroupCollectives) {
        for (const std::uint64_t size : {1ull, 1000ull, 65537ull}) {
          const std::string problem = run_and_check(group, c, 3, size, ++seed);
          if (!problem.empty()) throw std::runtime_error(problem);
        }
      }
    });
    expect_ok(outcomes);
  }
}

// Roots learn their share of single-copy bcast, scatter and gather as the calls run
// (root_share.hpp): whatever each root publishes, every rank takes the same share for every
// call (else the fingerprints differ and the call fails) and every byte arrives.
TEST(ShmGroup, LearnedRootSharesKeepEveryByte) {
  const std::uint64_t job = unique_job_id();
  const auto outcomes = run_ranks(3, [&](int rank) {
    ShmGroup group(job, 0, rank, 3, small_buffers_once_from(1024));
    std::uint32_t seed = 900;
    for (int i = 0; i < 40; ++i) {
      for (const Collective c : {Collective::Bcast, Collective::Scatter, Collective::Gather}) {
        const std::string problem = run_and_check(group, c, i % 3, 20001, ++seed);
        if (!problem.empty()) throw std::runtime_error(problem);
      }
    }
    const std::optional<double> share = group.root_share(Collective::Gather, 20001, 1);
    if (!share || *share < 0 || *share > 0.75) throw std::runtime_error("gather: no share");
    if (group.root_share(Collective::Alltoall, 20001, 1)) {
      throw std::runtime_error("alltoall has a root's share");
    }
  });
  expect_ok(outcomes);
}

// The default limits: one copy from 8 KiB with a rank per hardware thread; with more ranks,
// from 64 KiB, bcast from 1 MiB and gather from 32 KiB (shm_group.hpp says why).
TEST(ShmGroup, DefaultSingleCopyLimitsFollowTheRanksPerHardwareThread) {
  EXPECT_EQ(default_single_copy(1), SingleCopyLimits::from_size(8 << 10));
  const SingleCopyLimits crowded = default_single_copy(1 << 20);  // more than any machine has
  EXPECT_EQ(crowded.from, 64u << 10);
  EXPECT_EQ(crowded.bcast_from, 1u << 20);
  EXPECT_EQ(crowded.gather_from, 32u << 10);
  // A group uses them: a gather of 32 KiB copies once where a scatter of 32 KiB does not.
  const std::uint64_t job = unique_job_id();
  const int ranks = static_cast<int>(machine_topology().hardware_threads) + 1;
  const auto outcomes = run_ranks(ranks, [&](int rank) {
    ShmGroup group(job, 0, rank, ranks, small_buffers());
    if (!group.single_copy_allowed()) return;
    const ShmTuning tuning = small_buffers().tuning;
    if (!group.copies_once(Collective::Gather, 32 << 10, tuning) ||
        group.copies_once(Collective::Scatter, 32 << 10, tuning) ||
        group.copies_once(Collective::Gather, 16 << 10, tuning)) {
      throw std::runtime_error("not the oversubscribed limits");
    }
  });
  expect_ok(outcomes);
}

// A call's CopyMode overrides the group's single-copy limits both ways (the tuner measures
// each size both ways, tune.hpp), and calls of either kind, in any order, keep every byte right.
TEST(ShmGroup, CopyModeOfACallOverridesTheLimits) {
  const std::uint64_t job = unique_job_id();
  const auto outcomes = run_ranks(3, [&](int rank) {
    const ShmOptions options = small_buffers_once_from(4096);
    ShmGroup group(job, 0, rank, 3, options);
    ShmTuning once = options.tuning, twice = options.tuning;
    once.copies = CopyMode::Once;
    twice.copies = CopyMode::Twice;
    const bool kernel_allows = group.single_copy_allowed();
    const auto expect = [](bool ok, const std::string& what) {
      if (!ok) throw std::runtime_error(what);
    };
    for (const Collective c : kGroupCollectives) {
      const std::string name(to_string(c));
      expect(!group.copies_once(c, 100, options.tuning), name + ": 100 B copies once by default");
      expect(group.copies_once(c, 100, once) == kernel_allows, name + ": 100 B, once");
      expect(group.copies_once(c, 8192, options.tuning) == kernel_allows, name + ": 8 KiB");
      expect(!group.copies_once(c, 8192, twice), name + ": 8 KiB, twice copies once");
      expect(!group.copies_once(c, 0, once), name + ": 0 B copies once");
      std::uint32_t seed = 400;
      for (const std::uint64_t size : {1ull, 100ull, 8192ull, 65537ull}) {
        for (const ShmTuning& tuning : {once, twice, options.tuning}) {
          const std::string problem = run_and_check(group, c, 2, size, ++seed, tuning);
          if (!problem.empty()) throw std::runtime_error(problem);
        }
      }
    }
  });
  expect_ok(outcomes);
  EXPECT_TRUE(list_segments(job).empty());
}

// Alltoall, allgather, bcast and scatter learn their copy path (copy_chooser.hpp), the rooted
// ones at their roots. With a learner that switches at every chance, the ranks change paths
// call after call, between rooted calls that let ranks run ahead, and every byte must still be
// right.
TEST(ShmGroup, CallsThatLearnTheirPathSwitchAndKeepEveryByte) {
  const std::uint64_t job = unique_job_id();
  constexpr int kRounds = 30;
  const auto each_rank = [&](int rank) {
    ShmOptions options = small_buffers();
    options.copy_learning = {.samples = 1,
                             .first_period = 0,
                             .last_period = 0,
                             .margin = -1000};  // always switch, from the first call on
    ShmGroup group(job, 0, rank, 3, options);
    std::uint32_t seed = 500;
    std::uint64_t learned_calls = 0;
    const auto call = [&](Collective c, int root, std::uint64_t size) {
      const std::string problem = run_and_check(group, c, root, size, ++seed);
      if (!problem.empty()) throw std::runtime_error(problem);
    };
    for (int round = 0; round < kRounds; ++round) {
      call(Collective::Alltoall, 0, 5000);
      call(Collective::Bcast, 1, 3000);
      call(Collective::Allgather, 0, 20000);
      call(Collective::Scatter, 2, 100);
      call(Collective::Alltoall, 0, 5000);
      call(Collective::Bcast, 1, 6000);
      call(Collective::Bcast, 1, 6000);
      call(Collective::Scatter, 2, 9000);
      learned_calls += 6;
    }
    const std::uint64_t once = group.calls_copied_once();
    if (!group.single_copy_allowed()) {
      if (once != 0) throw std::runtime_error("copied once without the kernel's permission");
      return;
    }
    // 6 calls per round learn; about half of them copy once when the path keeps switching.
    if (once < learned_calls / 4 || once > learned_calls * 3 / 4) {
      throw std::runtime_error(
          fmt::format("{} of {} learned calls copied once", once, learned_calls));
    }
  };
  // 240 calls, each waiting for ranks that are off their core when other jobs share the cores:
  // up to about 12 s beside `stress-ng --cpu 2` on 2 cores. A hung wait throws after the
  // options' 5 s; the limit only ends a rank that never returns.
  const auto outcomes = run_ranks(3, each_rank, std::chrono::seconds(90));
  expect_ok(outcomes);
  EXPECT_TRUE(list_segments(job).empty());
}

// Calls that change the geometry from one call to the next, as `multilane tune shm` does: every
// result exact, tiny calls in the slot headers of both geometries' buffers.
TEST(ShmGroup, CallsThatChangeTheGeometryEveryCallKeepEveryByte) {
  const std::uint64_t job = unique_job_id();
  const auto outcomes = run_ranks(2, [&](int rank) {
    ShmOptions options;
    options.timeout = std::chrono::seconds(5);
    options.capacity = 2 << 20;
    ShmGroup group(job, 0, rank, 2, options);
    std::uint32_t seed = 900;
    const auto call = [&](Collective c, std::uint64_t size, std::optional<ShmTuning> tuning) {
      const std::string problem = run_and_check(group, c, 0, size, ++seed, tuning);
      if (!problem.empty()) throw std::runtime_error(problem);
    };
    for (int round = 0; round < 300; ++round) {
      const ShmTuning small{1024, 2 + round % 3};
      const ShmTuning wide{64 << 10, round % 2 == 0 ? 16 : 2};
      for (int i = 0; i < 5; ++i) call(Collective::Bcast, 1024, wide);
      call(Collective::Allgather, 8, {});
      call(Collective::Bcast, 1024, ShmTuning{4096, 2});  // one stage of a 2-buffer epoch ...
      call(Collective::Allgather, 8, {});  // ... whose wait has the number of rank 1's row
      group.barrier();
      call(Collective::Bcast, 8 << 10, small);
      call(Collective::Allgather, 8, {});
      call(Collective::Allgather, 512, small);
      group.barrier();
      call(Collective::Alltoall, 8, small);
      call(Collective::Allgather, 8, {});
    }
  });
  expect_ok(outcomes);
  EXPECT_TRUE(list_segments(job).empty());
}

// Explicit limits, or learning switched off, leave the path to the limits.
TEST(ShmGroup, ExplicitLimitsAreNotLearnedOver) {
  const std::uint64_t job = unique_job_id();
  const auto outcomes = run_ranks(2, [&](int rank) {
    ShmOptions options = small_buffers_once_from(0);  // never
    options.copy_learning = {.samples = 1, .first_period = 0, .last_period = 0, .margin = -1000};
    ShmGroup group(job, 0, rank, 2, options);
    for (int i = 0; i < 20; ++i) {
      const std::string problem = run_and_check(group, Collective::Alltoall, 0, 5000, 600 + i);
      if (!problem.empty()) throw std::runtime_error(problem);
    }
    if (group.calls_copied_once() != 0) throw std::runtime_error("learned over the limits");
  });
  expect_ok(outcomes);
}

TEST(ShmGroup, RefusesACopyLearningPaceOutsideItsRange) {
  ShmOptions options;
  options.copy_learning.samples = 0;
  try {
    ShmGroup group(unique_job_id(), 0, 0, 1, options);
    FAIL() << "no error";
  } catch (const UsageError& error) {
    EXPECT_STREQ(error.what(),
                 "shm group: copy learning: 0 samples, rests of 32..512 calls, a margin of 0.05 "
                 "and 64 calls before the first round are outside samples >= 1, 0 <= first rest "
                 "<= last rest, margin < 1, calls before the first round >= 0");
  }
}

TEST(ShmGroup, OneRankNeedsNobody) {
  const std::uint64_t job = unique_job_id();
  ShmGroup group(job, 3, 0, 1);
  EXPECT_TRUE(list_segments(job).empty());  // removed as soon as everyone (itself) attached
  for (const Collective c : kGroupCollectives) {
    EXPECT_EQ(run_and_check(group, c, 0, 1000, 1), "") << to_string(c);
  }
  group.barrier();
}

TEST(ShmGroup, NameIsGoneOnceEveryRankAttached) {
  const std::uint64_t job = unique_job_id();
  const auto outcomes = run_ranks(4, [&](int rank) {
    ShmGroup group(job, 7, rank, 4, small_buffers());
    // Every rank has mapped the segment: its name is gone, the memory still shared.
    if (!list_segments(job).empty()) throw std::runtime_error("segment name still present");
    if (group.segment_name().job_id != job || group.segment_name().node_id != 7) {
      throw std::runtime_error("wrong segment name " + group.segment_name().text());
    }
    group.barrier();
    const std::string problem = run_and_check(group, Collective::Allgather, 0, 100, 5);
    if (!problem.empty()) throw std::runtime_error(problem);
  });
  expect_ok(outcomes);
}

TEST(ShmGroup, InstancesOfOneJobAreSeparateGroups) {
  const std::uint64_t job = unique_job_id();
  const auto outcomes = run_ranks(4, [&](int rank) {
    // Ranks 0, 1 form instance 1, ranks 2, 3 instance 2; local ranks 0 and 1 in each.
    ShmOptions options = small_buffers();
    options.instance = 1 + static_cast<std::uint32_t>(rank / 2);
    ShmGroup group(job, 0, rank % 2, 2, options);
    const std::string problem = run_and_check(group, Collective::Bcast, 0, 1000, options.instance);
    if (!problem.empty()) throw std::runtime_error(problem);
  });
  expect_ok(outcomes);
  EXPECT_TRUE(list_segments(job).empty());
}

TEST(ShmGroup, RanksMayStartInAnyOrder) {
  const std::uint64_t job = unique_job_id();
  const auto outcomes = run_ranks(3, [&](int rank) {
    // The creator comes last: the others look for its segment until it appears.
    if (rank == 0) usleep(200'000);
    ShmGroup group(job, 0, rank, 3, small_buffers());
    const std::string problem = run_and_check(group, Collective::Gather, 0, 10, 1);
    if (!problem.empty()) throw std::runtime_error(problem);
  });
  expect_ok(outcomes);
  EXPECT_TRUE(list_segments(job).empty());
}

TEST(ShmGroup, APlanRunsStepByStepWithPolling) {
  // Each step polled with startable() until it can start, then performed: the plan's steps do
  // not rely on waiting inside the endpoint.
  const std::uint64_t job = unique_job_id();
  const auto outcomes = run_ranks(3, [&](int rank) {
    ShmGroup group(job, 0, rank, 3, small_buffers());
    auto buffers = testing::buffers_of(Collective::Scatter, rank, 3, 2, 500, 9);
    testing::run_polling(group, Collective::Scatter, buffers.send, buffers.recv, 2,
                         std::chrono::steady_clock::now() + std::chrono::seconds(5));
    const std::string problem =
        testing::check_result(Collective::Scatter, rank, 3, 2, 500, 9, buffers.recv);
    if (!problem.empty()) throw std::runtime_error(problem);
  });
  expect_ok(outcomes);
}

TEST(ShmGroup, BadArgumentsAreUsageErrors) {
  const std::uint64_t job = unique_job_id();
  EXPECT_THROW(ShmGroup(job, 0, 2, 2), UsageError);
  EXPECT_THROW(ShmGroup(job, -1, 0, 1), UsageError);
  ShmOptions options;
  options.tuning.pipeline_buffers = 65;
  try {
    ShmGroup(job, 0, 0, 1, options);
    ADD_FAILURE() << "65 pipeline buffers accepted";
  } catch (const UsageError& error) {
    EXPECT_STREQ(error.what(), "shm group: tuning: 65 pipeline buffers is outside 1..64");
  }
  ShmGroup group(job, 0, 0, 1, small_buffers());
  std::vector<std::byte> send(10), recv(20);
  try {
    group.scatter(send, recv, 0);
    ADD_FAILURE() << "a short send buffer accepted";
  } catch (const UsageError& error) {
    EXPECT_NE(std::string(error.what())
                  .find("scatter: the send buffer has 10 bytes but must "
                        "have 20 (1 local ranks, 20 bytes per block)"),
              std::string::npos)
        << error.what();
  }
  EXPECT_TRUE(list_segments(job).empty());
}

// prepare() remembers the last call's checked arguments; a call that repeats them must still
// be checked for what the memory says (overlap), and a call that changes them in full.
TEST(ShmGroup, RepeatedCallsAreStillChecked) {
  const std::uint64_t job = unique_job_id();
  const auto expect_usage_error = [](const std::function<void()>& call, const std::string& what) {
    try {
      call();
      ADD_FAILURE() << "no error, expected " << what;
    } catch (const UsageError& error) {
      EXPECT_TRUE(std::string(error.what()).ends_with(what)) << error.what();
    }
  };
  {
    ShmGroup group(job, 0, 0, 1, small_buffers());
    std::vector<std::byte> memory(16);
    const std::span<std::byte> whole(memory);
    group.alltoall(whole.first(8), whole.last(8));
    group.alltoall(whole.first(8), whole.last(8));
    expect_usage_error([&] { group.alltoall(whole.first(8), whole.subspan(4, 8)); },
                       "alltoall: the send and receive buffers overlap");
  }
  {
    ShmGroup group(job, 0, 0, 1, small_buffers());
    std::vector<std::byte> send(8), recv(8), longer(9);
    group.allgather(send, recv);
    expect_usage_error([&] { group.allgather(send, longer); },
                       "allgather: the recv buffer has 9 bytes but must have 8 (1 local ranks, 8 "
                       "bytes per block)");
  }
  {
    // Bcast works in place: its send buffer is ignored, also when it is the buffer itself.
    ShmGroup group(job, 0, 0, 1, small_buffers());
    std::vector<std::byte> buffer(64, std::byte{7});
    for (int i = 0; i < 3; ++i) group.run(Collective::Bcast, buffer, buffer, 0);
    EXPECT_EQ(buffer, std::vector<std::byte>(64, std::byte{7}));
  }
  EXPECT_TRUE(list_segments(job).empty());
}

}  // namespace
}  // namespace multilane::runtime::shm
