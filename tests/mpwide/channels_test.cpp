// tests/mpwide/channels_test.cpp — MPWide's MPW_Init channels: the exchanges over lists of
// channels (split evenly, part i on channel i), cycles, the p-variant, barriers, the C entry
// points, and MPW_Relay forwarding between two ends (MPWide's Forwarder) in a child process.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstring>

#include "mpwide_testing.hpp"

namespace multilane::mpwide_testing {
namespace {

class MpwideChannels : public ::testing::Test {
 protected:
  void SetUp() override { use_test_job(); }
  void TearDown() override { MPW_Finalize(); }
};

// Channels 0..2 listen (the first MPW_Init), 3..5 connect to them (the second). A port taken
// between its pick and MPW_Init's bind fails that MPW_Init at once: then on fresh ports.
void open_three_pairs() {
  static int ports[3];
  static std::string listening[3] = {"0", "0", "0"};
  std::future<int> serving;
  for (int attempt = 1;; ++attempt) {
    for (int& p : ports) p = multilane::testing::loopback_port();
    serving = in_background([] { return MPW_Init(listening, ports, 3); });
    if (listening_unless_ended({ports[0], ports[1], ports[2]}, serving)) break;
    ASSERT_EQ(within(serving), -1);
    ASSERT_LT(attempt, 5) << "no three free ports in five attempts";
    MPW_Finalize();
  }
  std::string hosts[3] = {"127.0.0.1", "127.0.0.1", "127.0.0.1"};
  ASSERT_EQ(MPW_Init(hosts, ports, 3), 0) << MPW_LastError();
  ASSERT_EQ(within(serving), 0);
  ASSERT_EQ(MPW_NumChannels(), 6);
}

int a[3] = {0, 1, 2}, b[3] = {3, 4, 5};

TEST_F(MpwideChannels, SendSplitsEvenlyPartIOnChannelI) {
  open_three_pairs();
  // 10 bytes over 3 channels: parts of 4, 3 and 3.
  auto message = pattern(10, 1);
  MPW_Send(message.data(), 10, b, 3);
  std::vector<char> first(4), rest(6);
  int channel0[1] = {0}, channels12[2] = {1, 2};
  MPW_Recv(first.data(), 4, channel0, 1);
  MPW_Recv(rest.data(), 6, channels12, 2);
  EXPECT_TRUE(std::equal(first.begin(), first.end(), message.begin()));
  EXPECT_TRUE(std::equal(rest.begin(), rest.end(), message.begin() + 4));
}

TEST_F(MpwideChannels, SendRecvMovesExactBytesBothWays) {
  open_three_pairs();
  const std::size_t size = 1'000'003;
  auto ab = pattern(size, 2), ba = pattern(size, 3);
  std::vector<char> at_a(size), at_b(size);
  auto other =
      in_background([&] { return MPW_SendRecv(ba.data(), size, at_b.data(), size, b, 3); });
  EXPECT_EQ(MPW_SendRecv(ab.data(), size, at_a.data(), size, a, 3), 0);
  EXPECT_EQ(within(other), 0);
  EXPECT_EQ(at_a, ba);
  EXPECT_EQ(at_b, ab);
  // The C entry point of the same call.
  auto other_c = in_background([&] {
    MPW_SendRecv_c(ab.data(), 1000, at_b.data(), 999, b, 3);
    return 0;
  });
  MPW_SendRecv_c(ba.data(), 999, at_a.data(), 1000, a, 3);
  within(other_c);
  EXPECT_TRUE(std::equal(ab.begin(), ab.begin() + 1000, at_a.begin()));
  EXPECT_TRUE(std::equal(ba.begin(), ba.begin() + 999, at_b.begin()));
}

TEST_F(MpwideChannels, DSendRecvReturnsTheMessageSizeMergedInPlace) {
  open_three_pairs();
  const std::size_t size = 1'000'003;
  auto big = pattern(size, 4), small = pattern(17, 5);
  std::vector<char> at_a(2'000'000), at_b(100);
  auto other =
      in_background([&] { return MPW_DSendRecv(small.data(), 17, at_b.data(), 100, b, 3); });
  EXPECT_EQ(MPW_DSendRecv(big.data(), 0, at_a.data(), 2'000'000, a, 3), 17LL);
  EXPECT_EQ(within(other), 0LL);  // a sent nothing
  EXPECT_TRUE(std::equal(small.begin(), small.end(), at_a.begin()));
  auto again =
      in_background([&] { return MPW_DSendRecv(nullptr, 0, at_a.data(), 2'000'000, a, 3); });
  EXPECT_EQ(MPW_DSendRecv(big.data(), size, at_b.data(), 100, b, 3), 0LL);
  EXPECT_EQ(within(again), static_cast<long long>(size));
  EXPECT_TRUE(std::equal(big.begin(), big.end(), at_a.begin()));
}

TEST_F(MpwideChannels, CycleSendsOnOneSetWhileReceivingOnAnother) {
  open_three_pairs();
  // a sends on channel 0 and receives on 1..2; b the other way round.
  int a_send[1] = {0}, a_recv[2] = {1, 2}, b_recv[1] = {3}, b_send[2] = {4, 5};
  auto to_b = pattern(5000, 6), to_a = pattern(7001, 7);
  std::vector<char> at_a(7001), at_b(5000);
  auto other = in_background([&] {
    MPW_Cycle(to_a.data(), 7001, at_b.data(), 5000, b_send, 2, b_recv, 1);
    return 0;
  });
  MPW_Cycle(to_b.data(), 5000, at_a.data(), 7001, a_send, 1, a_recv, 2);
  within(other);
  EXPECT_EQ(at_a, to_a);
  EXPECT_EQ(at_b, to_b);
  std::vector<char> limit(10'000);
  auto dynamic = in_background(
      [&] { return MPW_DCycle(to_a.data(), 7001, at_b.data(), 5000, b_send, 2, b_recv, 1); });
  EXPECT_EQ(MPW_DCycle(to_b.data(), 123, limit.data(), 10'000, a_send, 1, a_recv, 2), 7001LL);
  EXPECT_EQ(within(dynamic), 123LL);
  EXPECT_TRUE(std::equal(to_a.begin(), to_a.end(), limit.begin()));
}

TEST_F(MpwideChannels, PSendRecvMovesOneBufferPerChannel) {
  open_three_pairs();
  auto p0 = pattern(10, 8), p1 = pattern(0, 9), p2 = pattern(300'000, 10);
  char* out[3] = {p0.data(), p1.data(), p2.data()};
  long long out_sizes[3] = {10, 0, 300'000};
  std::vector<char> q0(10), q1(1), q2(300'000);
  char* in[3] = {q0.data(), q1.data(), q2.data()};
  long long in_sizes[3] = {10, 0, 300'000};
  char* none[3] = {nullptr, nullptr, nullptr};
  long long zero[3] = {0, 0, 0};
  auto other = in_background([&] { return MPW_PSendRecv(out, out_sizes, none, zero, b, 3); });
  MPW_PSendRecv_c(none, zero, in, in_sizes, a, 3);
  EXPECT_EQ(within(other), 0);
  EXPECT_EQ(q0, p0);
  EXPECT_EQ(q2, p2);
}

TEST_F(MpwideChannels, BarrierReturnsOnceBothEndsCalledIt) {
  open_three_pairs();
  std::atomic<bool> second_called{false};
  auto first = in_background([&] {
    MPW_Barrier(1);
    return second_called.load();
  });
  std::this_thread::sleep_for(200ms);
  second_called = true;
  MPW_Barrier(4);
  EXPECT_TRUE(within(first));
}

TEST_F(MpwideChannels, InitOfOneChannelAndTheCEntryPoints) {
  const int port = multilane::testing::loopback_port();
  auto serving = in_background([port] { return MPW_Init1_c(const_cast<char*>("0"), port); });
  wait_until_listening({port});
  char host[] = "localhost";
  char* hosts[1] = {host};
  int ports[1] = {port};
  ASSERT_EQ(MPW_Init_c(hosts, ports, 1), 0) << MPW_LastError();
  ASSERT_EQ(within(serving), 0);
  int zero[1] = {0}, one[1] = {1};
  auto message = pattern(64, 11);
  std::vector<char> got(64);
  MPW_Send(message.data(), 64, one, 1);
  MPW_Recv(got.data(), 64, zero, 1);
  EXPECT_EQ(got, message);
}

TEST_F(MpwideChannels, MisuseIsReportedWithItsCause) {
  int ports[1] = {multilane::testing::loopback_port()};
  int client_ports[1] = {5000};
  std::string hosts[1] = {"0"};
  EXPECT_EQ(MPW_Init(hosts, ports, client_ports, 1), -1);
  EXPECT_EQ(std::string(MPW_LastError()),
            "client_side_ports[0] = 5000: binding the connecting end to a port is not offered "
            "(pass -1; multilane connects from any port)");
  EXPECT_EQ(MPW_Init(hosts, ports, 0), -1);
  EXPECT_EQ(std::string(MPW_LastError()), "needs at least one host and port, got 0");
  int channel[1] = {0};
  char byte = 0;
  EXPECT_EQ(MPW_SendRecv(&byte, 1, &byte, 1, channel, 1), -1);
  EXPECT_EQ(std::string(MPW_LastError()), "channel 0 does not exist (no channels yet)");
  EXPECT_EQ(MPW_SendRecv(&byte, 1, &byte, 1, nullptr, 1), -1);
  EXPECT_EQ(std::string(MPW_LastError()),
            "needs at least one channel, got 1 (the channel list is NULL)");
}

TEST(MpwideChannelsDeath, AFailingVoidCallEndsTheProcessNamingTheCause) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  int channel[1] = {3};
  char byte = 0;
  EXPECT_EXIT(MPW_Send(&byte, 1, channel, 1), ::testing::ExitedWithCode(1),
              "MPW_Send: channel 3 does not exist \\(no channels yet\\)");
  EXPECT_EXIT(MPW_Barrier(0), ::testing::ExitedWithCode(1),
              "MPW_Barrier: channel 0 does not exist");
}

// MPWide's Forwarder: a child process relays between its channels 0 and 1; this process's two
// channels reach each other only through it.
TEST_F(MpwideChannels, RelayForwardsBetweenTwoEndsUntilOneEnds) {
  const int pa = multilane::testing::loopback_port(), pb = multilane::testing::loopback_port();
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::string listening[2] = {"0", "0"};
    int ports[2] = {pa, pb};
    if (MPW_Init(listening, ports, 2) != 0) ::_exit(2);
    int from[1] = {0}, to[1] = {1};
    MPW_Relay(from, to, 1);
    MPW_Finalize();
    ::_exit(0);
  }
  std::this_thread::sleep_for(500ms);  // the forwarder listens by now
  std::string hosts[2] = {"127.0.0.1", "127.0.0.1"};
  int ports[2] = {pa, pb};
  ASSERT_EQ(MPW_Init(hosts, ports, 2), 0) << MPW_LastError();
  int end_a[1] = {0}, end_b[1] = {1};
  auto there = pattern(2'000'000, 12), back = pattern(33, 13);
  std::vector<char> got_there(2'000'000), got_back(33);
  MPW_Cycle(there.data(), 2'000'000, got_there.data(), 2'000'000, end_a, 1, end_b, 1);
  MPW_Cycle(back.data(), 33, got_back.data(), 33, end_b, 1, end_a, 1);
  EXPECT_EQ(got_there, there);
  EXPECT_EQ(got_back, back);
  EXPECT_EQ(MPW_Finalize(), 1);  // the relay sees the end and returns
  int status = -1;
  for (int i = 0; i < 200 && ::waitpid(child, &status, WNOHANG) == 0; ++i) {
    std::this_thread::sleep_for(50ms);
  }
  if (!WIFEXITED(status)) ::kill(child, SIGKILL), ::waitpid(child, &status, 0);
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace multilane::mpwide_testing
