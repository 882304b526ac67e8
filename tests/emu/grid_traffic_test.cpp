// tests/emu/grid_traffic_test.cpp — kernel TCP on emulated grids with iperf3 (skipped without
// root or iperf3): lane shaping, and the window-limited WAN of the broadcast paper's figure 6
// at a scaled-down rate — one stream gets about window/RTT, sixteen fill the WAN.
//
// `Traffic` asserts what a loaded machine cannot break: no lane or WAN carries more than its
// rate, one stream stays under its window's share, sixteen move several times what one does.
// The floors (a lane reaches most of its rate, sixteen streams fill the WAN) need the CPU to
// themselves: `TrafficSpeed`, in ctest's `perf` label, outside `make test` (`make test-perf`).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include <nlohmann/json.hpp>
#include <thread>

#include "grid_fixture.hpp"

namespace multilane::emu::testing {
namespace {

using namespace std::chrono_literals;

constexpr double kLane = 100e6;  // bits per second
constexpr double kWan = 100e6;

class Traffic : public Grid {
 protected:
  void SetUp() override {
    Grid::SetUp();
    if (IsSkipped()) return;
    if (run_command({"sh", "-c", "command -v iperf3"}).status != 0) {
      name_.clear();
      GTEST_SKIP() << "iperf3 is not installed";
    }
  }

  // A 200 Mbit/s lane pair and a 100 Mbit/s WAN with a 20 ms round trip and a 25 kB window: one
  // connection is capped at window / RTT = 10 Mbit/s (10%); sixteen would want 160 Mbit/s and
  // fill the WAN.
  void up_window_limited_wan() {
    EmuOptions options;
    options.mtu = 1500;                 // 17 segments per window rather than 3
    options.wan_queue_bytes = 500'000;  // two bandwidth-delay products: bursts are not dropped
    up(grid_platform(1, 1, 2 * kWan / 8, 0.01, kWan / 8, 25'000), options);
  }

  // Bits per second received by `to` from `streams` parallel iperf3 streams sent by `from`
  // for `seconds` (a one-off server; whatever is left of it goes with the namespaces).
  double iperf(int from, int to, int streams, int seconds) {
    const std::string server = emu_lane_addresses(name_, to).at(0);
    // A port of its own per run: the previous one-off server may still be listening while it
    // exits, and a client that found it would then be refused.
    const std::string port = std::to_string(next_port_++);
    const auto started = in_node(to, {"iperf3", "-s", "-1", "-D", "-B", server, "-p", port});
    EXPECT_EQ(started.status, 0) << started.output;
    const auto deadline = std::chrono::steady_clock::now() + 5s;
    while (in_node(to, {"ss", "-Hltn", "sport", "= :" + port}).output.empty() &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(20ms);
    }
    const auto r = in_node(from,
                           {"iperf3", "-c", server, "-p", port, "-P", std::to_string(streams), "-t",
                            std::to_string(seconds), "-J", "--connect-timeout", "3000"},
                           std::chrono::seconds(seconds + 15));
    const auto json = nlohmann::json::parse(r.output, nullptr, false);
    if (r.status != 0 || json.is_discarded() || !json.contains("end") ||
        !json["end"].contains("sum_received") ||
        !json["end"]["sum_received"].contains("bits_per_second")) {
      ADD_FAILURE() << "iperf3 failed: " << r.output;
      return 0;
    }
    return json["end"]["sum_received"]["bits_per_second"].get<double>();
  }

 private:
  int next_port_ = 5201;
};

TEST_F(Traffic, ALaneCarriesNoMoreThanItsShapedRate) {
  up(grid_platform(2, 1, kLane / 8, 0.001, 1e9 / 8));
  const double rate = iperf(0, 1, 1, 2);  // inside site 0
  EXPECT_GT(rate, 0);
  EXPECT_LE(rate, 1.05 * kLane);
}

TEST_F(Traffic, OneStreamIsWindowLimitedAndSixteenCarrySeveralTimesMore) {
  up_window_limited_wan();
  const double one = iperf(0, 1, 1, 2);
  const double sixteen = iperf(0, 1, 16, 2);
  EXPECT_GT(one, 0);
  EXPECT_LE(one, 0.30 * kWan);
  EXPECT_GE(sixteen, 3 * one) << "sixteen windows should carry several times one";
  EXPECT_LE(sixteen, 1.02 * kWan);
}

using TrafficSpeed = Traffic;

TEST_F(TrafficSpeed, ALaneReachesMostOfItsShapedRate) {
  up(grid_platform(2, 1, kLane / 8, 0.001, 1e9 / 8));
  EXPECT_GE(iperf(0, 1, 1, 2), 0.6 * kLane);
}

TEST_F(TrafficSpeed, OneStreamGetsAboutItsWindowAndSixteenFillTheWan) {
  up_window_limited_wan();
  const double one = iperf(0, 1, 1, 2);
  const double sixteen = iperf(0, 1, 16, 2);
  RecordProperty("one_stream_mbps", static_cast<int>(one / 1e6));
  RecordProperty("sixteen_streams_mbps", static_cast<int>(sixteen / 1e6));
  EXPECT_GE(one, 0.05 * kWan) << "one stream should still get about window / RTT";
  EXPECT_GE(sixteen, 0.80 * kWan);
}

}  // namespace
}  // namespace multilane::emu::testing
