// tests/mpwide/settings_test.cpp — MPWide's settings and look-ups: DNS, autotuning, pacing,
// chunk sizes, splitting a buffer, channel numbering, listing, finalizing, the timeout.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "mpwide_testing.hpp"

namespace multilane::mpwide_testing {
namespace {

using ::testing::HasSubstr;

TEST(MpwideSettings, DnsResolveGivesTheIpv4AddressOfAName) {
  EXPECT_STREQ(MPW_DNSResolve(std::string("localhost")), "127.0.0.1");
  char numeric[] = "198.18.0.1";
  EXPECT_STREQ(MPW_DNSResolve(numeric), "198.18.0.1");
  char unknown[] = "no-such-host.invalid";
  EXPECT_EQ(MPW_DNSResolve(unknown), nullptr);
}

TEST(MpwideSettings, AutoTuningIsKept) {
  EXPECT_TRUE(MPW_AutoTuning());  // MPWide's default
  MPW_setAutoTuning(false);
  EXPECT_FALSE(MPW_AutoTuning());
  MPW_setAutoTuning(true);
  EXPECT_TRUE(MPW_AutoTuning());
}

TEST(MpwideSettings, PacingRateIsKeptExactly) {
  EXPECT_EQ(MPW_getPacingRate(), 0.0);
  MPW_setPacingRate(10 * 1024 * 1024);
  EXPECT_EQ(MPW_getPacingRate(), 10.0 * 1024 * 1024);
  MPW_setPacingRate(-1);
  EXPECT_EQ(std::string(MPW_LastError()), "the pacing rate must be >= 0, got -1");
  EXPECT_EQ(MPW_getPacingRate(), 10.0 * 1024 * 1024);
}

TEST(MpwideSettings, ChunkSizeRefusesNothingPositive) {
  MPW_setChunkSize(65536, 65536);
  EXPECT_EQ(std::string(MPW_LastError()), "");
  MPW_setChunkSize(0, 65536);
  EXPECT_EQ(std::string(MPW_LastError()), "chunk sizes must be >= 1 byte, got 0 and 65536");
}

TEST(MpwideSettings, SplitBufCutsEvenPartsFirstOnesLonger) {
  char buf[] = "aaabbbcccdddeeefffg";
  char* parts[6];
  long long sizes[6];
  MPW_splitBuf(buf, 19, 6, parts, sizes);
  const long long expected[6] = {4, 3, 3, 3, 3, 3};
  long long offset = 0;
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(sizes[i], expected[i]);
    EXPECT_EQ(parts[i], buf + offset);
    offset += sizes[i];
  }
  MPW_splitBuf(buf, 19, 0, parts, sizes);
  EXPECT_EQ(std::string(MPW_LastError()), "needs at least one chunk, got 0");
}

TEST(MpwideSettings, ChannelNumbersAreTakenInRunsAndReused) {
  use_test_job();
  EXPECT_EQ(MPW_NumChannels(), 0);
  EXPECT_EQ(MPW_CreatePathWithoutConnect("127.0.0.1", 20000, 4), 0);  // channels 0..3
  EXPECT_EQ(MPW_CreatePathWithoutConnect("127.0.0.1", 20010, 2), 1);  // channels 4..5
  EXPECT_EQ(MPW_NumChannels(), 6);
  EXPECT_EQ(MPW_DestroyPath(0), 0);
  EXPECT_EQ(MPW_NumChannels(), 6);
  EXPECT_EQ(MPW_CreatePathWithoutConnect("127.0.0.1", 20020, 3), 0);  // reuses 0..2
  EXPECT_EQ(MPW_CreatePathWithoutConnect("127.0.0.1", 20030, 2), 2);  // 6..7: 3 is alone
  EXPECT_EQ(MPW_NumChannels(), 8);
  ::testing::internal::CaptureStderr();
  MPW_Print();
  const std::string listing = ::testing::internal::GetCapturedStderr();
  EXPECT_THAT(listing, HasSubstr("MPWide connection stream #: 4\nMPWide base connection "
                                 "port:20010\nMPWide remote_url:127.0.0.1\n"));
  EXPECT_EQ(MPW_Finalize(), 1);
  EXPECT_EQ(MPW_NumChannels(), 0);
}

TEST(MpwideSettings, MultilaneTimeoutSetsTheTimeoutOfAnUnchangedProgram) {
  use_test_job();
  ::setenv("MULTILANE_TIMEOUT", "soon", 1);
  MPW_CreatePathWithoutConnect("0", multilane::testing::loopback_port(), 1);
  EXPECT_EQ(MPW_ConnectPath(0, true), -1);
  EXPECT_THAT(MPW_LastError(), ::testing::StartsWith("MULTILANE_TIMEOUT=soon: "));
  MPW_Finalize();
}

TEST(MpwideSettings, TimeoutMustBePositive) {
  EXPECT_EQ(MPW_setTimeout(0), -1);
  EXPECT_EQ(std::string(MPW_LastError()), "the timeout must be > 0 s, got 0");
  EXPECT_EQ(MPW_setTimeout(0.5), 0);
}

}  // namespace
}  // namespace multilane::mpwide_testing
