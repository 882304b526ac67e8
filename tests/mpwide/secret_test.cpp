// tests/mpwide/secret_test.cpp — an unchanged program gets the job's secret from
// MULTILANE_SECRET or ~/.config/multilane/secret (only its owner may read it); without one the
// first connecting call fails saying exactly what to set.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "mpwide_testing.hpp"

namespace multilane::mpwide_testing {
namespace {

class MpwideSecret : public ::testing::Test {
 protected:
  void SetUp() override {
    home = std::filesystem::path(MULTILANE_BINARY_DIR) /
           ("mpwide-secret-home-" + std::to_string(::getpid()));
    std::filesystem::remove_all(home);
    std::filesystem::create_directories(home / ".config" / "multilane");
    ::setenv("HOME", home.c_str(), 1);
    ::unsetenv("MULTILANE_SECRET");
    ::setenv("MULTILANE_BIND", "127.0.0.1", 1);
    ::setenv("MULTILANE_TIMEOUT", "10", 1);
  }
  void TearDown() override {
    MPW_Finalize();
    std::filesystem::remove_all(home);
  }
  void write_secret(const std::string& text, mode_t mode) {
    const auto file = secret_file();
    std::ofstream(file) << text << "\n";
    ::chmod(file.c_str(), mode);
  }
  std::string secret_file() const { return (home / ".config/multilane/secret").string(); }

  std::filesystem::path home;
  int port = multilane::testing::loopback_port();
};

TEST_F(MpwideSecret, WithoutASecretTheFirstCallSaysWhatToSet) {
  EXPECT_EQ(MPW_CreatePath("127.0.0.1", port, 1), -1);
  EXPECT_EQ(std::string(MPW_LastError()),
            "no job secret: set MULTILANE_SECRET to the job's secret (at least 16 characters, "
            "the same at every end), or write it to " +
                secret_file() + " (mode 0600)");
  std::string hosts[1] = {"0"};
  int ports[1] = {port};
  EXPECT_EQ(MPW_Init(hosts, ports, 1), -1);
  EXPECT_THAT(MPW_LastError(), ::testing::StartsWith("no job secret: set MULTILANE_SECRET"));
}

TEST_F(MpwideSecret, AFileOthersMayReadIsRefused) {
  write_secret("a secret in a file for the job", 0644);
  EXPECT_EQ(MPW_CreatePath("127.0.0.1", port, 1), -1);
  EXPECT_EQ(std::string(MPW_LastError()),
            secret_file() + " has mode 0644: others may read the job's secret; run chmod 600 " +
                secret_file());
}

TEST_F(MpwideSecret, AShortSecretIsRefused) {
  ::setenv("MULTILANE_SECRET", "too short", 1);
  EXPECT_EQ(MPW_CreatePath("127.0.0.1", port, 1), -1);
  EXPECT_EQ(std::string(MPW_LastError()),
            "MULTILANE_SECRET has 9 characters, at least 16 are needed");
  ::unsetenv("MULTILANE_SECRET");
  write_secret("short", 0600);
  EXPECT_EQ(MPW_CreatePath("127.0.0.1", port, 1), -1);
  EXPECT_EQ(std::string(MPW_LastError()),
            "the secret in " + secret_file() + " has 5 characters, at least 16 are needed");
}

TEST_F(MpwideSecret, TheFileOfItsOwnerConnectsBothEnds) {
  write_secret("a secret in a file for the job", 0600);
  const auto [server, client] = connected_pair(2, port);
  auto message = pattern(40'000, 1);
  std::vector<char> got(40'000);
  EXPECT_EQ(MPW_Send(message.data(), 40'000, client), 0);
  EXPECT_EQ(MPW_Recv(got.data(), 40'000, server), 0);
  EXPECT_EQ(got, message);
}

TEST_F(MpwideSecret, EndsWithDifferentSecretsDoNotConnect) {
  write_secret("a secret in a file for the job", 0600);
  ::setenv("MULTILANE_TIMEOUT", "2", 1);  // the listener waits that long for its job
  const int server = MPW_CreatePathWithoutConnect("0", port, 1);
  auto listening = in_background([server] { return MPW_ConnectPath(server, true); });
  wait_until_listening({port});
  ::setenv("MULTILANE_SECRET", "the secret of some other job", 1);
  const int client = MPW_CreatePathWithoutConnect("127.0.0.1", port, 1);
  EXPECT_EQ(MPW_ConnectPath(client, false), -1);
  EXPECT_THAT(MPW_LastError(), ::testing::HasSubstr("peer failed authentication"));
  EXPECT_EQ(within(listening), -1);
}

}  // namespace
}  // namespace multilane::mpwide_testing
