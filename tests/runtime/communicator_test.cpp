// tests/runtime/communicator_test.cpp — the Communicator over real TCP on loopback, with the
// ranks of a job as threads: exact bytes for point-to-point and every collective algorithm,
// striping over streams and lanes, and the faults (mismatch, dead peer, timeout).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <future>

#include "local_job.hpp"
#include "multilane/algorithms.hpp"
#include "multilane/collective.hpp"
#include "multilane/count_patterns.hpp"
#include "runtime/api/job_sharing.hpp"
#include "runtime/check/data_check.hpp"
#include "runtime/tcp/auth.hpp"
#include "runtime/tcp/tcp_connect.hpp"
#include "runtime/tcp/transport_error.hpp"

namespace multilane::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using namespace std::chrono_literals;

void expect_all_ok(const std::vector<std::string>& errors) {
  for (std::size_t r = 0; r < errors.size(); ++r) EXPECT_EQ(errors[r], "") << "rank " << r;
}

TEST(Communicator, PointToPointDeliversExactBytesOfEverySize) {
  const std::vector<std::size_t> sizes{0, 1, 4097, (1u << 20) + 3};
  expect_all_ok(run_local_job(local_job(2), [&](Communicator& comm) {
    for (std::size_t size : sizes) {
      if (comm.rank() == 0) {
        comm.send(bytes_pattern(size, 1), 1);
      } else {
        std::vector<std::byte> got(size, std::byte{0});
        comm.recv(got, 0);
        EXPECT_EQ(got, bytes_pattern(size, 1)) << size << " bytes";
      }
    }
  }));
}

TEST(Communicator, NonBlockingExchangeInBothDirections) {
  expect_all_ok(run_local_job(local_job(2), [](Communicator& comm) {
    const int peer = 1 - comm.rank();
    const auto out = bytes_pattern(3 << 20, comm.rank());
    std::vector<std::byte> in(3 << 20);
    Request r = comm.irecv(in, peer);
    Request s = comm.isend(out, peer);
    s.wait();
    r.wait();
    EXPECT_TRUE(r.test());
    EXPECT_EQ(in, bytes_pattern(3 << 20, peer));
  }));
}

// Reductions take these in turn, so every algorithm meets several element sizes and kinds.
constexpr Reduction kCheckedReductions[] = {
    {ElementType::Int32, ReduceOp::Sum},    {ElementType::Double, ReduceOp::Sum},
    {ElementType::Uint8, ReduceOp::Bxor},   {ElementType::DoubleInt, ReduceOp::Minloc},
    {ElementType::Int64, ReduceOp::Max},    {ElementType::Float16, ReduceOp::Sum},
    {ElementType::Uint16, ReduceOp::Prod},  {ElementType::IntInt, ReduceOp::Maxloc},
    {ElementType::Float, ReduceOp::Min},    {ElementType::Int8, ReduceOp::Lor},
    {ElementType::Bfloat16, ReduceOp::Sum}, {ElementType::Uint64, ReduceOp::Band},
};

// Every collective and every algorithm on `comm`, checked byte for byte (reductions element by
// element). A reduction's size is cut to whole elements; the v-forms take each pattern of
// uneven counts in turn, `size` their largest block.
void check_every_algorithm_on(Communicator& comm, std::uint64_t size) {
  const int ranks = comm.size();
  std::size_t turn = 0;
  for (const AlgorithmInfo& info : all_algorithms()) {
    for (int root : {0, ranks - 1}) {
      const Collective c = info.collective;
      const Reduction reduction = kCheckedReductions[turn++ % std::size(kCheckedReductions)];
      const std::uint64_t n =
          is_reduction(c) ? size / element_size(reduction.type) * element_size(reduction.type)
                          : size;
      const CountsPattern pattern = kAllCountsPatterns[turn % std::size(kAllCountsPatterns)];
      const std::vector<std::uint64_t> counts =
          pattern_counts(pattern, c, ranks, n, is_reduction(c) ? element_size(reduction.type) : 1);
      std::vector<std::byte> send(
          buffer_size(c, Buffer::Send, comm.rank(), ranks, root, n, counts));
      std::vector<std::byte> recv(
          buffer_size(c, Buffer::Recv, comm.rank(), ranks, root, n, counts));
      runtime::fill_for_check(c, comm.rank(), ranks, root, n, send, recv, reduction, counts);
      CollectiveOptions options;
      options.algorithm = std::string(info.name);
      options.segment = 1000;  // several segments even for small sizes
      if (is_uneven(c)) {
        comm.runv(c, send, recv, root, counts, options, reduction);
      } else {
        comm.run(c, send, recv, root, n, options, reduction);
      }
      EXPECT_EQ(runtime::check_result(c, comm.rank(), ranks, root, n, recv, reduction, counts), "")
          << to_string(c) << " " << info.name << " root " << root << " size " << n << " "
          << to_string(reduction.type) << " " << to_string(reduction.op)
          << (is_uneven(c) ? " counts " + std::string(to_string(pattern)) : "");
    }
  }
}

void check_every_algorithm(LocalJob job, std::uint64_t size) {
  expect_all_ok(
      run_local_job(job, [&](Communicator& comm) { check_every_algorithm_on(comm, size); }));
}

TEST(Communicator, EveryAlgorithmOnFiveRanks) {
  check_every_algorithm(local_job(5), 4097);
}
TEST(Communicator, EveryAlgorithmOnOneRank) {
  check_every_algorithm(local_job(1), 1);
}
TEST(Communicator, EveryAlgorithmOnTwoSitesOfTwoLanes) {
  check_every_algorithm(local_job(6, 2, 2), 3001);
}

// hier-shm: on one node every rank's part is shared memory only and runs on the caller's
// thread; on two nodes the leaders also talk TCP and go through the engine.
TEST(Communicator, EveryAlgorithmOnOneNodeOfFourRanks) {
  check_every_algorithm(smp_job(1, 4), 3001);
}
TEST(Communicator, EveryAlgorithmOnTwoNodesOfThreeRanks) {
  check_every_algorithm(smp_job(2, 3), 3001);
}

// Communicators over some of a job's ranks, or all of them in another order, share its engine
// (runtime/api/job_sharing.hpp). On 2 nodes of 4 ranks: the job's ranks reversed, and two
// communicators of 4 ranks each, two on each node, in one call space at once (ranks that never
// meet, whose shared-memory groups must not meet either); then, after those are gone, a
// communicator over ranks of both takes that space, its ranks having numbered their calls
// differently, and goes on from the highest numbering. Every algorithm runs on each, checked
// byte for byte.
runtime::JobMembership membership_of(const Platform& job, std::vector<int> job_ranks,
                                     int job_rank) {
  runtime::JobMembership m;
  m.platform = job;
  m.platform.ranks.clear();
  for (std::size_t r = 0; r < job_ranks.size(); ++r) {
    m.platform.ranks.push_back(job.ranks[static_cast<std::size_t>(job_ranks[r])]);
    if (job_ranks[r] == job_rank) m.rank = static_cast<int>(r);
  }
  m.job_ranks = std::move(job_ranks);
  return m;
}

Communicator share_as(const Communicator& job, std::uint32_t space,
                      const runtime::JobMembership& membership) {
  std::optional<Communicator> shared = runtime::JobSharing::share(job, space, true, &membership);
  if (!shared) throw std::runtime_error(fmt::format("call space {} was taken", space));
  return std::move(*shared);
}

// The highest numbering of the job's ranks in `members` (an all-gather over the job).
runtime::CallNumbering highest_numbering(Communicator& job, const Communicator& shared,
                                         const std::vector<int>& members) {
  const runtime::CallNumbering mine = runtime::JobSharing::numbering(shared);
  std::vector<runtime::CallNumbering> all(static_cast<std::size_t>(job.size()));
  job.allgather(std::as_bytes(std::span(&mine, 1)), std::as_writable_bytes(std::span(all)));
  runtime::CallNumbering highest;
  for (int member : members) {
    const runtime::CallNumbering& n = all[static_cast<std::size_t>(member)];
    highest.sequence = std::max(highest.sequence, n.sequence);
    highest.generation = std::max(highest.generation, n.generation);
  }
  return highest;
}

TEST(Communicator, CommunicatorsOverSomeOfTheJobsRanksInAnyOrderShareIt) {
  const LocalJob job = smp_job(2, 4);
  const std::vector<int> reversed{7, 6, 5, 4, 3, 2, 1, 0}, first{4, 1, 0, 6}, second{3, 7, 2, 5},
      across{1, 2, 7};
  expect_all_ok(run_local_job(job, [&](Communicator& comm) {
    const int me = comm.rank();
    auto has_me = [me](const std::vector<int>& ranks) {
      return std::find(ranks.begin(), ranks.end(), me) != ranks.end();
    };
    Communicator back = share_as(comm, 5, membership_of(job.platform, reversed, me));
    EXPECT_EQ(back.rank(), 7 - me);
    check_every_algorithm_on(back, 3001);
    {
      Communicator mine =
          share_as(comm, 9, membership_of(job.platform, has_me(first) ? first : second, me));
      check_every_algorithm_on(mine, 2001);
      if (has_me(second)) {  // `second` numbers more calls in space 9 than `first`
        std::vector<std::byte> data(10);
        for (int round = 0; round < 5; ++round) mine.bcast(data, 0);
      }
      comm.barrier();  // both are done before either is gone
    }
    std::optional<Communicator> third;
    runtime::CallNumbering numbering;
    if (has_me(across)) third = share_as(comm, 9, membership_of(job.platform, across, me));
    numbering = highest_numbering(comm, third ? *third : back,
                                  across);  // every rank takes part in the all-gather
    if (!third) return;
    runtime::JobSharing::continue_numbering(*third, numbering);
    EXPECT_EQ(runtime::JobSharing::numbering(*third).sequence, numbering.sequence);
    check_every_algorithm_on(*third, 1001);
  }));
}

TEST(Communicator, AMembershipThatDoesNotFitTheJobIsRefusedNamingWhy) {
  const LocalJob job = smp_job(1, 2);
  expect_all_ok(run_local_job(job, [&](Communicator& comm) {
    const int me = comm.rank();
    runtime::JobMembership twice = membership_of(job.platform, {me, me}, me);
    EXPECT_THAT([&] { runtime::JobSharing::share(comm, 3, true, &twice); },
                ::testing::ThrowsMessage<UsageError>(fmt::format(
                    "job rank {} is out of range or given twice: must be 0..1, once each", me)));
    runtime::JobMembership other = membership_of(job.platform, {1 - me}, 1 - me);
    EXPECT_THAT([&] { runtime::JobSharing::share(comm, 3, true, &other); },
                ::testing::ThrowsMessage<UsageError>(
                    fmt::format("rank 0 of the communicator is not job rank {}, this one", me)));
  }));
}

// A blocking group call made while a non-blocking one is in flight must not overtake it: every
// rank of the node runs the node's group calls in call order.
TEST(Communicator, BlockingGroupCallsWaitForTheNonBlockingOnesInFlight) {
  constexpr int kRanks = 3;
  constexpr std::size_t kSize = (1 << 20) + 5;
  const CollectiveOptions hier{"hier-shm", 0, 0};
  expect_all_ok(run_local_job(smp_job(1, kRanks), [&](Communicator& comm) {
    const int me = comm.rank();
    for (int round = 0; round < 3; ++round) {
      std::vector<std::byte> message(me == 2 ? bytes_pattern(kSize, round)
                                             : std::vector<std::byte>(kSize));
      const auto blocks = bytes_pattern(kRanks * 999, 20 + round);
      std::vector<std::byte> block(999);
      Request b = comm.ibcast(message, 2, hier);
      comm.scatter(blocks, block, 0, hier);
      b.wait();
      EXPECT_EQ(message, bytes_pattern(kSize, round)) << "round " << round;
      EXPECT_TRUE(std::equal(block.begin(), block.end(), blocks.begin() + 999 * me))
          << "round " << round;
    }
  }));
}

// A failure in a call that ran on the caller's thread breaks the communicator like any other.
TEST(Communicator, AFailedSharedMemoryCallNamesTheCallAndBreaksTheCommunicator) {
  LocalJob job = smp_job(1, 2);
  job.options.timeout = std::chrono::seconds(1);
  const auto errors = run_local_job(job, [](Communicator& comm) {
    if (comm.rank() == 1) return;  // never joins: rank 0's group setup times out
    std::vector<std::byte> message(100);
    try {
      comm.bcast(message, 0, {"hier-shm", 0, 0});
      ADD_FAILURE() << "a bcast without its peer returned";
    } catch (const CommunicationError& e) {
      EXPECT_THAT(e.what(), HasSubstr("bcast #1 (hier-shm, root 0, 100 bytes): shared memory: "));
    }
    EXPECT_THROW(comm.bcast(message, 0, {"hier-shm", 0, 0}), CommunicationError);
  });
  expect_all_ok(errors);
}

TEST(Communicator, StripesLargeMessagesOverStreamsAndLanes) {
  LocalJob job = local_job(2, 2);
  job.options.lan_streams = 4;
  job.options.max_chunk = 64 * 1024;
  expect_all_ok(run_local_job(job, [](Communicator& comm) {
    const std::size_t size = (5u << 20) + 1;
    if (comm.rank() == 0) {
      comm.send(bytes_pattern(size, 3), 1);
    } else {
      std::vector<std::byte> got(size);
      comm.recv(got, 0);
      EXPECT_EQ(got, bytes_pattern(size, 3));
    }
  }));
}

// Rank 0 sends a small and a large message before rank 1 posts either receive.
void send_two_messages_before_their_receives(const LocalJob& job) {
  expect_all_ok(run_local_job(job, [](Communicator& comm) {
    const std::size_t size = 2u << 20;
    if (comm.rank() == 0) {
      comm.send(bytes_pattern(100, 1), 1);
      comm.send(bytes_pattern(size, 2), 1);
    } else {
      std::this_thread::sleep_for(200ms);  // both messages arrive before their receives
      std::vector<std::byte> small(100), large(size);
      comm.recv(small, 0);
      comm.recv(large, 0);
      EXPECT_EQ(small, bytes_pattern(100, 1));
      EXPECT_EQ(large, bytes_pattern(size, 2));
    }
  }));
}

TEST(Communicator, EarlyMessagesBeyondTheBudgetWaitForTheirReceive) {
  LocalJob job = local_job(2);
  job.options.unexpected_budget = 1024;  // far below the message: the stream must pause
  send_two_messages_before_their_receives(job);
}

TEST(Communicator, EarlyChunksAboveTheChunkSizeWaitForTheirReceive) {
  LocalJob job = local_job(2);
  job.options.max_chunk = 64 * 1024;  // the large message is one chunk on one stream: parked
  send_two_messages_before_their_receives(job);
}

TEST(Communicator, SeveralCollectivesInFlightCompleteInAnyOrder) {
  constexpr int kRanks = 4;
  expect_all_ok(run_local_job(local_job(kRanks), [](Communicator& comm) {
    const int me = comm.rank();
    std::vector<std::byte> bcast(me == 1 ? bytes_pattern((1 << 20) + 3, 7)
                                         : std::vector<std::byte>((1 << 20) + 3));
    const auto mine = bytes_pattern(4097, me);
    std::vector<std::byte> all(4097 * kRanks);
    const auto blocks = bytes_pattern(kRanks * 1000, 10 + me);
    std::vector<std::byte> exchanged(kRanks * 1000);
    Request b = comm.ibcast(bcast, 1, {"binomial", 0, 0});
    Request g = comm.iallgather(mine, all, {"ring", 0, 0});
    Request a = comm.ialltoall(blocks, exchanged);
    a.wait();  // the last started may finish first
    g.wait();
    b.wait();
    EXPECT_EQ(bcast, bytes_pattern((1 << 20) + 3, 7));
    for (int r = 0; r < kRanks; ++r) {
      EXPECT_TRUE(std::equal(all.begin() + 4097 * r, all.begin() + 4097 * (r + 1),
                             bytes_pattern(4097, r).begin()))
          << "allgather block " << r;
      const auto theirs = bytes_pattern(kRanks * 1000, 10 + r);
      EXPECT_TRUE(std::equal(exchanged.begin() + 1000 * r, exchanged.begin() + 1000 * (r + 1),
                             theirs.begin() + 1000 * me))
          << "alltoall block from " << r;
    }
  }));
}

// A v-form whose counts only the root (gatherv, scatterv) or each rank its row (alltoallv)
// knows: they travel first, and the call runs on the engine without the caller. Rank 0 blocks
// (in no call of ours) until the others' calls have completed, so they complete without it;
// a call started after them, which may end first, is numbered after them; every byte arrives
// on every algorithm that reads every rank's counts, and on "auto".
void check_calls_sharing_counts(const LocalJob& job) {
  const int ranks = job.platform.num_ranks();
  constexpr std::uint64_t kUnknown = 1ull << 40;  // what a rank does not know: overwritten
  std::vector<std::string> algorithms_of[3];
  const Collective collectives[] = {Collective::Gatherv, Collective::Scatterv,
                                    Collective::Alltoallv};
  for (int k = 0; k < 3; ++k) {
    for (const AlgorithmInfo& info : all_algorithms()) {
      if (info.collective == collectives[k] && !info.own_counts_only) {
        algorithms_of[k].emplace_back(info.name);
      }
    }
    algorithms_of[k].emplace_back("auto");
  }
  std::promise<void> others_done;
  std::shared_future<void> others_done_future = others_done.get_future().share();
  std::atomic<int> others_left = ranks - 1;
  expect_all_ok(run_local_job(job, [&](Communicator& comm) {
    const int me = comm.rank();
    int turn = 0;
    std::vector<std::vector<std::byte>> sends, recvs;
    std::vector<std::tuple<Collective, std::string, int, std::vector<std::uint64_t>>> calls;
    std::vector<Request> requests;
    for (int k = 0; k < 3; ++k) {
      for (const std::string& algorithm : algorithms_of[k]) {
        const Collective c = collectives[k];
        const int root = turn % ranks;
        const CountsPattern pattern = kAllCountsPatterns[turn++ % std::size(kAllCountsPatterns)];
        const std::vector<std::uint64_t> counts = pattern_counts(pattern, c, ranks, 3001);
        sends.emplace_back(buffer_size(c, Buffer::Send, me, ranks, root, 3001, counts));
        recvs.emplace_back(buffer_size(c, Buffer::Recv, me, ranks, root, 3001, counts));
        runtime::fill_for_check(c, me, ranks, root, 3001, sends.back(), recvs.back(), {}, counts);
        std::vector<std::uint64_t> known(counts.size(), kUnknown);
        const auto p = static_cast<std::size_t>(ranks);
        if (c == Collective::Alltoallv) {
          std::copy_n(counts.begin() + static_cast<std::ptrdiff_t>(p) * me, p,
                      known.begin() + static_cast<std::ptrdiff_t>(p) * me);
        } else if (me == root) {
          known = counts;
        }
        calls.emplace_back(c, algorithm, root, counts);
        requests.push_back(comm.irunv_sharing_counts(c, sends.back(), recvs.back(), root, known,
                                                     {.algorithm = algorithm}));
      }
    }
    const auto later = bytes_pattern(5000, 3);
    std::vector<std::byte> bcast(me == 0 ? later : std::vector<std::byte>(5000));
    Request after = comm.ibcast(bcast, 0, {.algorithm = "binomial"});
    if (me == 0) {
      EXPECT_EQ(others_done_future.wait_for(60s), std::future_status::ready)
          << "the other ranks' calls did not complete while rank 0 was away";
    }
    after.wait();
    for (std::size_t i = 0; i < requests.size(); ++i) {
      requests[i].wait();
      const auto& [c, algorithm, root, counts] = calls[i];
      EXPECT_EQ(runtime::check_result(c, me, ranks, root, 3001, recvs[i], {}, counts), "")
          << to_string(c) << " " << algorithm << " root " << root;
    }
    EXPECT_EQ(bcast, later);
    if (me != 0 && --others_left == 0) others_done.set_value();
  }));
}

TEST(Communicator, CallsThatShareTheirCountsFirstRunWithoutTheCaller) {
  check_calls_sharing_counts(local_job(5));
}
TEST(Communicator, CallsThatShareTheirCountsFirstRunWithoutTheCallerAcrossSites) {
  check_calls_sharing_counts(local_job(6, 2, 2));
}

TEST(Communicator, ACallThatSharesItsCountsRefusesOtherCollectivesAndWrongCounts) {
  expect_all_ok(run_local_job(local_job(2), [](Communicator& comm) {
    std::vector<std::byte> none;
    EXPECT_THAT(
        [&] {
          comm.irunv_sharing_counts(Collective::Allgatherv, none, none, 0, {0, 0});
        },
        ::testing::ThrowsMessage<UsageError>(
            "allgatherv: every rank knows its counts; nothing to share"));
    EXPECT_THAT(
        [&] {
          comm.irunv_sharing_counts(Collective::Alltoallv, none, none, 0, {0, 0});
        },
        ::testing::ThrowsMessage<UsageError>("alltoallv: 2 counts, but 2 ranks need 4"));
  }));
}

// A v-form's schedule is kept for its counts, but only for the last few distinct counts (a
// program whose counts change every call must not grow without bound): after 40 distinct
// alltoallvs, the first counts again and the last again still move every byte (a schedule
// dropped with a recent call still pointing to it would be read after it was freed: ASan).
TEST(Communicator, VFormsWithEverChangingCountsKeepOnlyRecentSchedules) {
  constexpr int kRanks = 3;
  expect_all_ok(run_local_job(local_job(kRanks), [](Communicator& comm) {
    auto run = [&](int variant) {
      std::vector<std::uint64_t> counts(kRanks * kRanks);
      for (std::size_t k = 0; k < counts.size(); ++k) counts[k] = (k * 7 + variant) % 50;
      const Collective c = Collective::Alltoallv;
      std::vector<std::byte> send(buffer_size(c, Buffer::Send, comm.rank(), kRanks, 0, 0, counts));
      std::vector<std::byte> recv(buffer_size(c, Buffer::Recv, comm.rank(), kRanks, 0, 0, counts));
      runtime::fill_for_check(c, comm.rank(), kRanks, 0, 0, send, recv, {}, counts);
      comm.runv(c, send, recv, 0, counts, {.algorithm = "pairwise"});
      EXPECT_EQ(runtime::check_result(c, comm.rank(), kRanks, 0, 0, recv, {}, counts), "")
          << "variant " << variant;
    };
    for (int variant = 0; variant < 40; ++variant) run(variant);
    run(0);
    run(39);
    run(39);
  }));
}

// A call like the previous one but for one argument is resolved afresh, not taken for a repeat:
// the new root's bytes arrive, and a new algorithm name is looked up (an unknown one refused).
TEST(Communicator, ACallThatDiffersFromThePreviousOneInOneArgumentRunsAsAsked) {
  expect_all_ok(run_local_job(local_job(3), [](Communicator& comm) {
    for (int root : {0, 0, 2}) {
      std::vector<std::byte> data =
          comm.rank() == root ? bytes_pattern(1000, root + 1) : std::vector<std::byte>(1000);
      comm.bcast(data, root, {"binomial", 0, 0});
      EXPECT_EQ(data, bytes_pattern(1000, root + 1)) << "root " << root;
    }
    std::vector<std::byte> data(1000);
    EXPECT_THROW(comm.bcast(data, 0, {"no-such-algorithm", 0, 0}), UsageError);
  }));
}

// After an identical call, ranks that now combine with different operations still disagree
// on the call's signature. Both ranks send, so either may see the other's frame first and fail;
// the other may then only see it leave.
TEST(Communicator, ADifferentReductionAfterARepeatedCallIsAMismatch) {
  LocalJob job = local_job(2);
  job.options.timeout = 5s;
  const auto errors = run_local_job(job, [](Communicator& comm) {
    const std::vector<int> mine{comm.rank() + 1, 7};
    std::vector<int> combined(2);
    comm.allreduce<int>(mine, combined, ReduceOp::Sum);
    EXPECT_EQ(combined, (std::vector<int>{3, 14}));
    comm.allreduce<int>(mine, combined, comm.rank() == 0 ? ReduceOp::Sum : ReduceOp::Max);
  });
  const auto mismatch = [&](int rank) {
    return errors[rank].find(fmt::format("rank {} runs a different call as call #2", 1 - rank)) !=
           std::string::npos;
  };
  EXPECT_TRUE(mismatch(0) || mismatch(1)) << errors[0] << " / " << errors[1];
  EXPECT_NE(errors[0], "");
  EXPECT_NE(errors[1], "");
}

// A program longer than a run keeps in itself (the middle rank of a chain of 100 segments
// sends and receives each) completes with every byte.
TEST(Communicator, AProgramOfHundredsOfOperationsCompletes) {
  expect_all_ok(run_local_job(local_job(3), [](Communicator& comm) {
    std::vector<std::byte> data =
        comm.rank() == 0 ? bytes_pattern(100'000, 9) : std::vector<std::byte>(100'000);
    comm.bcast(data, 0, {"chain", 1000, 0});
    EXPECT_EQ(data, bytes_pattern(100'000, 9));
  }));
}

TEST(Communicator, DifferentAlgorithmsAtTheSameCallAreAMismatch) {
  const auto errors = run_local_job(local_job(2), [](Communicator& comm) {
    std::vector<std::byte> data(1000);
    comm.bcast(data, 0, {comm.rank() == 0 ? "binomial" : "chain", 0, 0});
  });
  EXPECT_THAT(errors[1],
              HasSubstr("mismatch: bcast #1 (chain, root 0, 1000 bytes): rank 0 runs a different "
                        "call as call #1"));
}

// The same when rank 0's frame is there before rank 1's call begins: the receive would take
// its bytes at once, so the mismatch must fail the call before any operation starts.
TEST(Communicator, AMismatchedFrameThatArrivedFirstFailsTheCall) {
  const auto errors = run_local_job(local_job(2), [](Communicator& comm) {
    std::vector<std::byte> data(1000);
    if (comm.rank() == 1) std::this_thread::sleep_for(300ms);
    comm.bcast(data, 0, {comm.rank() == 0 ? "binomial" : "chain", 0, 0});
  });
  EXPECT_THAT(errors[1],
              HasSubstr("mismatch: bcast #1 (chain, root 0, 1000 bytes): rank 0 runs a different "
                        "call as call #1"));
}

TEST(Communicator, DifferentSizesAreAMismatchNotCorruption) {
  LocalJob job = local_job(3);
  job.options.timeout = 2s;
  const auto errors = run_local_job(job, [](Communicator& comm) {
    std::vector<std::byte> data(comm.rank() == 2 ? 500 : 1000);
    comm.bcast(data, 0, {"linear", 0, 0});
  });
  EXPECT_THAT(errors[2], HasSubstr("rank 0 runs a different call as call #1"));
  EXPECT_THAT(errors[2], StartsWith("mismatch: "));
}

TEST(Communicator, ReceiveFromADeadPeerFailsAtOnceNamingIt) {
  LocalJob job = local_job(2);
  job.options.timeout = 30s;  // the failure must come from the closed connections, not this
  const auto start = std::chrono::steady_clock::now();
  const auto errors = run_local_job(job, [](Communicator& comm) {
    if (comm.rank() == 1) {
      comm.send(bytes_pattern(10, 1), 0);
      return;  // leaves: its communicator closes every connection
    }
    std::vector<std::byte> first(10), second(10);
    comm.recv(first, 1);
    comm.recv(second, 1);
  });
  EXPECT_EQ(errors[1], "");
  EXPECT_EQ(errors[0], "peer gone: rank 1 closed its connections (it exited or died)");
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
}

TEST(Communicator, SilentPeerTimesOutSayingWhatWasAwaited) {
  LocalJob job = local_job(2);
  job.options.timeout = 300ms;
  const auto errors = run_local_job(job, [](Communicator& comm) {
    if (comm.rank() == 1) {
      std::this_thread::sleep_for(1s);
      return;
    }
    std::vector<std::byte> data(10);
    comm.recv(data, 1);
  });
  EXPECT_EQ(
      errors[0],
      "timeout: timed out after 0.3 s waiting for rank 1 (point-to-point message 0): received 0 of "
      "10 bytes; rank 1 never connected to this rank");
}

TEST(Communicator, AFailedCommunicatorRefusesLaterCalls) {
  LocalJob job = local_job(2);
  job.options.timeout = 200ms;
  const auto errors = run_local_job(job, [](Communicator& comm) {
    if (comm.rank() == 1) return;
    std::vector<std::byte> data(10);
    EXPECT_THROW(comm.recv(data, 1), CommunicationError);
    comm.send(data, 1);
  });
  EXPECT_THAT(errors[0], HasSubstr("timeout: this communicator is unusable after an earlier "
                                   "failure: timed out"));
}

// The same for a failed non-blocking call: its failure breaks the communicator when it happens,
// whether or not the request is waited for, and wait() reports it.
TEST(Communicator, AFailedNonBlockingCallBreaksTheCommunicatorToo) {
  LocalJob job = local_job(2);
  job.options.timeout = 200ms;
  const auto errors = run_local_job(job, [](Communicator& comm) {
    if (comm.rank() == 1) return;
    std::vector<std::byte> data(10);
    Request failed = comm.irecv(data, 1);
    // Learn that it failed without wait(): test() throws the error once there is one.
    const auto give_up = std::chrono::steady_clock::now() + 10s;
    bool seen = false;
    while (!seen && std::chrono::steady_clock::now() < give_up) {
      try {
        if (!failed.test()) std::this_thread::sleep_for(10ms);
      } catch (const CommunicationError&) {
        seen = true;
      }
    }
    EXPECT_TRUE(seen);
    EXPECT_THROW(failed.wait(), CommunicationError);  // Request::wait() itself breaks nothing
    comm.send(data, 1);
  });
  EXPECT_THAT(errors[0], HasSubstr("unusable after an earlier failure: "));
}

// Strangers at a rank's door: one with a wrong secret, one sending random bytes. Both are
// turned away (the handshake fails on their side too) and the job goes on unharmed.
TEST(Communicator, StrangersAreRejectedAndTheJobCompletes) {
  std::promise<std::string> intruders_done;
  auto done = intruders_done.get_future().share();
  const auto errors = run_local_job(
      local_job(3),
      [&](Communicator& comm) {
        EXPECT_EQ(done.get(), "wrong secret rejected; garbage rejected");
        std::vector<std::byte> data(100000);
        runtime::fill_for_check(Collective::Bcast, comm.rank(), 3, 0, data.size(), {}, data);
        comm.bcast(data, 0, {"binomial", 0, 0});
        EXPECT_EQ(runtime::check_result(Collective::Bcast, comm.rank(), 3, 0, data.size(), data),
                  "");
      },
      [&](MemoryAddressBook& book) {
        const auto target = runtime::parse_endpoint(book.lookup(0).at(0), "rank 0");
        std::string outcome;
        {  // the right job id, the wrong secret
          asio::io_context io;
          asio::ip::tcp::socket socket(io);
          socket.connect(target);
          try {
            runtime::authenticate(io, socket, runtime::Role::Connector,
                                  {7, runtime::JobSecret::from_text("not the secret"), 5s, 0});
            outcome += "wrong secret ACCEPTED";
          } catch (const runtime::TransportError& e) {
            outcome += e.kind() == ErrorKind::authentication ? "wrong secret rejected"
                                                             : "wrong secret: " + e.describe();
          }
        }
        {  // random bytes, then silence until the rank hangs up
          asio::io_context io;
          asio::ip::tcp::socket socket(io);
          socket.connect(target);
          const auto garbage = bytes_pattern(4096, 99);
          asio::write(socket, asio::buffer(garbage));
          std::array<char, 256> reply{};
          asio::error_code error;
          while (!error) socket.read_some(asio::buffer(reply), error);
          outcome += error == asio::error::eof || error == asio::error::connection_reset
                         ? "; garbage rejected"
                         : "; garbage: " + error.message();
        }
        intruders_done.set_value(outcome);
      });
  expect_all_ok(errors);
}

TEST(Communicator, BadArgumentsNameTheArgumentAndRange) {
  const auto errors = run_local_job(local_job(2), [](Communicator& comm) {
    std::vector<std::byte> data(10);
    if (comm.rank() == 0) {
      EXPECT_THAT(attempt([&] { comm.send(data, 2); }).message,
                  "destination rank 2 is out of range: must be 0..1");
      EXPECT_THAT(attempt([&] { comm.bcast(data, -1); }).message,
                  "root -1 is out of range: must be 0..1");
      EXPECT_THAT(attempt([&] {
                    comm.bcast(data, 0, {"fastest", 0, 0});
                  }).message,
                  HasSubstr("unknown bcast algorithm \"fastest\": choose auto or one of linear"));
      std::vector<std::byte> small(15);
      EXPECT_EQ(attempt([&] { comm.scatter(small, data, 0); }).kind, ErrorKind::usage);
      EXPECT_EQ(attempt([&] { comm.scatter(small, data, 0); }).message,
                "scatter: the send buffer of rank 0 has 15 bytes, but this call needs 20 (10 "
                "bytes per rank, 2 ranks)");
    }
    comm.barrier();
  });
  expect_all_ok(errors);
}

TEST(Communicator, BadOptionsNameTheOptionAndRange) {
  LocalJob job = local_job(2);
  job.options.lan_socket_buffer = -2;
  for (const std::string& error : run_local_job(job, [](Communicator&) {})) {
    EXPECT_EQ(error, "usage: lan_socket_buffer -2 is out of range: must be -1..1073741824");
  }
  job.options.lan_socket_buffer = kAutomaticSocketBuffer;
  job.options.wan_socket_buffer = -1;
  for (const std::string& error : run_local_job(job, [](Communicator&) {})) {
    EXPECT_EQ(error, "usage: wan_socket_buffer -1 is out of range: must be 0..1073741824");
  }
}

TEST(Communicator, AutoPicksTheModelsFastestAndExplainsIt) {
  LocalJob job = local_job(8, 2);
  expect_all_ok(run_local_job(job, [](Communicator& comm) {
    const std::string text = comm.explain(Collective::Bcast, 16 << 20, 0);
    EXPECT_THAT(text, HasSubstr("bcast of 16777216 bytes, root 0, 8 ranks: chose "));
    EXPECT_THAT(text, HasSubstr("candidates: "));
    // Two lanes per node and a large message: a two-tree algorithm (multilane, or NCCL's
    // double binary tree, which the model rates a hair faster) beats every one-tree one.
    const std::string chosen = comm.resolve_algorithm(Collective::Bcast, 16 << 20, 0);
    EXPECT_THAT(chosen, ::testing::AnyOf("multilane", "multilane-sites", "dbtree"));
    EXPECT_THAT(text, HasSubstr("chose " + chosen));
    std::vector<std::byte> data(1 << 20);
    runtime::fill_for_check(Collective::Bcast, comm.rank(), 8, 0, data.size(), {}, data);
    comm.bcast(data, 0);
    EXPECT_EQ(runtime::check_result(Collective::Bcast, comm.rank(), 8, 0, data.size(), data), "");
  }));
}

}  // namespace
}  // namespace multilane::testing
