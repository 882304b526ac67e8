// tests/runtime/hier_leaders_test.cpp — every two-level `hier-shm:X` algorithm run for real on
// 2 nodes x 3 ranks (the leaders over TCP on loopback, shared memory within each node), every
// byte checked on every rank, with the root on either node, for 0 bytes and an odd size cut
// into several segments; and a bad name rejected by the communicator, saying why.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "local_job.hpp"
#include "multilane/algorithms.hpp"
#include "multilane/collective.hpp"
#include "runtime/check/data_check.hpp"

namespace multilane::testing {
namespace {

class HierLeadersRuntime : public ::testing::TestWithParam<Collective> {};

TEST_P(HierLeadersRuntime, EveryLeadersAlgorithmDeliversEveryByte) {
  const Collective c = GetParam();
  LocalJob job = smp_job(2, 3);
  const int ranks = job.platform.num_ranks();
  int variants = 0;
  for (const AlgorithmInfo& info : leaders_variants()) variants += info.collective == c ? 1 : 0;
  ASSERT_GE(variants, 2);
  const auto errors = run_local_job(job, [&](Communicator& comm) {
    for (const AlgorithmInfo& info : leaders_variants()) {
      if (info.collective != c) continue;
      for (const int root : {0, ranks - 1}) {
        for (const std::uint64_t size : {0ull, 3001ull}) {
          std::vector<std::byte> send(buffer_size(c, Buffer::Send, comm.rank(), ranks, root, size));
          std::vector<std::byte> recv(buffer_size(c, Buffer::Recv, comm.rank(), ranks, root, size));
          runtime::fill_for_check(c, comm.rank(), ranks, root, size, send, recv);
          CollectiveOptions options;
          options.algorithm = std::string(info.name);
          options.segment = 1000;  // several segments for the pipelined leaders' trees
          comm.run(c, send, recv, root, size, options);
          EXPECT_EQ(runtime::check_result(c, comm.rank(), ranks, root, size, recv), "")
              << to_string(c) << " " << info.name << " root " << root << " size " << size;
        }
      }
    }
  });
  for (std::size_t r = 0; r < errors.size(); ++r) EXPECT_EQ(errors[r], "") << "rank " << r;
}

INSTANTIATE_TEST_SUITE_P(TwoNodesOfThree, HierLeadersRuntime,
                         ::testing::Values(Collective::Bcast, Collective::Scatter,
                                           Collective::Gather, Collective::Allgather),
                         [](const auto& info) { return std::string(to_string(info.param)); });

TEST(HierLeadersNames, ABadLeadersAlgorithmIsRejectedSayingWhy) {
  const auto errors = run_local_job(smp_job(1, 2), [](Communicator& comm) {
    std::vector<std::byte> message(10);
    try {
      comm.bcast(message, 0, {"hier-shm:nope", 0, 0});
      ADD_FAILURE() << "hier-shm:nope ran";
    } catch (const UsageError& e) {
      EXPECT_STREQ(e.what(),
                   "unknown bcast algorithm \"hier-shm:nope\": the leaders' algorithm of hier-shm "
                   "must be one of linear, chain, binary, binomial, vandegeijn, multilane, "
                   "multilane-sites, dbtree, site-binomial");
    }
  });
  for (std::size_t r = 0; r < errors.size(); ++r) EXPECT_EQ(errors[r], "") << "rank " << r;
}

}  // namespace
}  // namespace multilane::testing
