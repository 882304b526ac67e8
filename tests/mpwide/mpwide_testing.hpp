// tests/mpwide/mpwide_testing.hpp — helpers for the MPWide drop-in's tests, all on 127.0.0.1.
//
// Both ends of a path live in the test's process (MPWide allows that; its TestConcurrent does
// it). Every test runs as its own process (gtest_discover_tests), so the drop-in's
// process-wide tables start empty. Waits are bounded by MPW_setTimeout and by std::future
// deadlines.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <future>
#include <initializer_list>
#include <string>
#include <thread>
#include <vector>

#include "multilane/mpwide/MPWide.h"
#include "support/loopback_port.hpp"

namespace multilane::mpwide_testing {

using namespace std::chrono_literals;

inline constexpr const char* kSecret = "the MPWide drop-in tests' secret";

// The job's secret in the environment and short timeouts, so a broken test fails fast.
inline void use_test_job() {
  ::setenv("MULTILANE_SECRET", kSecret, 1);
  ::setenv("MULTILANE_BIND", "127.0.0.1", 1);
  ::unsetenv("MULTILANE_JOB_ID");
  ::setenv("MULTILANE_TIMEOUT", "10", 1);
}

// Bytes whose value depends on the position and the seed, so misplaced parts show.
inline std::vector<char> pattern(std::size_t size, unsigned seed) {
  std::vector<char> bytes(size);
  for (std::size_t i = 0; i < size; ++i) {
    bytes[i] = static_cast<char>((i * 131 + seed * 17 + (i >> 9)) & 0xff);
  }
  return bytes;
}

template <typename Fn>
auto in_background(Fn fn) {
  return std::async(std::launch::async, std::move(fn));
}

// Waits for `f` at most `limit`; a test that would hang fails instead.
template <typename T>
T within(std::future<T>& f, std::chrono::seconds limit = 30s) {
  if (f.wait_for(limit) != std::future_status::ready) {
    ADD_FAILURE() << "no result within " << limit.count() << " s";
    std::abort();  // the thread still refers to the test's frame
  }
  return f.get();
}

// Returns once something listens on each of `ports` of 127.0.0.1 (at most 10 s). A fixed
// sleep is not enough on a loaded machine: a connecting end that finds nothing listening
// listens itself, as MPWide's ends do, and the two ends then wait for each other.
// True once each of `ports` listens; false as soon as ended() says the listening end gave up,
// or after 10 s (a failure).
template <typename Ended>
bool listening_unless(std::initializer_list<int> ports, Ended ended) {
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  for (const int port : ports) {
    while (multilane::testing::can_bind_loopback(static_cast<std::uint16_t>(port))) {
      if (ended()) return false;
      if (std::chrono::steady_clock::now() >= deadline) {
        ADD_FAILURE() << "nothing listens on " << port;
        return false;
      }
      std::this_thread::sleep_for(5ms);
    }
  }
  return true;
}

inline void wait_until_listening(std::initializer_list<int> ports) {
  listening_unless(ports, [] { return false; });
}

// Whether each of `ports` listens (true), or `serving`, the call that binds them, ended first
// (false): it failed, say because another program of this host took a port between its pick
// and the bind (ctest -j). Nothing within 10 s fails the test.
template <typename T>
bool listening_unless_ended(std::initializer_list<int> ports, std::future<T>& serving) {
  return listening_unless(ports, [&] { return serving.wait_for(0s) == std::future_status::ready; });
}

// Two connected paths of `streams` streams in this process: {listening end, connecting end}.
inline std::pair<int, int> connected_pair(int streams, int port) {
  const int server = MPW_CreatePathWithoutConnect("0", port, streams);
  const int client = MPW_CreatePathWithoutConnect("127.0.0.1", port, streams);
  auto listening = in_background([server] { return MPW_ConnectPath(server, true); });
  int status = -1;
  for (int attempt = 0; attempt < 100 && status != 0; ++attempt) {
    std::this_thread::sleep_for(20ms);  // until the server listens
    status = MPW_ConnectPath(client, false);
  }
  EXPECT_EQ(status, 0) << MPW_LastError();
  EXPECT_EQ(within(listening), 0);
  return {server, client};
}

}  // namespace multilane::mpwide_testing
