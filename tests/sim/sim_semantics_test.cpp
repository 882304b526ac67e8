// Simulator semantics on hand-built schedules: each case has an exact answer by hand.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "multilane/errors.hpp"
#include "multilane/sim.hpp"

namespace multilane {
namespace {

constexpr double kLane = 125e6;  // 1 Gbit/s
constexpr double kLan = 50e-6;

Platform site(int nodes, int lanes = 1, int cores = 1) {
  return make_uniform_platform(1, nodes, lanes, cores, kLane, kLan, 0, 0, 0);
}

Range recv(std::uint64_t off, std::uint64_t len) {
  return {Buffer::Recv, off, len};
}

TEST(SimSemantics, OneTransferPaysBandwidthAndLatency) {
  ScheduleBuilder b(Collective::Bcast, "hand", 2, 0, 1'000'000, 0);
  b.start_rank(0);
  b.send(1, recv(0, 1'000'000), 0);
  b.start_rank(1);
  b.recv(0, recv(0, 1'000'000), 0);
  const auto r = simulate(b.finish(), site(2));
  EXPECT_NEAR(r.time_s, 1e6 / kLane + kLan, 1e-12);
  EXPECT_NEAR(r.rank_finish_s[0], 1e6 / kLane, 1e-12);  // the send completes when bytes left
  EXPECT_EQ(r.transfers, 1u);
  ASSERT_EQ(r.lanes.size(), 2u);
  EXPECT_EQ(r.lanes[0].bytes_up, 1'000'000u);
  EXPECT_NEAR(r.lanes[0].busy_up_s, 1e6 / kLane, 1e-12);
}

// A chain 0 -> 1 -> 2 of k segments: 2 hops of latency once, (2 + k - 1) segment times.
TEST(SimSemantics, PipelinePaysLatencyOncePerHop) {
  const int k = 64;
  const std::uint64_t seg = 65536;
  ScheduleBuilder b(Collective::Bcast, "chain", 3, 0, seg * k, seg);
  b.start_rank(0);
  for (int i = 0; i < k; ++i) b.send(1, recv(i * seg, seg), 0);
  b.start_rank(1);
  for (int i = 0; i < k; ++i) {
    const OpIndex got = b.recv(0, recv(i * seg, seg), 0);
    b.send(2, recv(i * seg, seg), 0, {got});
  }
  b.start_rank(2);
  for (int i = 0; i < k; ++i) b.recv(1, recv(i * seg, seg), 0);
  const auto r = simulate(b.finish(), site(3));
  EXPECT_NEAR(r.time_s, 2 * kLan + (2 + k - 1) * seg / kLane, 1e-9);
}

TEST(SimSemantics, PerMessageOverheadIsPaidPerSegment) {
  const int k = 10;
  const std::uint64_t seg = 1000;
  ScheduleBuilder b(Collective::Bcast, "hand", 2, 0, seg * k, seg);
  b.start_rank(0);
  for (int i = 0; i < k; ++i) b.send(1, recv(i * seg, seg), 0);
  b.start_rank(1);
  for (int i = 0; i < k; ++i) b.recv(0, recv(i * seg, seg), 0);
  SimOptions o;
  o.per_message_overhead_s = 1e-6;
  const auto r = simulate(b.finish(), site(2), o);
  EXPECT_NEAR(r.time_s, k * (1e-6 + seg / kLane) + kLan, 1e-12);
}

// Max-min fairness: f1 a->b and f2 a->c share a's uplink (half each); f3 d->c gets what f2
// leaves of c's wider downlink.
TEST(SimSemantics, MaxMinFairSharing) {
  Platform p = site(4);
  p.nodes[2].lanes[0].down_bps = 2 * kLane;
  for (int n : {1, 3}) p.nodes[n].lanes[0].down_bps = 10 * kLane;
  p.nodes[3].lanes[0].up_bps = 10 * kLane;
  const std::uint64_t m = 1'000'000;
  ScheduleBuilder b(Collective::Bcast, "hand", 4, 0, 3 * m, 0);
  b.start_rank(0);
  b.send(1, recv(0, m), 0);
  b.send(2, recv(m, m), 0);
  b.start_rank(1);
  b.recv(0, recv(0, m), 0);
  b.start_rank(2);
  b.recv(0, recv(m, m), 0);
  b.recv(3, recv(2 * m, m + m / 2), 0);
  b.start_rank(3);
  b.send(2, recv(2 * m, m + m / 2), 0);
  const auto r = simulate(b.finish(), p);
  EXPECT_NEAR(r.rank_finish_s[0], 2 * m / kLane, 1e-9);            // 0.5 lane each
  EXPECT_NEAR(r.rank_finish_s[3], 1.5 * m / (1.5 * kLane), 1e-9);  // 1.5 lanes
}

// Freed bandwidth is redistributed: a short and a long flow share an uplink.
TEST(SimSemantics, RatesChangeWhenAFlowEnds) {
  ScheduleBuilder b(Collective::Bcast, "hand", 3, 0, 0, 0);
  b.start_rank(0);
  b.send(1, recv(0, 1000), 0);
  b.send(2, recv(0, 3000), 0);
  b.start_rank(1);
  b.recv(0, recv(0, 1000), 0);
  b.start_rank(2);
  b.recv(0, recv(0, 3000), 0);
  const auto r = simulate(b.finish(), site(3));
  // Both at half rate until 2000 bytes have left; the long one then alone for 2000 bytes.
  EXPECT_NEAR(r.rank_finish_s[0], 4000 / kLane, 1e-12);
  EXPECT_NEAR(r.rank_finish_s[1], 2000 / kLane + kLan, 1e-12);
}

TEST(SimSemantics, AnyLaneStripesOverAllLanes) {
  ScheduleBuilder b(Collective::Bcast, "hand", 2, 0, 0, 0);
  b.start_rank(0);
  b.send(1, recv(0, 1'000'000));
  b.start_rank(1);
  b.recv(0, recv(0, 1'000'000));
  const auto r = simulate(b.finish(), site(2, 2));
  EXPECT_NEAR(r.time_s, 1e6 / (2 * kLane) + kLan, 1e-12);
  ASSERT_EQ(r.lanes.size(), 4u);
  EXPECT_EQ(r.lanes[0].bytes_up, 500'000u);
}

TEST(SimSemantics, WanConnectionCapAndAggregate) {
  // 4 nodes per site; the WAN carries 200 MB/s in all, 60 MB/s per connection.
  Platform p = make_uniform_platform(2, 4, 1, 1, kLane, kLan, 5e-3, 200e6, 60e6);
  const std::uint64_t m = 6'000'000;
  auto one_to_many = [&](int pairs) {
    ScheduleBuilder b(Collective::Bcast, "hand", 8, 0, 0, 0);
    for (int r = 0; r < 4; ++r) {
      b.start_rank(r);
      if (r < pairs) b.send(4 + r, recv(0, m), 0);
    }
    for (int r = 4; r < 8; ++r) {
      b.start_rank(r);
      if (r - 4 < pairs) b.recv(r - 4, recv(0, m), 0);
    }
    return simulate(b.finish(), p);
  };
  EXPECT_NEAR(one_to_many(1).time_s, m / 60e6 + 5e-3, 1e-9);
  EXPECT_NEAR(one_to_many(3).time_s, m / 60e6 + 5e-3, 1e-9);
  const auto four = one_to_many(4);  // 4 x 60 > 200: the aggregate binds, 50 MB/s each
  EXPECT_NEAR(four.time_s, m / 50e6 + 5e-3, 1e-9);
  ASSERT_EQ(four.wan.size(), 1u);
  EXPECT_EQ(four.wan[0].bytes_ab, 4 * m);
  EXPECT_EQ(four.wan[0].max_connections_ab, 4);
}

TEST(SimSemantics, SharedMemoryMessagesAndCopies) {
  Platform p = site(1, 1, 2);
  const double copy = p.sites[0].shm.copy_bps;
  const double sync = p.sites[0].shm.sync_latency_s;
  ScheduleBuilder b(Collective::Bcast, "hand", 2, 0, 0, 0);
  b.start_rank(0);
  b.send(1, recv(0, 4'000'000), 0);
  b.start_rank(1);
  const OpIndex got = b.recv(0, recv(0, 4'000'000), 0);
  b.copy({Buffer::Scratch, 0, 4'000'000}, recv(0, 4'000'000), {got});
  const auto r = simulate(b.finish(), p);
  EXPECT_NEAR(r.rank_finish_s[0], 2 * 4e6 / copy, 1e-12);
  EXPECT_NEAR(r.time_s, 2 * 4e6 / copy + sync + 4e6 / copy, 1e-12);
  EXPECT_EQ(r.copies, 1u);
  EXPECT_TRUE(r.lanes.empty());
}

TEST(SimSemantics, RecvWaitsForItsDependencies) {
  // Rank 1 posts its receive only after a local copy: the transfer waits for it.
  Platform p = site(2);
  const double copy = p.sites[0].shm.copy_bps;
  ScheduleBuilder b(Collective::Bcast, "hand", 2, 0, 0, 0);
  b.start_rank(0);
  b.send(1, recv(0, 1000), 0);
  b.start_rank(1);
  const OpIndex c = b.copy({Buffer::Scratch, 0, 8'000'000}, {Buffer::Send, 0, 8'000'000});
  b.recv(0, recv(0, 1000), 0, {c});
  const auto r = simulate(b.finish(), p);
  EXPECT_NEAR(r.time_s, 8e6 / copy + 1000 / kLane + kLan, 1e-12);
}

TEST(SimSemantics, MissingWanLinkNamesBothSites) {
  Platform p = make_uniform_platform(2, 1, 1, 1, kLane, kLan, 1e-3, 1e9, 0);
  p.wan_links.clear();
  ScheduleBuilder b(Collective::Bcast, "hand", 2, 0, 0, 0);
  b.start_rank(0);
  b.send(1, recv(0, 10), 0);
  b.start_rank(1);
  b.recv(0, recv(0, 10), 0);
  try {
    simulate(b.finish(), p);
    FAIL() << "expected UsageError";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("site0"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("site1"), std::string::npos);
  }
}

TEST(SimSemantics, BrokenSchedulesAreRejected) {
  {
    ScheduleBuilder b(Collective::Bcast, "hand", 2, 0, 0, 0);
    b.start_rank(0);
    b.send(1, recv(0, 10), 0);
    b.start_rank(1);
    b.recv(0, recv(0, 20), 0);
    EXPECT_THROW(simulate(b.finish(), site(2)), std::invalid_argument);
  }
  {
    ScheduleBuilder b(Collective::Bcast, "hand", 2, 0, 0, 0);
    b.start_rank(0);
    b.send(1, recv(0, 10), 0);
    b.start_rank(1);
    EXPECT_THROW(simulate(b.finish(), site(2)), std::invalid_argument);
  }
  {
    // Each rank receives before it sends: a deadlock.
    ScheduleBuilder b(Collective::Bcast, "hand", 2, 0, 0, 0);
    b.start_rank(0);
    OpIndex g = b.recv(1, recv(0, 10), 0);
    b.send(1, recv(0, 10), 0, {g});
    b.start_rank(1);
    g = b.recv(0, recv(0, 10), 0);
    b.send(0, recv(0, 10), 0, {g});
    EXPECT_THROW(simulate(b.finish(), site(2)), std::runtime_error);
  }
  {
    ScheduleBuilder b(Collective::Bcast, "hand", 2, 0, 0, 0);
    b.start_rank(0);
    b.send(1, recv(0, 10), 3);
    b.start_rank(1);
    b.recv(0, recv(0, 10), 3);
    EXPECT_THROW(simulate(b.finish(), site(2)), UsageError);
  }
}

TEST(SimSemantics, TraceIsChromeTraceJson) {
  ScheduleBuilder b(Collective::Bcast, "hand", 3, 0, 0, 0);
  b.start_rank(0);
  b.send(1, recv(0, 1000), 0);
  b.send(2, recv(0, 1000));
  b.start_rank(1);
  b.recv(0, recv(0, 1000), 0);
  b.start_rank(2);
  b.recv(0, recv(0, 1000));
  SimOptions o;
  o.record_trace = true;
  const Platform p = site(3, 2);
  const auto r = simulate(b.finish(), p, o);
  ASSERT_EQ(r.trace.size(), 2u);
  const auto j = nlohmann::json::parse(trace_to_json(r, p, "test"));
  int slices = 0;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] == "X") {
      ++slices;
      EXPECT_EQ(e["pid"], 0);
      EXPECT_GT(e["dur"].get<double>(), 0);
    }
  }
  EXPECT_EQ(slices, 2);
}

}  // namespace
}  // namespace multilane
