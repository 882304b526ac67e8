// tests/runtime/receive_side_demand_test.cpp — the ReceiveSide's count of the receives that
// wait for each peer's frames (StreamDemand), which the readers of that peer's streams follow:
// up when a receive is posted, down when it completes, whether by a frame or a failure.
#include <gtest/gtest.h>

#include <asio.hpp>
#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "runtime/loopback.hpp"
#include "runtime/transport/connection.hpp"
#include "runtime/transport/engine_context.hpp"
#include "runtime/transport/receive_side.hpp"
#include "runtime/transport/wire.hpp"

namespace multilane::runtime {
namespace {

using testing::loopback;
using testing::pattern;

constexpr std::uint64_t kDemandJob = 7;

EngineConfig three_ranks() {
  EngineConfig config;
  config.size = 3;
  config.job_id = kDemandJob;
  return config;
}

class ReceiveSideDemandTest : public ::testing::Test {
 protected:
  ReceiveSideDemandTest() {
    context.check_signature = [](int, std::uint64_t, std::uint64_t) { return true; };
  }

  // Posts a receive of `bytes` from `peer` as message `id` of point-to-point traffic.
  void post(int peer, std::uint64_t id, std::vector<std::byte>& bytes) {
    RecvRequest request;
    request.peer = peer;
    request.key = {.sequence = 0, .message_id = id};
    request.bytes = bytes;
    side.recv(std::move(request), [this](const std::string& error) { outcomes.push_back(error); });
  }

  EngineContext context{three_ranks()};
  ReceiveSide side{context};
  std::vector<std::string> outcomes;
};

TEST_F(ReceiveSideDemandTest, CountsEachPeersPostedReceivesUntilTheyFail) {
  std::vector<std::byte> a(8), b(8), c(8);
  post(1, 0, a);
  post(1, 1, b);
  post(2, 0, c);
  EXPECT_EQ(context.demand.at(0).waiting, 0);
  EXPECT_EQ(context.demand.at(1).waiting, 2);
  EXPECT_EQ(context.demand.at(2).waiting, 1);
  side.abandon_call(0);
  EXPECT_EQ(outcomes, (std::vector<std::string>{"abandoned", "abandoned", "abandoned"}));
  EXPECT_EQ(context.demand.at(1).waiting, 0);
  EXPECT_EQ(context.demand.at(2).waiting, 0);
}

TEST_F(ReceiveSideDemandTest, AReceiveThatAFrameCompletesStopsWaiting) {
  // Peer 1's connection: `writer` is the peer's end.
  asio::ip::tcp::acceptor acceptor(context.io, loopback(0));
  asio::ip::tcp::socket writer(context.io);
  writer.connect(acceptor.local_endpoint());
  auto connection = std::make_shared<Connection>(context.io);
  connection->socket = acceptor.accept();
  side.adopt(connection, 1, 0, 0, /*opened_by_peer=*/true);

  std::vector<std::byte> bytes(8);
  post(1, 0, bytes);
  ASSERT_EQ(context.demand.at(1).waiting, 1);
  const std::vector<std::byte> payload = pattern(8, 3);
  const FrameBytes header = encode_frame_header(
      {.job_id = kDemandJob, .message_id = 0, .offset = 0, .length = 8, .total = 8});
  asio::write(writer, asio::buffer(header));
  asio::write(writer, asio::buffer(payload));
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (outcomes.empty() && std::chrono::steady_clock::now() < until) {
    context.io.run_one_for(std::chrono::milliseconds(20));
  }
  ASSERT_EQ(outcomes, (std::vector<std::string>{""}));
  EXPECT_EQ(bytes, payload);
  EXPECT_EQ(context.demand.at(1).waiting, 0);
  connection->close("the test ended");
  context.io.restart();
  context.io.poll();
}

}  // namespace
}  // namespace multilane::runtime
