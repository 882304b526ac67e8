// tests/runtime/receive_side_test.cpp — the ReceiveSide's count of the receives that wait for
// each peer's frames (StreamDemand), which the readers of that peer's streams follow (up when a
// receive is posted, down when it completes, whether by a frame or a failure), and where a
// message that arrives before its receive waits.
#include <gtest/gtest.h>
#include <sys/ioctl.h>

#include <asio.hpp>
#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "runtime/loopback.hpp"
#include "runtime/outcome_text.hpp"
#include "runtime/tcp/wire.hpp"
#include "runtime/transport/connection.hpp"
#include "runtime/transport/engine_context.hpp"
#include "runtime/transport/receive_side.hpp"

namespace multilane::runtime {
namespace {

using testing::loopback;
using testing::pattern;

constexpr std::uint64_t kSideJob = 7;

EngineConfig three_ranks() {
  EngineConfig config;
  config.size = 3;
  config.job_id = kSideJob;
  return config;
}

class ReceiveSideTest : public ::testing::Test {
 protected:
  ReceiveSideTest() {
    context.check_signature = [](int, std::uint64_t, std::uint64_t) { return true; };
  }

  // Posts a receive of `bytes` from `peer` as message `id` of point-to-point traffic.
  void post(int peer, std::uint64_t id, std::vector<std::byte>& bytes) {
    RecvRequest request;
    request.peer = peer;
    request.key = {.sequence = 0, .message_id = id};
    request.bytes = bytes;
    side.recv(std::move(request),
              [this](const Outcome& error) { outcomes.push_back(testing::text_of(error)); });
  }

  // Peer 1's connection, adopted as its stream 0; `writer` is the peer's end.
  void connect_peer_1() {
    asio::ip::tcp::acceptor acceptor(context.io, loopback(0));
    writer.connect(acceptor.local_endpoint());
    connection = std::make_shared<Connection>(context.io);
    connection->socket = acceptor.accept();
    side.adopt(connection, 1, 0, 0, /*opened_by_peer=*/true);
  }
  // Message `id` of peer 1 as one frame.
  void send_whole(std::uint64_t id, const std::vector<std::byte>& payload) {
    const FrameBytes header = encode_frame_header({.job_id = kSideJob,
                                                   .message_id = id,
                                                   .offset = 0,
                                                   .length = payload.size(),
                                                   .total = payload.size()});
    asio::write(writer, asio::buffer(header));
    asio::write(writer, asio::buffer(payload));
  }
  // Bytes that arrived on peer 1's connection and were not read yet.
  int unread() {
    int bytes = -1;
    ::ioctl(connection->socket.native_handle(), FIONREAD, &bytes);
    return bytes;
  }
  // Runs the engine's loop until `done` holds (at most 10 s).
  template <typename Pred>
  bool run_until(Pred done) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!done()) {
      if (std::chrono::steady_clock::now() > until) return false;
      context.io.restart();
      context.io.run_one_for(std::chrono::milliseconds(20));
    }
    return true;
  }
  void TearDown() override {
    if (connection) connection->close({ErrorKind::internal, "the test ended"});
    context.io.restart();
    context.io.poll();
  }

  EngineContext context{three_ranks()};
  asio::ip::tcp::socket writer{context.io};
  std::shared_ptr<Connection> connection;
  ReceiveSide side{context};
  std::vector<std::string> outcomes;
};

TEST_F(ReceiveSideTest, CountsEachPeersPostedReceivesUntilTheyFail) {
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

TEST_F(ReceiveSideTest, AReceiveThatAFrameCompletesStopsWaiting) {
  connect_peer_1();
  std::vector<std::byte> bytes(8);
  post(1, 0, bytes);
  ASSERT_EQ(context.demand.at(1).waiting, 1);
  const std::vector<std::byte> payload = pattern(8, 3);
  send_whole(0, payload);
  ASSERT_TRUE(run_until([&] { return !outcomes.empty(); }));
  ASSERT_EQ(outcomes, (std::vector<std::string>{""}));
  EXPECT_EQ(bytes, payload);
  EXPECT_EQ(context.demand.at(1).waiting, 0);
}

TEST_F(ReceiveSideTest, ALargeMessageThatComesEarlyWaitsInTheSocketForItsReceive) {
  // A small early message is read into memory; one above kEarlyWholeMessageMost stays in the
  // socket (nothing after it is read either) until its receive is posted.
  connect_peer_1();
  const std::uint64_t large = ReceiveSide::kEarlyWholeMessageMost + 1;
  const std::vector<std::byte> first = pattern(1000, 4);
  const std::vector<std::byte> second = pattern(large, 5);
  send_whole(0, first);
  send_whole(1, second);
  ASSERT_TRUE(run_until([&] { return unread() > 0 && unread() < static_cast<int>(large); }))
      << "the large message was read before its receive, or the small one was not";
  context.io.restart();
  context.io.run_for(std::chrono::milliseconds(50));
  EXPECT_GE(unread(), static_cast<int>(large) - 4096);  // at most a stage of it was read
  std::vector<std::byte> one(first.size()), two(second.size());
  post(1, 0, one);  // from early memory at once
  EXPECT_EQ(outcomes, (std::vector<std::string>{""}));
  post(1, 1, two);
  ASSERT_TRUE(run_until([&] { return outcomes.size() == 2; }));
  EXPECT_EQ(outcomes[1], "");
  EXPECT_EQ(one, first);
  EXPECT_EQ(two, second);
  EXPECT_EQ(unread(), 0);
}

}  // namespace
}  // namespace multilane::runtime
