// Communicators that share a job, each in its call space (runtime/api/job_sharing.hpp,
// runtime/transport/call_space.hpp): threads play the ranks, as in exchange_join_test.cpp.
#include "runtime/api/job_sharing.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "runtime/transport/call_space.hpp"
#include "thread_ranks.hpp"

namespace multilane {
namespace {

using runtime::JobSharing;

TEST(CallSpace, TheSpaceTravelsInTheTopBitsOfTheSequenceNumber) {
  EXPECT_EQ(runtime::first_sequence(0), 0u);
  EXPECT_EQ(runtime::space_of(runtime::first_sequence(5) + 7), 5u);
  EXPECT_EQ(runtime::call_number(runtime::first_sequence(5) + 7), 7u);
  EXPECT_EQ(runtime::space_of(runtime::first_sequence(63) + runtime::first_sequence(1) - 1), 63u);
  EXPECT_EQ(runtime::call_label(12), "#12");
  EXPECT_EQ(runtime::call_label(runtime::first_sequence(5) + 7), "#7 of call space 5");
}

constexpr int kSize = 3;

// Runs `body(rank, job)` on kSize threads, each a rank of one job; returns each rank's error.
std::vector<std::string> on_every_rank(const std::function<void(int, Communicator&)>& body) {
  return testing::on_thread_ranks(kSize, 0x6b, body);
}

void expect_no_errors(const std::vector<std::string>& errors) {
  for (int rank = 0; rank < kSize; ++rank) {
    EXPECT_EQ(errors[static_cast<std::size_t>(rank)], "") << "rank " << rank;
  }
}

Communicator share(const Communicator& job, std::uint32_t space) {
  std::optional<Communicator> shared = JobSharing::share(job, space, /*concurrent_calls=*/true);
  if (!shared) throw std::runtime_error("call space " + std::to_string(space) + " was taken");
  return std::move(*shared);
}

// Bytes only `root` can have sent in `round`.
std::vector<std::byte> pattern(std::size_t size, int root, int round) {
  std::vector<std::byte> data(size);
  for (std::size_t i = 0; i < size; ++i) data[i] = std::byte((i * 7 + root * 31 + round) % 251);
  return data;
}

TEST(JobSharing, TwoCommunicatorsOfOneJobCallAtOnceFromTwoThreadsAndGetTheirOwnBytes) {
  expect_no_errors(on_every_rank([](int rank, Communicator& job) {
    Communicator second = share(job, 5);
    EXPECT_EQ(JobSharing::job_id(second), JobSharing::job_id(job));
    EXPECT_EQ(second.rank(), rank);
    // Each thread broadcasts from another root with another block size: a message of one
    // communicator taken by the other shows as wrong bytes, a wrong size or a mismatch.
    std::string other_error;
    std::thread other([&] {
      try {
        for (int round = 0; round < 20; ++round) {
          std::vector<std::byte> data =
              rank == 2 ? pattern(70'001, 2, round) : std::vector<std::byte>(70'001);
          second.bcast(data, 2);
          if (data != pattern(70'001, 2, round)) throw std::runtime_error("space 5: wrong bytes");
        }
      } catch (const std::exception& e) {
        other_error = e.what();
      }
    });
    for (int round = 0; round < 20; ++round) {
      std::vector<std::byte> data =
          rank == 0 ? pattern(50'003, 0, round) : std::vector<std::byte>(50'003);
      job.bcast(data, 0);
      if (data != pattern(50'003, 0, round)) throw std::runtime_error("space 0: wrong bytes");
    }
    other.join();
    if (!other_error.empty()) throw std::runtime_error(other_error);
  }));
}

TEST(JobSharing, PointToPointMessagesMatchWithinTheirCommunicator) {
  expect_no_errors(on_every_rank([](int rank, Communicator& job) {
    Communicator second = share(job, 9);
    if (rank == 0) {
      std::byte a{'A'}, b{'B'};
      job.send({&a, 1}, 1);
      second.send({&b, 1}, 1);
    } else if (rank == 1) {
      std::byte got_second{0}, got_first{0};
      second.recv({&got_second, 1}, 0);  // posted first, though the other message came first
      job.recv({&got_first, 1}, 0);
      if (got_second != std::byte{'B'} || got_first != std::byte{'A'}) {
        throw std::runtime_error("point-to-point messages crossed communicators");
      }
    }
    job.barrier();
  }));
}

TEST(JobSharing, ASpaceTakenIsRefusedAndFreeAgainOnceItsCommunicatorIsGone) {
  expect_no_errors(on_every_rank([](int, Communicator& job) {
    const std::uint64_t bit = std::uint64_t{1} << 3;
    EXPECT_EQ(JobSharing::free_spaces(job), ~std::uint64_t{1});  // space 0 is the job's own
    {
      Communicator third = share(job, 3);
      EXPECT_EQ(JobSharing::free_spaces(job) & bit, 0u);
      EXPECT_FALSE(JobSharing::share(job, 3, true).has_value());
      EXPECT_FALSE(JobSharing::share(job, 0, true).has_value());
      EXPECT_FALSE(JobSharing::share(job, runtime::kCallSpaces, true).has_value());
      std::vector<std::byte> data(1000, std::byte{1});
      third.bcast(data, 1);
    }
    EXPECT_NE(JobSharing::free_spaces(job) & bit, 0u);
    // The next communicator in space 3 goes on from its predecessor's calls: the engines, which
    // remember that call #1 of space 3 ended, take its calls.
    Communicator again = share(job, 3);
    std::vector<std::byte> data(1000, std::byte{0});
    std::vector<std::byte> expected(1000, std::byte{2});
    if (again.rank() == 1) data = expected;
    again.bcast(data, 1);
    if (data != expected) throw std::runtime_error("space 3 again: wrong bytes");
    job.barrier();
  }));
}

TEST(JobSharing, AMismatchNamesTheCallAndItsSpace) {
  const std::vector<std::string> errors = on_every_rank([](int rank, Communicator& job) {
    Communicator second = share(job, 7);
    // The last rank expects fewer bytes: root 0's frame of call #1 of space 7, which it must
    // receive, carries another signature.
    std::vector<std::byte> data(rank == kSize - 1 ? 50 : 100, std::byte{0});
    second.bcast(data, 0, {.algorithm = "linear"});
  });
  EXPECT_NE(errors[kSize - 1].find("bcast #1 of call space 7 (linear, root 0, 50 bytes): rank 0 "
                                   "runs a different call as call #1 of call space 7"),
            std::string::npos)
      << errors[kSize - 1];
}

}  // namespace
}  // namespace multilane
