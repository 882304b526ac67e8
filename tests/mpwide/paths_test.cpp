// tests/mpwide/paths_test.cpp — MPWide's path calls: creating and connecting paths, exact
// bytes both ways, dynamic sizes, one thread sending while another receives, non-blocking
// exchanges, and failures (nothing listening, a dead peer, a silent peer) as errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>

#include "mpwide_testing.hpp"
#include "runtime/tcp/auth.hpp"
#include "wan/relay_server.hpp"

namespace multilane::mpwide_testing {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;

class MpwidePaths : public ::testing::Test {
 protected:
  void SetUp() override { use_test_job(); }
  void TearDown() override { MPW_Finalize(); }
  int port = multilane::testing::loopback_port();
};

TEST_F(MpwidePaths, SendRecvMovesExactBytesBothWaysOverFourStreams) {
  const auto [server, client] = connected_pair(4, port);
  EXPECT_EQ(server, 0);
  EXPECT_EQ(client, 1);
  EXPECT_EQ(MPW_NumChannels(), 8);  // 4 streams each, numbered 0..3 and 4..7

  const std::size_t size = 3 * 1024 * 1024 + 7;  // striped, odd size
  auto to_client = pattern(size, 1), to_server = pattern(size, 2);
  std::vector<char> at_client(size), at_server(size);
  auto serving = in_background([&, server = server] {
    return MPW_SendRecv(to_client.data(), size, at_server.data(), size, server);
  });
  EXPECT_EQ(MPW_SendRecv(to_server.data(), size, at_client.data(), size, client), 0);
  EXPECT_EQ(within(serving), 0);
  EXPECT_EQ(at_client, to_client);
  EXPECT_EQ(at_server, to_server);
}

TEST_F(MpwidePaths, SendAndRecvMatchMessageForMessage) {
  const auto [server, client] = connected_pair(2, port);
  auto header = pattern(256, 3), body = pattern(100'000, 4);
  EXPECT_EQ(MPW_Send(header.data(), 256, client), 0);
  EXPECT_EQ(MPW_Send(body.data(), 100'000, client), 0);
  std::vector<char> got_header(256), got_body(100'000);
  EXPECT_EQ(MPW_Recv(got_header.data(), 256, server), 0);
  EXPECT_EQ(MPW_Recv(got_body.data(), 100'000, server), 0);
  EXPECT_EQ(got_header, header);
  EXPECT_EQ(got_body, body);
}

TEST_F(MpwidePaths, SizeZeroMovesNothingThatWay) {
  const auto [server, client] = connected_pair(1, port);
  auto message = pattern(1000, 5);
  std::vector<char> got(1000);
  // MPWTest's pattern: one end only sends, the other only receives.
  EXPECT_EQ(MPW_SendRecv(message.data(), 1000, nullptr, 0, client), 0);
  EXPECT_EQ(MPW_SendRecv(nullptr, 0, got.data(), 1000, server), 0);
  EXPECT_EQ(got, message);
}

TEST_F(MpwidePaths, DSendRecvReturnsTheReceivedSize) {
  const auto [server, client] = connected_pair(3, port);
  auto big = pattern(200'001, 6), small = pattern(10, 7);
  std::vector<char> at_server(300'000), at_client(50);
  auto serving = in_background([&, server = server] {
    return MPW_DSendRecv(small.data(), 10, at_server.data(), 300'000, server);
  });
  EXPECT_EQ(MPW_DSendRecv(big.data(), 200'001, at_client.data(), 50, client), 10);
  EXPECT_EQ(within(serving), 200'001);
  EXPECT_TRUE(std::equal(big.begin(), big.end(), at_server.begin()));
  EXPECT_TRUE(std::equal(small.begin(), small.end(), at_client.begin()));
}

TEST_F(MpwidePaths, DSendRecvRefusesAMessageLargerThanTheLimit) {
  const auto [server, client] = connected_pair(1, port);
  auto big = pattern(100, 8);
  std::vector<char> at_server(10), at_client(10);
  auto serving = in_background(
      [&, server = server] { return MPW_DSendRecv(nullptr, 0, at_server.data(), 10, server); });
  MPW_DSendRecv(big.data(), 100, at_client.data(), 10, client);
  EXPECT_EQ(within(serving), -1);
}

// TestConcurrent's pattern: one thread sends on a path while another receives on it, and the
// peer alternates; with one call at a time on the path this deadlocks.
TEST_F(MpwidePaths, OneThreadSendsWhileAnotherReceivesOnThePath) {
  const auto [server, client] = connected_pair(2, port);
  constexpr int kRounds = 20;
  const std::size_t size = 64 * 1024;
  auto peer = in_background([&, client = client] {
    std::vector<char> buf(size);
    for (int i = 0; i < kRounds; ++i) {
      if (MPW_SendRecv(nullptr, 0, buf.data(), size, client) != 0) return i;
      if (buf != pattern(size, 100 + i)) return i;
      auto reply = pattern(size, 200 + i);
      if (MPW_SendRecv(reply.data(), size, nullptr, 0, client) != 0) return i;
    }
    return kRounds;
  });
  auto receiving = in_background([&, server = server] {
    std::vector<char> buf(size);
    for (int i = 0; i < kRounds; ++i) {
      if (MPW_SendRecv(nullptr, 0, buf.data(), size, server) != 0) return i;
      if (buf != pattern(size, 200 + i)) return i;
    }
    return kRounds;
  });
  for (int i = 0; i < kRounds; ++i) {
    auto message = pattern(size, 100 + i);
    ASSERT_EQ(MPW_SendRecv(message.data(), size, nullptr, 0, server), 0) << MPW_LastError();
  }
  EXPECT_EQ(within(peer), kRounds);
  EXPECT_EQ(within(receiving), kRounds);
}

TEST_F(MpwidePaths, NonBlockingExchangeFinishesAndWaitReturns) {
  const auto [server, client] = connected_pair(2, port);
  auto message = pattern(500'000, 9);
  std::vector<char> got(500'000);
  const int receiving = MPW_ISendRecv(nullptr, 0, got.data(), 500'000, server);
  ASSERT_GE(receiving, 0) << MPW_LastError();
  EXPECT_FALSE(MPW_Has_NBE_Finished(receiving));  // nothing was sent yet
  const int sending = MPW_ISendRecv(message.data(), 500'000, nullptr, 0, client);
  ASSERT_GE(sending, 0);
  EXPECT_NE(sending, receiving);
  MPW_Wait(sending);
  MPW_Wait(receiving);
  EXPECT_EQ(got, message);
  EXPECT_TRUE(MPW_Has_NBE_Finished(receiving));  // unknown now: reported, nothing to wait for
  EXPECT_EQ(std::string(MPW_LastError()),
            "no non-blocking exchange " + std::to_string(receiving) + " is pending");
}

TEST_F(MpwidePaths, CreatePathOnBothEndsListensFirstThenConnects) {
  // mpw-cp's pattern: both ends call MPW_CreatePath with the other's host.
  auto first = in_background([this] { return MPW_CreatePath("127.0.0.1", port, 2); });
  std::this_thread::sleep_for(1500ms);  // the first found nobody and listens by now
  const int second = MPW_CreatePath("127.0.0.1", port, 2);
  ASSERT_EQ(second, 1) << MPW_LastError();
  const int first_path = within(first);
  ASSERT_EQ(first_path, 0);
  auto message = pattern(70'000, 10);
  std::vector<char> got(70'000);
  EXPECT_EQ(MPW_Send(message.data(), 70'000, second), 0);
  EXPECT_EQ(MPW_Recv(got.data(), 70'000, first_path), 0);
  EXPECT_EQ(got, message);
}

TEST_F(MpwidePaths, ConnectWithoutServerWaitFailsWhenNothingListens) {
  const int path = MPW_CreatePathWithoutConnect("127.0.0.1", port, 1);
  ASSERT_EQ(path, 0);
  EXPECT_EQ(MPW_ConnectPath(path, false), -1);
  EXPECT_EQ(std::string(MPW_LastError()), "nothing listens on 127.0.0.1:" + std::to_string(port) +
                                              " (start the serving end first)");
  EXPECT_EQ(MPW_DestroyPath(path), 0);
  EXPECT_EQ(MPW_NumChannels(), 0);
}

TEST_F(MpwidePaths, ADeadPeerIsAnErrorNotAHang) {
  const auto [server, client] = connected_pair(2, port);
  EXPECT_EQ(MPW_DestroyPath(client), 0);  // the peer goes away
  std::vector<char> buf(1000);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(MPW_Recv(buf.data(), 1000, server), -1);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  EXPECT_THAT(MPW_LastError(), MatchesRegex("path 0: .*"));
}

TEST_F(MpwidePaths, ASilentPeerTimesOut) {
  // What an unchanged program sets (MPW_setTimeout is multilane's own call).
  ::setenv("MULTILANE_TIMEOUT", "1", 1);
  const auto [server, client] = connected_pair(1, port);
  std::vector<char> buf(1000);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(MPW_Recv(buf.data(), 1000, server), -1);
  const auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_GE(waited, 900ms);
  EXPECT_LT(waited, 5s);
  EXPECT_THAT(MPW_LastError(), HasSubstr("timed out after 1 s"));
  (void)client;
}

TEST_F(MpwidePaths, MisuseIsReportedWithItsCause) {
  char byte = 0;
  EXPECT_EQ(MPW_Send(&byte, 1, 7), -1);
  EXPECT_EQ(std::string(MPW_LastError()), "path 7 does not exist");
  EXPECT_EQ(MPW_CreatePathWithoutConnect("127.0.0.1", port, 0), -1);
  EXPECT_EQ(std::string(MPW_LastError()), "a path has 1..1024 streams, got 0");
  EXPECT_EQ(MPW_CreatePathWithoutConnect("127.0.0.1", 70000, 1), -1);
  EXPECT_EQ(std::string(MPW_LastError()), "port 70000 is not 1..65535");
  const int path = MPW_CreatePathWithoutConnect("127.0.0.1", port, 1);
  EXPECT_EQ(MPW_Send(&byte, 1, path), -1);
  EXPECT_EQ(std::string(MPW_LastError()), "path 0 is not connected (MPW_ConnectPath first)");
  EXPECT_EQ(MPW_ISendRecv(&byte, 1, nullptr, 0, path), -1);
  EXPECT_EQ(MPW_Send(&byte, -1, path), -1);
  EXPECT_EQ(std::string(MPW_LastError()), "the send size must not be negative, got -1");
  EXPECT_EQ(MPW_DestroyPath(path), 0);
  EXPECT_EQ(MPW_DestroyPath(path), -1);
  EXPECT_EQ(std::string(MPW_LastError()), "path 0 does not exist");
  EXPECT_EQ(MPW_CreatePathWithoutConnect("no-such-host.invalid", port, 1), 0);
  EXPECT_EQ(MPW_ConnectPath(0, true), -1);
  EXPECT_EQ(std::string(MPW_LastError()), "cannot resolve host \"no-such-host.invalid\"");
}

TEST_F(MpwidePaths, ChannelCallsOnAllStreamsOfAPathUseThePath) {
  const auto [server, client] = connected_pair(3, port);
  int server_streams[3] = {0, 1, 2};
  int client_streams[3] = {3, 4, 5};
  auto message = pattern(90'001, 11);
  std::vector<char> got(90'001);
  MPW_Send(message.data(), 90'001, client_streams, 3);
  MPW_Recv(got.data(), 90'001, server_streams, 3);
  EXPECT_EQ(got, message);
  int part[2] = {0, 1};
  EXPECT_EQ(MPW_SendRecv(message.data(), 10, nullptr, 0, part, 2), -1);
  EXPECT_EQ(std::string(MPW_LastError()),
            "channel 0 is a stream of path 0 (channels 0..2): a call on a path's streams takes "
            "all of them, in order");
  (void)server;
  (void)client;
}

TEST_F(MpwidePaths, BarrierOnAStreamOfAPathMeetsThePeer) {
  const auto [server, client] = connected_pair(2, port);
  std::atomic<bool> met{false};
  auto waiting = in_background([&] {
    MPW_Barrier(0);
    return met.load();
  });
  std::this_thread::sleep_for(200ms);
  met = true;
  MPW_Barrier(2);
  EXPECT_TRUE(within(waiting));  // returned only after the peer called it
  (void)server;
  (void)client;
}

TEST_F(MpwidePaths, WindowsAreKeptForAPathThatConnectsLater) {
  const int path = MPW_CreatePathWithoutConnect("127.0.0.1", port, 4);
  MPW_setWin(0, 262144);
  MPW_setPathWin(path, 262144);
  EXPECT_EQ(std::string(MPW_LastError()), "");
  MPW_setWin(9, 262144);
  EXPECT_EQ(std::string(MPW_LastError()), "channel 9 does not exist (channels 0..3)");
  MPW_setPathWin(path, -1);
  EXPECT_EQ(std::string(MPW_LastError()), "the window must be >= 0 bytes, got -1");
}

TEST_F(MpwidePaths, CloseChannelsEndsThePathForThePeer) {
  const auto [server, client] = connected_pair(2, port);
  int stream[1] = {2};  // a stream of the client's path
  MPW_CloseChannels(stream, 1);
  char byte = 0;
  EXPECT_EQ(MPW_Send(&byte, 1, client), -1);
  EXPECT_EQ(std::string(MPW_LastError()), "path 1 is not connected (MPW_ConnectPath first)");
  EXPECT_EQ(MPW_Recv(&byte, 1, server), -1);
}

// The C entry points of MPWide's Python bindings for paths.
TEST_F(MpwidePaths, CEntryPointsCreateAPathAndExchangeOnIt) {
  char listen_only[] = "0";
  auto serving = in_background([&] { return MPW_CreatePath_c(listen_only, port, 2); });
  wait_until_listening({port});
  char host[] = "127.0.0.1";
  const int client = MPW_CreatePath_c(host, port, 2);
  ASSERT_EQ(client, 1) << MPW_LastError();
  const int server = within(serving);
  ASSERT_EQ(server, 0);
  auto there = pattern(100'001, 30), back = pattern(7, 31);
  std::vector<char> got_there(100'001), got_back(7);
  auto replying = in_background([&] {
    MPW_SendRecv1_c(back.data(), 7, got_there.data(), 100'001, server);
    return 0;
  });
  MPW_SendRecv1_c(there.data(), 100'001, got_back.data(), 7, client);
  within(replying);
  EXPECT_EQ(got_there, there);
  EXPECT_EQ(got_back, back);
}

// `multilane relay --forward` as MPWide's Forwarder: the client's path of 4 streams goes to the
// relay, which the program takes for its peer.
TEST_F(MpwidePaths, APathGoesThroughMultilaneRelayInForwardMode) {
  multilane::wan::RelayServerOptions options;
  options.gate.listen = {asio::ip::make_address("127.0.0.1"), 0};
  options.gate.secret = multilane::runtime::JobSecret::from_text(kSecret);
  options.forward_to = asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), port);
  multilane::wan::RelayServer relay(options, nullptr);
  std::thread relaying([&] { relay.run(); });
  const int server = MPW_CreatePathWithoutConnect("0", port, 4);
  auto listening = in_background([server] { return MPW_ConnectPath(server, true); });
  std::this_thread::sleep_for(200ms);
  const int client = MPW_CreatePath("127.0.0.1", relay.port(), 4);
  ASSERT_EQ(client, 1) << MPW_LastError();
  EXPECT_EQ(within(listening), 0);
  const std::size_t size = 2'000'003;
  auto there = pattern(size, 20), back = pattern(size, 21);
  std::vector<char> got_there(size), got_back(size);
  auto serving = in_background([&, server = server] {
    return MPW_SendRecv(back.data(), size, got_there.data(), size, server);
  });
  EXPECT_EQ(MPW_SendRecv(there.data(), size, got_back.data(), size, client), 0);
  EXPECT_EQ(within(serving), 0);
  EXPECT_EQ(got_there, there);
  EXPECT_EQ(got_back, back);
  MPW_Finalize();
  relay.stop();
  relaying.join();
  EXPECT_EQ(relay.stats().forwarded, 4u);
}

}  // namespace
}  // namespace multilane::mpwide_testing
