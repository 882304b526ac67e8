// tests/wan/mpwide_compat_test.cpp — an MPWide program (programs/mpwide_ping.cpp) built against
// mpwide_compat.h runs as two processes talking directly and as three with a forwarder
// (MPW_Relay); and the compatibility calls refuse misuse with their reason.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <csignal>
#include <cstdlib>
#include <string>

#include "multilane/mpwide_compat.h"
#include "wan_testing.hpp"

namespace multilane::wan {
namespace {

using ::testing::HasSubstr;
using namespace testing;

std::string program() {
  return binary_dir() + "/mpwide_ping";
}

std::vector<std::string> job_environment(const std::string& secret = kSecret) {
  return {"MULTILANE_SECRET=" + secret, "MULTILANE_JOB_ID=77", "MULTILANE_BIND=127.0.0.1"};
}

void expect_ok(Finished finished, const std::string& role) {
  EXPECT_FALSE(finished.timed_out) << role << ":\n" << finished.output;
  EXPECT_EQ(finished.status, 0) << role << ":\n" << finished.output;
  EXPECT_THAT(finished.output, HasSubstr("mpwide_ping " + role + ": ok"));
}

TEST(MpwideCompat, ProgramRunsBetweenTwoProcesses) {
  const std::string p0 = std::to_string(multilane::testing::loopback_port()),
                    p1 = std::to_string(multilane::testing::loopback_port()),
                    p2 = std::to_string(multilane::testing::loopback_port());
  Subprocess listen({program(), "listen", p0, p1, p2}, job_environment());
  Subprocess connect({program(), "connect", "127.0.0.1", p0, p1, p2}, job_environment());
  expect_ok(connect.wait(), "connect");
  expect_ok(listen.wait(), "listen");
}

TEST(MpwideCompat, ProgramRunsThroughAForwarder) {
  const std::string pa = std::to_string(multilane::testing::loopback_port()),
                    pb = std::to_string(multilane::testing::loopback_port());
  Subprocess forwarder({program(), "forward", pa, pb}, job_environment());
  Subprocess a({program(), "end", "0", "127.0.0.1", pa}, job_environment());
  Subprocess b({program(), "end", "1", "127.0.0.1", pb}, job_environment());
  expect_ok(a.wait(), "end");
  expect_ok(b.wait(), "end");
  expect_ok(forwarder.wait(), "forward");
}

TEST(MpwideCompat, WrongSecretIsRefused) {
  const std::string p0 = std::to_string(multilane::testing::loopback_port()),
                    p1 = std::to_string(multilane::testing::loopback_port()),
                    p2 = std::to_string(multilane::testing::loopback_port());
  Subprocess connect({program(), "connect", "127.0.0.1", p0, p1, p2},
                     job_environment("a secret of some other job"));
  Subprocess listen({program(), "listen", p0, p1, p2}, job_environment());
  const Finished refused = connect.wait();
  EXPECT_EQ(refused.status, 1) << refused.output;
  EXPECT_THAT(refused.output, HasSubstr("MPW_Init: path 0 (to 127.0.0.1:" + p0 + "): handshake"));
  EXPECT_THAT(refused.output, HasSubstr("peer failed authentication (wrong job secret?)"));
  listen.signal(SIGTERM);  // it would wait for a member of its job until its timeout
  listen.wait();
}

TEST(MpwideCompat, MisuseIsReportedNotCrashed) {
  char byte = 0;
  int channel = 0;
  EXPECT_EQ(MPW_Send(&byte, 1, &channel, 1), -1);
  EXPECT_THAT(MPW_LastError(), HasSubstr("MPW_Init has not been called"));
  ::unsetenv("MULTILANE_SECRET");
  const char* hosts[1] = {"127.0.0.1"};
  int ports[1] = {1};
  EXPECT_EQ(MPW_Init(hosts, ports, 1), -1);
  EXPECT_THAT(MPW_LastError(), HasSubstr("MULTILANE_SECRET is not set"));
  EXPECT_EQ(MPW_setChunkSize(0), -1);
  EXPECT_THAT(MPW_LastError(), HasSubstr("the chunk size must be >= 1, got 0"));
  EXPECT_EQ(MPW_NumChannels(), 0);
  EXPECT_EQ(MPW_Finalize(), 0);
}

}  // namespace
}  // namespace multilane::wan
