// Bit-exact regression of the simulator on contended schedules: the numbers below were produced
// by the first implementation of the engine (before the performance work: binary heap, one
// array per field, no fast paths) and must not move by a single bit. Changes of the simulated
// semantics must update them on purpose.
//
// The schedules are generated here (not by the algorithm builders, which evolve) from a fixed
// seed: random transfers between the ranks of a two-site platform with three lanes (stripes of
// weight 1/3), a WAN with an aggregate and a per-connection table, shared-memory pairs, local
// copies, and dependencies, so that flows share resources, rates are recomputed as flows come
// and go, and many events fall on the same instant.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>

#include "multilane/sim.hpp"

namespace multilane {
namespace {

Platform contended_platform() {
  Platform p = make_uniform_platform(2, 3, 3, 2, 100e6, 20e-6, 2e-3, 180e6, 0);
  p.wan_links[0].per_connection_table = {{1, 90e6}, {4, 40e6}};
  return p;
}

// Every rank sends `per_rank` messages to random peers (some of them on its own node) and posts
// the matching receives; each send waits for the rank's previous receive (when it has one), so
// the transfers form dependent waves. Sizes, lanes and copies are random.
Schedule contended_schedule(const Platform& platform, std::uint32_t seed, int per_rank) {
  const int p = platform.num_ranks();
  std::mt19937 rng(seed);
  struct Message {
    int from, to, lane;
    std::uint64_t bytes;
  };
  std::vector<Message> messages;
  for (int r = 0; r < p; ++r) {
    for (int k = 0; k < per_rank; ++k) {
      int to = static_cast<int>(rng() % static_cast<unsigned>(p - 1));
      if (to >= r) ++to;
      const int lane = static_cast<int>(rng() % 4) - 1;  // -1: striped over the three lanes
      const std::uint64_t bytes = 1000 + rng() % 3'000'000;
      messages.push_back({r, to, lane, bytes});
    }
  }
  ScheduleBuilder b(Collective::Alltoall, "regression", p, 0, 0, 0);
  for (int r = 0; r < p; ++r) {
    b.start_rank(r);
    OpIndex last_recv = kNoOp;
    for (const Message& m : messages) {
      if (m.to == r) {
        last_recv = b.recv(m.from, {Buffer::Recv, 0, m.bytes}, m.lane);
        if (rng() % 3 == 0)
          b.copy({Buffer::Scratch, 0, m.bytes}, {Buffer::Recv, 0, m.bytes}, {last_recv});
      }
      if (m.from == r) b.send(m.to, {Buffer::Send, 0, m.bytes}, m.lane, {last_recv});
    }
  }
  return b.finish();
}

// FNV-1a over the bit patterns of every per-rank finish time and lane/WAN statistic.
std::uint64_t digest(const SimResult& r) {
  std::uint64_t h = 1469598103934665603ull;
  auto add = [&](std::uint64_t v) {
    for (int i = 0; i < 8; ++i) {
      h ^= (v >> (8 * i)) & 0xff;
      h *= 1099511628211ull;
    }
  };
  auto add_double = [&](double d) {
    std::uint64_t v;
    std::memcpy(&v, &d, sizeof v);
    add(v);
  };
  for (double t : r.rank_finish_s) add_double(t);
  for (const auto& l : r.lanes) {
    add(static_cast<std::uint64_t>(l.node) << 8 | static_cast<std::uint64_t>(l.lane));
    add(l.bytes_up);
    add(l.bytes_down);
    add_double(l.busy_up_s);
    add_double(l.busy_down_s);
  }
  for (const auto& w : r.wan) {
    add(w.bytes_ab);
    add(w.bytes_ba);
    add_double(w.busy_ab_s);
    add_double(w.busy_ba_s);
    add(static_cast<std::uint64_t>(w.max_connections_ab) << 32 |
        static_cast<std::uint64_t>(w.max_connections_ba));
  }
  return h;
}

struct Expected {
  std::uint32_t seed;
  int per_rank;
  double overhead_s;
  double time_s;
  std::uint64_t rate_updates;
  std::uint64_t digest;
};

class SimRegression : public ::testing::TestWithParam<Expected> {};

TEST_P(SimRegression, TimesAndStatisticsAreBitExact) {
  const Expected& e = GetParam();
  const Platform platform = contended_platform();
  SimOptions options;
  options.per_message_overhead_s = e.overhead_s;
  const SimResult r = simulate(contended_schedule(platform, e.seed, e.per_rank), platform, options);
  EXPECT_EQ(r.time_s, e.time_s) << std::hexfloat << r.time_s;
  EXPECT_EQ(r.rate_updates, e.rate_updates);
  EXPECT_EQ(digest(r), e.digest) << std::hex << digest(r);
}

INSTANTIATE_TEST_SUITE_P(
    Contended, SimRegression,
    ::testing::Values(Expected{1, 3, 0, 0x1.445957cd53311p-3, 127, 0x08e7588b0f4dbb46},
                      Expected{2, 8, 0, 0x1.469d002237177p-2, 439, 0x124e5d7b19b3fbaf},
                      Expected{3, 8, 2e-6, 0x1.22a70b5f08af4p-1, 708, 0xd554e67b51cfd772},
                      Expected{4, 20, 0, 0x1.f5aa08dca5801p-1, 1524, 0xa7190f826a23a301}),
    [](const ::testing::TestParamInfo<Expected>& info) {
      return "seed" + std::to_string(info.param.seed) + "_" + std::to_string(info.param.per_rank) +
             "_per_rank" + (info.param.overhead_s > 0 ? "_overhead" : "");
    });

}  // namespace
}  // namespace multilane
