// tests/runtime/stream_listener_test.cpp — StreamListener against connections that never
// speak: they do not keep a peer's streams out, and peers that connect at once are each served
// by a call of their own.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "loopback.hpp"
#include "runtime/streams/stream_set.hpp"
#include "stalled_connections.hpp"

namespace multilane::runtime {
namespace {

using namespace std::chrono_literals;

using testing::Stall;
using testing::StalledConnections;

// Two stalled connections come first (silent ones, or ones that stop after their Hello); the
// peer's two streams still pass within the call, while the stalled ones' handshakes go on
// waiting (the listener did not just outlast them).
class StreamListenerStalls : public ::testing::TestWithParam<Stall> {};

TEST_P(StreamListenerStalls, StalledConnectionsDoNotKeepAPeersStreamsOut) {
  StreamOptions options = testing::test_options(2);
  options.timeout = 30s;
  StreamListener listener(testing::loopback(0), options);
  StalledConnections stalled(listener.port(), 2, GetParam(), options.job_id);
  auto connecting = testing::in_background(
      [&] { return connect_streams(testing::loopback(listener.port()), options); });
  StreamSet receiver = listener.accept();
  StreamSet sender = connecting.get();
  stalled.expect_all_open();

  const auto message = testing::pattern(70'000);
  std::vector<std::byte> buffer(message.size());
  auto sending = testing::in_background([&] { sender.send(message); });
  receiver.recv(buffer);
  sending.get();
  EXPECT_EQ(buffer, message);
}

// A listener that goes away ends the handshakes still under way at once (their timeout is 30 s).
TEST_P(StreamListenerStalls, ClosingTheListenerEndsTheHandshakesStillUnderWay) {
  StreamOptions options = testing::test_options(1);
  options.timeout = 30s;
  auto listener = std::make_unique<StreamListener>(testing::loopback(0), options);
  StalledConnections stalled(listener->port(), 1, GetParam(), options.job_id);
  auto connecting = testing::in_background(
      [&] { return connect_streams(testing::loopback(listener->port()), options); });
  StreamSet receiver = listener->accept();
  StreamSet sender = connecting.get();
  stalled.expect_all_open();
  stalled.expect_closed_by([&] { listener.reset(); });
}

INSTANTIATE_TEST_SUITE_P(BeforeAndAfterTheHello, StreamListenerStalls,
                         ::testing::Values(Stall::before_hello, Stall::after_hello),
                         [](const auto& info) {
                           return info.param == Stall::before_hello ? "Silent" : "AfterItsHello";
                         });

// Three peers connect at once, one stream each, and each call serves one of them whole: a
// stream that passed after its call had its streams (a handshake under way in a spare slot)
// waits for the next call.
TEST(StreamListener, PeersThatConnectAtOnceAreServedOneCallEach) {
  const StreamOptions options = testing::test_options(1);
  StreamListener listener(testing::loopback(0), options);
  std::vector<std::future<StreamSet>> peers;
  for (int i = 0; i < 3; ++i) {
    peers.push_back(testing::in_background(
        [&] { return connect_streams(testing::loopback(listener.port()), options); }));
  }
  std::vector<StreamSet> receivers;
  for (int i = 0; i < 3; ++i) receivers.push_back(listener.accept());
  std::vector<StreamSet> senders;
  for (auto& peer : peers) senders.push_back(peer.get());

  // Each sender's message (its index first) arrives whole at exactly one receiver.
  std::vector<std::future<void>> sending;
  std::vector<std::vector<std::byte>> messages;
  for (std::size_t i = 0; i < senders.size(); ++i) {
    messages.push_back(testing::pattern(1000, static_cast<unsigned>(i)));
    messages.back()[0] = static_cast<std::byte>(i);
  }
  for (std::size_t i = 0; i < senders.size(); ++i) {
    sending.push_back(testing::in_background([&, i] { senders[i].send(messages[i]); }));
  }
  std::vector<int> seen(senders.size(), 0);
  for (StreamSet& receiver : receivers) {
    std::vector<std::byte> buffer(1000);
    receiver.recv(buffer);
    const auto from = static_cast<std::size_t>(buffer[0]);
    ASSERT_LT(from, senders.size());
    EXPECT_EQ(buffer, messages[from]);
    ++seen[from];
  }
  for (auto& send : sending) send.get();
  EXPECT_EQ(seen, std::vector<int>(senders.size(), 1));
}

// An accept that fails (no descriptor left) does not end the call: the loop tries again, and the
// timeout names the failure.
TEST(StreamListener, AFailingAcceptIsRetriedAndNamedInTheTimeout) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  // UBSan's type check opens a pipe of its own, which the lowered limit refuses too.
  GTEST_SKIP() << "the sanitizers' runtime needs descriptors of its own";
#endif
  const StreamOptions options = testing::test_options(1);
  StreamListener listener(testing::loopback(0), options);
  asio::io_context io;
  asio::ip::tcp::socket client(io);
  client.connect(testing::loopback(listener.port()));  // waits in the backlog
  // Every descriptor below the limit is in use: the lowest free one is the limit.
  const int lowest_free = ::dup(0);
  ASSERT_GE(lowest_free, 0);
  ::close(lowest_free);
  rlimit original{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &original), 0);
  rlimit lowered = original;
  lowered.rlim_cur = static_cast<rlim_t>(lowest_free);
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &lowered), 0);
  std::vector<StreamListener::Accepted> streams;
  std::string error;
  try {
    listener.accept_streams(io, 1, Clock::now() + 1500ms, {}, streams);
  } catch (const TransportError& e) {
    EXPECT_EQ(e.kind(), ErrorKind::timeout);
    error = e.what();
  }
  setrlimit(RLIMIT_NOFILE, &original);
  EXPECT_EQ(error,
            "timed out after 1.5 s waiting for connection (accepting a connection failed: Too many "
            "open files; retrying)");
  EXPECT_TRUE(streams.empty());
}

}  // namespace
}  // namespace multilane::runtime
