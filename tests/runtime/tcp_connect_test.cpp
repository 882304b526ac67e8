// tests/runtime/tcp_connect_test.cpp — the socket settings a connection gets.
#include "runtime/tcp/tcp_connect.hpp"

#include <gtest/gtest.h>

#include <fstream>

namespace multilane::runtime {
namespace {

TEST(SocketBuffer, AWindowWithinTheSystemsLimitIsFixed) {
  EXPECT_EQ(buffer_within_limit(1 << 20, 4 << 20), 1 << 20);
  EXPECT_EQ(buffer_within_limit(1 << 20, 1 << 20), 1 << 20);
}

TEST(SocketBuffer, AWindowAboveTheSystemsLimitIsLeftToAutotuning) {
  EXPECT_EQ(buffer_within_limit(1 << 20, 212992), 0);  // Debian's net.core.wmem_max
}

TEST(SocketBuffer, TheLimitIsTheSmallerOfTheSendAndReceiveMaxima) {
  long long send = 0, receive = 0;
  std::ifstream("/proc/sys/net/core/wmem_max") >> send;
  std::ifstream("/proc/sys/net/core/rmem_max") >> receive;
  EXPECT_EQ(largest_socket_buffer(), std::min(send, receive));
}

}  // namespace
}  // namespace multilane::runtime
