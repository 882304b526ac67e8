// join_by_exchange (runtime/api/exchange_join.hpp): ranks that can all-gather text (here, threads
// sharing memory; in the PMPI library, an MPI communicator) make a working job of it.
#include <gtest/gtest.h>

#include "runtime/api/communicator_impl.hpp"  // job_platform
#include "runtime/api/exchange_join.hpp"
#include "thread_ranks.hpp"

namespace multilane {
namespace {

TEST(ExchangeJoin, RanksThatAllGatherFormAJob) {
  constexpr int kSize = 3;
  std::vector<std::vector<std::byte>> received(kSize);
  const std::vector<std::string> errors =
      testing::on_thread_ranks(kSize, 0x6a, [&](int rank, Communicator& comm) {
        std::vector<std::byte> data(100'003, std::byte{0});
        if (rank == 1) {
          for (std::size_t i = 0; i < data.size(); ++i) data[i] = std::byte(i * 7 % 251);
        }
        comm.bcast(data, 1);
        received[static_cast<std::size_t>(rank)] = data;
      });
  for (int rank = 0; rank < kSize; ++rank) {
    EXPECT_EQ(errors[static_cast<std::size_t>(rank)], "") << "rank " << rank;
    const auto& data = received[static_cast<std::size_t>(rank)];
    ASSERT_EQ(data.size(), 100'003u);
    for (std::size_t i = 0; i < data.size(); ++i) {
      ASSERT_EQ(data[i], std::byte(i * 7 % 251)) << "rank " << rank << " byte " << i;
    }
  }
}

TEST(ExchangeJoin, AnExchangeOfTheWrongSizeIsAnError) {
  runtime::ExchangeJob job;
  job.rank = 0;
  job.size = 2;
  job.secret = runtime::JobSecret::from_text("exchange join test secret");
  job.platform = job_platform("", 2);
  job.all_gather = [](const std::string& mine) { return std::vector<std::string>{mine}; };
  try {
    runtime::join_by_exchange(std::move(job));
    FAIL() << "no error";
  } catch (const CommunicationError& e) {
    EXPECT_NE(std::string(e.what()).find("returned 1 entries for 2 ranks"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace multilane
