// The verifier's building blocks against brute force: interval maps against one value per
// byte, reachability (ancestor table and bounded search) against a transitive closure.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "multilane/schedule.hpp"
#include "verify/data_flow.hpp"
#include "verify/interval_map.hpp"
#include "verify/reachability.hpp"

namespace multilane::verify {
namespace {

using ContentMap = IntervalMap<Origin, OriginTraits>;

std::vector<Origin> bytes_of(const ContentMap& m) {
  std::vector<Origin> out;
  m.for_each(0, m.size(), [&](std::uint64_t b, std::uint64_t e, const Origin& o) {
    for (std::uint64_t x = b; x < e; ++x) out.push_back(OriginTraits::shifted(o, x - b));
  });
  return out;
}

bool same(const Origin& a, const Origin& b) {
  return a.rank == b.rank && (a.rank < 0 || a.offset == b.offset);
}

TEST(VerifyIntervalMap, RandomWritesMatchBytewiseModel) {
  std::mt19937_64 rng(42);
  constexpr std::uint64_t kSize = 200;
  for (int round = 0; round < 50; ++round) {
    ContentMap map(kSize, Origin{});
    std::vector<Origin> model(kSize);
    for (int step = 0; step < 60; ++step) {
      const std::uint64_t b = rng() % kSize;
      const std::uint64_t e = b + 1 + rng() % (kSize - b);
      const Origin o{static_cast<std::int32_t>(rng() % 3) - 1, rng() % 1000};
      if (rng() % 2) {
        map.assign(b, e, o);
        for (std::uint64_t x = b; x < e; ++x) model[x] = OriginTraits::shifted(o, x - b);
      } else {
        // update() hands over each run inside [b, e): make byte x hold rank 5's byte x.
        map.update(b, e, [](std::uint64_t run_begin, std::uint64_t, Origin& v) {
          v = Origin{5, run_begin};
        });
        for (std::uint64_t x = b; x < e; ++x) model[x] = Origin{5, x};
      }
      const auto got = bytes_of(map);
      ASSERT_EQ(got.size(), kSize);
      for (std::uint64_t x = 0; x < kSize; ++x) {
        ASSERT_TRUE(same(got[x], model[x]))
            << "round " << round << " step " << step << " byte " << x;
      }
    }
  }
}

TEST(VerifyIntervalMap, AssignMergesContinuingRuns) {
  ContentMap map(100, Origin{});
  for (std::uint64_t k = 0; k < 10; ++k) map.assign(k * 10, k * 10 + 10, Origin{3, 500 + k * 10});
  EXPECT_EQ(map.num_runs(), 1u);
  map.assign(95, 100, Origin{});
  EXPECT_EQ(map.num_runs(), 2u);
  map.assign(40, 50, Origin{2, 0});
  EXPECT_EQ(map.num_runs(), 4u);
  map.assign(40, 50, Origin{3, 540});
  EXPECT_EQ(map.num_runs(), 2u);
}

// A random schedule of one rank with random earlier dependencies.
Schedule random_rank(std::mt19937_64& rng, int ops) {
  ScheduleBuilder b(Collective::Allgather, "random", 1, 0, 1, 0);
  b.start_rank(0);
  for (int i = 0; i < ops; ++i) {
    std::vector<OpIndex> deps;
    for (int k = 0; k < 3 && i > 0; ++k) {
      if (rng() % 3) deps.push_back(static_cast<OpIndex>(rng() % i));
    }
    b.copy({Buffer::Recv, 0, 1}, {Buffer::Send, 0, 1}, std::span<const OpIndex>(deps));
  }
  return b.finish();
}

TEST(VerifyReachability, TableAndSearchAgreeWithClosure) {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 20; ++round) {
    const int n = 1 + static_cast<int>(rng() % 120);
    const Schedule s = random_rank(rng, n);
    std::vector<std::vector<bool>> closure(n, std::vector<bool>(n));
    for (int b = 0; b < n; ++b) {
      for (OpIndex a : s.deps_of(s.ops[b])) {
        closure[b][a] = true;
        for (int x = 0; x < n; ++x) {
          if (closure[a][x]) closure[b][x] = true;
        }
      }
    }
    Reachability table(s, 0);
    Reachability search(s, 0, /*table_limit_ops=*/0);
    for (int b = 0; b < n; ++b) {
      for (int a = 0; a < n; ++a) {
        ASSERT_EQ(table.precedes(a, b), closure[b][a]) << a << " -> " << b;
        ASSERT_EQ(search.precedes(a, b), closure[b][a]) << a << " -> " << b;
      }
    }
  }
}

}  // namespace
}  // namespace multilane::verify
