// Failures across processes: a rank killed with SIGKILL while it holds the segment (during
// setup, in the middle of a pipelined collective, between calls), ranks that disagree on the
// call, a rank that does not show up, bad arguments on one rank. The others must fail within
// the timeout with an error naming the rank, and no segment may be left behind.
#include <gtest/gtest.h>
#include <sys/types.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <string>
#include <thread>

#include "multilane/errors.hpp"
#include "runtime/shm/layout.hpp"
#include "runtime/shm/segment.hpp"
#include "runtime/shm/shm_error.hpp"
#include "runtime/shm/shm_group.hpp"
#include "shm/collective_data.hpp"
#include "shm/fork_ranks.hpp"
#include "shm/group_steps.hpp"

namespace multilane::runtime::shm {

namespace {

using Clock = std::chrono::steady_clock;
using testing::describe;
using testing::RankOutcome;
using testing::run_ranks;
using testing::unique_job_id;

constexpr auto kTimeout = std::chrono::seconds(3);

ShmOptions options_for_failures() {
  ShmOptions options;
  options.tuning = {4096, 4};
  options.timeout = kTimeout;
  options.check_interval = std::chrono::milliseconds(10);
  return options;
}

[[noreturn]] void die() {
  kill(getpid(), SIGKILL);
  std::abort();  // not reached
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Runs `fn` on `ranks` ranks; returns the outcomes and checks the time they took.
std::vector<RankOutcome> run_failing(int ranks, const std::function<void(int)>& fn,
                                     std::chrono::milliseconds at_most) {
  const auto start = Clock::now();
  auto outcomes = run_ranks(ranks, fn, std::chrono::seconds(15));
  const auto took = Clock::now() - start;
  EXPECT_LT(took, at_most) << describe(outcomes);
  return outcomes;
}

TEST(ShmFailure, RankKilledInThePipelineIsNamedByTheOthers) {
  const std::uint64_t job = unique_job_id();
  // Rank 2 runs half of a pipelined bcast, then dies holding the segment. Liveness checks
  // find it well before the 3 s timeout.
  const auto outcomes = run_failing(
      4,
      [&](int rank) {
        ShmGroup group(job, 0, rank, 4, options_for_failures());
        auto buffers = testing::buffers_of(Collective::Bcast, rank, 4, 0, 100'000, 1);
        if (rank == 2) {
          testing::first_half_of_bcast(group, buffers.recv, 0);
          die();
        }
        group.bcast(buffers.recv, 0);
        group.barrier();
      },
      std::chrono::milliseconds(2500));
  EXPECT_EQ(outcomes[2].signal, SIGKILL);
  for (const int r : {0, 1, 3}) {
    EXPECT_TRUE(outcomes[r].threw) << describe(outcomes);
    const std::string& message = outcomes[r].message;
    const bool named = contains(message, "local rank 2 (pid " + std::to_string(outcomes[2].pid) +
                                             ") died while this rank waited for") ||
                       contains(message, "died while this rank waited") ||
                       contains(message, ": local rank ");
    EXPECT_TRUE(named) << describe(outcomes);
    // Whoever saw the death first names rank 2; the others name that rank's report of it.
    EXPECT_TRUE(
        contains(message, "local rank 2 (pid " + std::to_string(outcomes[2].pid) + ") died"))
        << describe(outcomes);
  }
  EXPECT_TRUE(list_segments(job).empty());
}

TEST(ShmFailure, RankKilledBetweenCallsIsNamedAtTheNextWait) {
  const std::uint64_t job = unique_job_id();
  const auto outcomes = run_failing(
      3,
      [&](int rank) {
        ShmGroup group(job, 5, rank, 3, options_for_failures());
        for (int i = 0; i < 5; ++i) {
          if (rank == 1 && i == 3) die();
          std::vector<std::byte> word(8, std::byte{static_cast<unsigned char>(i)});
          group.bcast(word, 0);
          group.barrier();
        }
      },
      std::chrono::milliseconds(2500));
  EXPECT_EQ(outcomes[1].signal, SIGKILL);
  for (const int r : {0, 2}) {
    EXPECT_TRUE(outcomes[r].threw);
    EXPECT_TRUE(contains(outcomes[r].message, "shm group job "));
    EXPECT_TRUE(contains(outcomes[r].message,
                         "local rank 1 (pid " + std::to_string(outcomes[1].pid) + ") died"))
        << describe(outcomes);
  }
  EXPECT_TRUE(list_segments(job).empty());
}

TEST(ShmFailure, CreatorKilledDuringSetupLeavesNoSegment) {
  const std::uint64_t job = unique_job_id();
  // Rank 1 attaches and waits for rank 2, which instead kills the creator, rank 0.
  const auto outcomes = run_failing(
      3,
      [&](int rank) {
        if (rank == 2) {
          // Wait until rank 1 has registered in the segment, then kill the creator.
          for (int tries = 0; tries < 2000; ++tries) {
            const auto names = list_segments(job);
            if (!names.empty()) {
              const std::size_t bytes = segment_bytes(3, 4096 * 4);
              if (auto segment = ShmSegment::open(names[0], bytes)) {
                const SegmentView view = view_segment(segment->data(), 3, 4096 * 4);
                if (std::atomic_ref<std::int32_t>(view.ranks[1].pid).load() != 0) {
                  kill(names[0].creator, SIGKILL);
                  return;
                }
              }
            }
            usleep(1000);
          }
          throw std::runtime_error("rank 1 never attached");
        }
        ShmGroup group(job, 0, rank, 3, options_for_failures());
      },
      std::chrono::milliseconds(2500));
  EXPECT_EQ(outcomes[0].signal, SIGKILL) << describe(outcomes);
  EXPECT_TRUE(outcomes[2].ok()) << describe(outcomes);
  EXPECT_TRUE(outcomes[1].threw);
  EXPECT_TRUE(
      contains(outcomes[1].message, "local rank 0 (pid " + std::to_string(outcomes[0].pid) +
                                        ") died while this rank waited for every rank to attach to "
                                        "/multilane-"))
      << describe(outcomes);
  EXPECT_TRUE(list_segments(job).empty());
}

TEST(ShmFailure, MissingRankTimesOutNamingIt) {
  const std::uint64_t job = unique_job_id();
  ShmOptions options = options_for_failures();
  options.timeout = std::chrono::milliseconds(300);
  // Rank 2 stays alive but never joins.
  const auto outcomes = run_failing(
      3,
      [&](int rank) {
        if (rank == 2) {
          usleep(600'000);
          return;
        }
        ShmGroup group(job, 0, rank, 3, options);
      },
      std::chrono::milliseconds(2500));
  for (const int r : {0, 1}) {
    EXPECT_TRUE(outcomes[r].threw);
    EXPECT_TRUE(contains(outcomes[r].message,
                         "timed out after 0.3 s waiting for local ranks 2 "
                         "to attach to /multilane-") ||
                contains(outcomes[r].message,
                         "local rank 0 failed: timed out after 0.3 s "
                         "waiting for local ranks 2 to attach") ||
                contains(outcomes[r].message,
                         "local rank 1 failed: timed out after 0.3 s "
                         "waiting for local ranks 2 to attach"))
        << describe(outcomes);
  }
  EXPECT_TRUE(list_segments(job).empty());
}

TEST(ShmFailure, NoCreatorTimesOutNamingTheSegment) {
  const std::uint64_t job = unique_job_id();
  ShmOptions options = options_for_failures();
  options.timeout = std::chrono::milliseconds(100);
  try {
    ShmGroup group(job, 4, 1, 2, options);
    ADD_FAILURE() << "joined a group without a creator";
  } catch (const ShmError& error) {
    EXPECT_TRUE(contains(error.what(),
                         "local rank 1: timed out after 0.1 s waiting for local "
                         "rank 0 to create the segment /multilane-"))
        << error.what();
  }
}

TEST(ShmFailure, SlowRankTimesOutNamingWhereItIs) {
  const std::uint64_t job = unique_job_id();
  ShmOptions options = options_for_failures();
  options.timeout = std::chrono::milliseconds(300);
  const auto outcomes = run_failing(
      2,
      [&](int rank) {
        ShmGroup group(job, 0, rank, 2, options);
        if (rank == 1) usleep(800'000);  // alive, but late for the barrier
        group.barrier();
      },
      std::chrono::milliseconds(2500));
  EXPECT_TRUE(outcomes[0].threw);
  EXPECT_TRUE(contains(outcomes[0].message,
                       "local rank 0: timed out after 0.3 s waiting for the writers to fill "
                       "pipeline buffer 0 (stage 0) in call 1 (barrier); local rank 1 is in no "
                       "call yet"))
      << describe(outcomes);
  EXPECT_TRUE(outcomes[1].threw);
  EXPECT_TRUE(contains(outcomes[1].message, "local rank 1: local rank 0 failed: timed out"))
      << describe(outcomes);
}

TEST(ShmFailure, DisagreeingCallsNameBothCalls) {
  const std::uint64_t job = unique_job_id();
  const auto outcomes = run_failing(
      2,
      [&](int rank) {
        ShmGroup group(job, 0, rank, 2, options_for_failures());
        std::vector<std::byte> buffer(rank == 0 ? 100 : 200);
        group.bcast(buffer, 0);
        group.barrier();
      },
      std::chrono::milliseconds(2500));
  EXPECT_TRUE(outcomes[1].threw);
  // Rank 0 may still be in the bcast or already in the barrier when rank 1 looks.
  EXPECT_TRUE(contains(outcomes[1].message,
                       "local rank 1: collective calls differ at stage 0: this rank is in call 1 "
                       "(bcast of 200 B from root 0, 4 buffers of 4 KiB); local rank 0 is in "
                       "call "))
      << describe(outcomes);
  EXPECT_TRUE(outcomes[0].threw);
  EXPECT_TRUE(contains(outcomes[0].message,
                       "local rank 0: local rank 1 failed: collective calls "
                       "differ"))
      << describe(outcomes);
}

// Calls in a loop store only their serials (ShmEndpoint::enter_call); a rank that then changes
// its call is still caught, and named with its new call.
TEST(ShmFailure, DisagreeingCallAfterRepeatedCallsNamesBothCalls) {
  const std::uint64_t job = unique_job_id();
  const auto outcomes = run_failing(
      2,
      [&](int rank) {
        ShmGroup group(job, 0, rank, 2, options_for_failures());
        std::vector<std::byte> buffer(100);
        for (int i = 0; i < 5; ++i) group.bcast(buffer, 0);
        if (rank == 0) buffer.resize(200);
        group.bcast(buffer, 0);
        if (rank == 0) usleep(500'000);  // still in call 6 when rank 1 names it
        group.barrier();
      },
      std::chrono::milliseconds(2500));
  EXPECT_TRUE(outcomes[1].threw);
  EXPECT_TRUE(contains(outcomes[1].message,
                       "local rank 1: collective calls differ at stage 5: this rank is in call 6 "
                       "(bcast of 100 B from root 0, 4 buffers of 4 KiB); local rank 0 is in "
                       "call 6 (bcast of 200 B from root 0, 4 buffers of 4 KiB)"))
      << describe(outcomes);
}

TEST(ShmFailure, DisagreeingSingleCopyThresholdsNameBothCalls) {
  const std::uint64_t job = unique_job_id();
  bool allowed = true;
  const auto outcomes = run_failing(
      2,
      [&](int rank) {
        ShmOptions options = options_for_failures();
        options.single_copy =
            SingleCopyLimits::from_size(rank == 0 ? 0 : 1000);  // rank 1 copies once
        ShmGroup group(job, 0, rank, 2, options);
        allowed = group.single_copy_allowed();
        std::vector<std::byte> buffer(5000);
        group.bcast(buffer, 0);
        group.barrier();
      },
      std::chrono::milliseconds(2500));
  if (!allowed) GTEST_SKIP() << "this kernel refuses cross-memory copies between the ranks";
  EXPECT_TRUE(outcomes[1].threw);
  EXPECT_TRUE(contains(
      outcomes[1].message,
      "local rank 1: collective calls differ at stage 0: this rank is in call 1 "
      "(bcast of 5 KB from root 0, single copy, root's share 50.0%); local rank 0 is in call "))
      << describe(outcomes);
}

TEST(ShmFailure, BadArgumentOnOneRankFailsTheOthersFast) {
  const std::uint64_t job = unique_job_id();
  const auto outcomes = run_failing(
      3,
      [&](int rank) {
        ShmGroup group(job, 0, rank, 3, options_for_failures());
        std::vector<std::byte> buffer(64);
        try {
          group.bcast(buffer, rank == 1 ? 7 : 0);
        } catch (const UsageError& error) {
          throw std::runtime_error(std::string("UsageError: ") + error.what());
        }
        group.barrier();
      },
      std::chrono::milliseconds(2500));
  EXPECT_TRUE(contains(outcomes[1].message, "UsageError: shm group job ")) << describe(outcomes);
  EXPECT_TRUE(contains(outcomes[1].message, "local rank 1: bcast: root 7 is outside 0..2"));
  for (const int r : {0, 2}) {
    EXPECT_TRUE(contains(outcomes[r].message, "local rank 1 failed: bcast: root 7 is outside 0..2"))
        << describe(outcomes);
  }
}

TEST(ShmFailure, RankThatLeftNormallyIsNotTakenForDead) {
  const std::uint64_t job = unique_job_id();
  // A pipelined gather: rank 2 writes its chunks and its process exits while the root still
  // waits (checking liveness) for the last chunks of rank 1, which writes slowly.
  const auto outcomes = run_failing(
      3,
      [&](int rank) {
        ShmGroup group(job, 0, rank, 3, options_for_failures());
        auto buffers = testing::buffers_of(Collective::Gather, rank, 3, 0, 40'000, 3);
        if (rank != 1) {
          group.gather(buffers.send, buffers.recv, 0);
          const std::string problem =
              testing::check_result(Collective::Gather, rank, 3, 0, 40'000, 3, buffers.recv);
          if (!problem.empty()) throw std::runtime_error(problem);
          return;
        }
        testing::run_slowly(group, Collective::Gather, buffers.send, {}, 0,
                            std::chrono::milliseconds(15));
      },
      std::chrono::milliseconds(5000));
  for (const auto& outcome : outcomes) EXPECT_TRUE(outcome.ok()) << describe(outcomes);
}

TEST(ShmFailure, RankLeavingOnAnExceptionFailsTheOthersFast) {
  const std::uint64_t job = unique_job_id();
  const auto outcomes = run_failing(
      3,
      [&](int rank) {
        ShmGroup group(job, 0, rank, 3, options_for_failures());
        std::vector<std::byte> buffer(64);
        if (rank == 1) throw std::runtime_error("application error");
        group.bcast(buffer, 1);
      },
      std::chrono::milliseconds(2500));
  EXPECT_EQ(outcomes[1].message, "application error");
  for (const int r : {0, 2}) {
    EXPECT_TRUE(contains(outcomes[r].message,
                         "local rank 1 failed: local rank 1 left the group "
                         "while an exception was propagating (in no call "
                         "yet)"))
        << describe(outcomes);
  }
}

TEST(ShmFailure, BrokenGroupStaysBroken) {
  const std::uint64_t job = unique_job_id();
  ShmGroup group(job, 0, 0, 1, options_for_failures());
  std::vector<std::byte> send(8), recv(16);
  EXPECT_THROW(group.gather(send, recv, 0), UsageError);
  try {
    group.barrier();
    ADD_FAILURE() << "a broken group ran a barrier";
  } catch (const ShmError& error) {
    EXPECT_TRUE(contains(error.what(),
                         "this rank failed earlier: gather: the recv buffer has 16 "
                         "bytes but must have 8"))
        << error.what();
  }
}

}  // namespace
}  // namespace multilane::runtime::shm
