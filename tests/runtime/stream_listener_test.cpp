// tests/runtime/stream_listener_test.cpp — StreamListener against connections that never
// speak: they do not keep a peer's streams out, and peers that connect at once are each served
// by a call of their own.
#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "loopback.hpp"
#include "runtime/streams/stream_set.hpp"

namespace multilane::runtime {
namespace {

using namespace std::chrono_literals;

// Connections that connect and then say nothing, as a port scanner's do.
struct SilentConnections {
  SilentConnections(std::uint16_t port, std::size_t count) {
    for (std::size_t i = 0; i < count; ++i) {
      sockets.emplace_back(io).connect(testing::loopback(port));
    }
  }
  // True while the listener has not closed the connection (its handshake still waits; what
  // the listener sent, its Hello, is read and dropped).
  bool still_open(std::size_t i) {
    sockets[i].non_blocking(true);
    std::array<std::byte, 256> bytes{};
    asio::error_code error;
    while (!error) sockets[i].read_some(asio::buffer(bytes), error);
    return error == asio::error::would_block;
  }
  // True once the listener closed it (it waits up to `limit` for that).
  bool closed_within(std::size_t i, std::chrono::milliseconds limit) {
    const auto give_up = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < give_up) {
      if (!still_open(i)) return true;
      std::this_thread::sleep_for(5ms);
    }
    return false;
  }
  asio::io_context io;
  std::vector<asio::ip::tcp::socket> sockets;
};

// Two silent connections come first; the peer's two streams still pass within the call, while
// the silent ones' handshakes go on waiting (the listener did not just outlast them).
TEST(StreamListener, SilentConnectionsDoNotKeepAPeersStreamsOut) {
  StreamOptions options = testing::test_options(2);
  options.timeout = 30s;
  StreamListener listener(testing::loopback(0), options);
  SilentConnections silent(listener.port(), 2);
  auto connecting = testing::in_background(
      [&] { return connect_streams(testing::loopback(listener.port()), options); });
  StreamSet receiver = listener.accept();
  StreamSet sender = connecting.get();
  EXPECT_TRUE(silent.still_open(0));
  EXPECT_TRUE(silent.still_open(1));

  const auto message = testing::pattern(70'000);
  std::vector<std::byte> buffer(message.size());
  auto sending = testing::in_background([&] { sender.send(message); });
  receiver.recv(buffer);
  sending.get();
  EXPECT_EQ(buffer, message);
}

// A listener that goes away ends the handshakes still under way at once.
TEST(StreamListener, ClosingTheListenerEndsTheHandshakesStillUnderWay) {
  StreamOptions options = testing::test_options(1);
  options.timeout = 30s;
  auto listener = std::make_unique<StreamListener>(testing::loopback(0), options);
  SilentConnections silent(listener->port(), 1);
  auto connecting = testing::in_background(
      [&] { return connect_streams(testing::loopback(listener->port()), options); });
  StreamSet receiver = listener->accept();
  StreamSet sender = connecting.get();
  ASSERT_TRUE(silent.still_open(0));
  listener.reset();
  EXPECT_TRUE(silent.closed_within(0, 5s));
}

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

}  // namespace
}  // namespace multilane::runtime
