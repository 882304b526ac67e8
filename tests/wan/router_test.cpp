// tests/wan/router_test.cpp — aggregate routers on loopback: two sites of 4 routers; a message
// striped over the 4 routers arrives byte exact although its chunks arrive out of order (one
// router holds its chunks back); small messages take one router; the static mode keeps a rank
// on its router; the direct mode needs no router; strangers and ranks of other sites are
// refused by a router; and `multilane router` as processes (two sites, a rank at each).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <thread>

#include "runtime/tcp/transport_error.hpp"
#include "wan/routed_endpoint.hpp"
#include "wan/router_grid.hpp"
#include "wan_testing.hpp"

namespace multilane::wan {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using namespace testing;

asio::ip::tcp::endpoint local(std::uint16_t port) {
  return {asio::ip::make_address("127.0.0.1"), port};
}

// R routers at each of two sites, each on a thread of its own.
class Grid : public RouterGrid {
 public:
  explicit Grid(int routers, std::chrono::milliseconds delay_of_router_zero = 0ms)
      : RouterGrid(grid_options(routers, delay_of_router_zero)) {}

  // Routers count a chunk when its write completes, which may be just after the receiving rank
  // already has the bytes: wait (bounded) until site's routers together counted `bytes`.
  void wait_forwarded_to_sites(int site, std::uint64_t bytes, int routers) {
    for (int i = 0; i < 500; ++i) {
      std::uint64_t total = 0;
      for (int r = 0; r < routers; ++r) total += router(site, r).stats().bytes_to_sites;
      if (total >= bytes) return;
      std::this_thread::sleep_for(10ms);
    }
  }

  // Routers log on their loop after counting: waits (bounded) until the log holds `text`.
  bool wait_for_log(const std::string& text) const {
    for (int i = 0; i < 500 && log().find(text) == std::string::npos; ++i) {
      std::this_thread::sleep_for(10ms);
    }
    return log().find(text) != std::string::npos;
  }

  std::uint16_t port(int site, int index) const {
    return endpoints(site)[static_cast<std::size_t>(index)].port();
  }

  RankEndpoint rank(int site, int rank, RouteMode mode) const {
    RankOptions o;
    o.self = {static_cast<std::uint16_t>(site), static_cast<std::uint32_t>(rank)};
    o.mode = mode;
    o.routers = endpoints(site);
    o.max_chunk = 64 * 1024;
    o.job_id = kJob;
    o.secret = runtime::JobSecret::from_text(kSecret);
    o.timeout = 5s;
    return RankEndpoint(o);
  }

 private:
  static RouterGridOptions grid_options(int routers, std::chrono::milliseconds delay) {
    RouterGridOptions o;
    o.routers = routers;
    o.job_id = kJob;
    o.secret = runtime::JobSecret::from_text(kSecret);
    o.timeout = 5s;
    o.delay = [delay](int site, int index) { return site == 0 && index == 0 ? delay : 0ms; };
    return o;
  }
};

TEST(Routers, StripedMessageArrivesByteExactAlthoughOutOfOrder) {
  // Router 0 of site 0 holds each chunk back far longer than a loaded machine's scheduling
  // hiccups, so its chunks arrive after the others'.
  Grid grid(4, 300ms);
  RankEndpoint receiver = grid.rank(1, 1, RouteMode::Aggregate);
  receiver.connect();
  const std::size_t size = 1024 * 1024 + 3;  // 17 chunks of at most 64 KiB over 4 routers
  auto sender = in_background([&] {
    RankEndpoint a = grid.rank(0, 0, RouteMode::Aggregate);
    a.connect();
    a.send({1, 1}, pattern(size, 5));
    std::vector<std::byte> ack(1);
    a.recv({1, 1}, ack);
  });
  std::vector<std::byte> got(size);
  receiver.recv({0, 0}, got);
  EXPECT_TRUE(got == pattern(size, 5));
  const auto arrivals = receiver.last_arrivals();
  EXPECT_EQ(arrivals.size(), 20u);  // plan: a multiple of 4 chunks of at most 64 KiB
  EXPECT_FALSE(std::is_sorted(arrivals.begin(), arrivals.end())) << "chunks of router 0 came last";
  auto sorted = arrivals;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_TRUE(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end()) << "each once";
  receiver.send({0, 0}, pattern(1));
  sender.get();
  grid.wait_forwarded_to_sites(0, size, 4);
  for (int i = 0; i < 4; ++i) {
    EXPECT_GT(grid.router(0, i).stats().bytes_to_sites, 200'000u) << "router " << i;
  }
}

TEST(Routers, SmallMessagesTakeOneRouterAndBothWaysWork) {
  Grid grid(4);
  RankEndpoint b = grid.rank(1, 0, RouteMode::Aggregate);
  b.connect();
  auto other = in_background([&] {
    RankEndpoint a = grid.rank(0, 3, RouteMode::Aggregate);
    a.connect();
    std::vector<std::byte> reply(100'000);
    const auto message = pattern(1000, 1);
    const RankSend s{{1, 0}, message};
    const RankRecv r{{1, 0}, reply};
    a.exchange({&s, 1}, {&r, 1});
    EXPECT_TRUE(reply == pattern(100'000, 2));
  });
  std::vector<std::byte> small(1000);
  const auto message = pattern(100'000, 2);
  const RankSend s{{0, 3}, message};
  const RankRecv r{{0, 3}, small};
  b.exchange({&s, 1}, {&r, 1});
  EXPECT_TRUE(small == pattern(1000, 1));
  EXPECT_EQ(b.last_arrivals().size(), 1u) << "below the threshold: one chunk";
  other.get();
  grid.wait_forwarded_to_sites(0, 1000, 4);
  int used = 0;
  for (int i = 0; i < 4; ++i) used += grid.router(0, i).stats().bytes_to_sites > 0 ? 1 : 0;
  EXPECT_EQ(used, 1) << "site 0 sent one small message";
}

TEST(Routers, StaticModeKeepsEachRankOnItsRouter) {
  Grid grid(4);
  RankEndpoint b = grid.rank(1, 0, RouteMode::Static);
  b.connect();
  auto other = in_background([&] {
    RankEndpoint a = grid.rank(0, 2, RouteMode::Static);
    a.connect();
    a.send({1, 0}, pattern(500'000, 3));
  });
  std::vector<std::byte> got(500'000);
  b.recv({0, 2}, got);
  EXPECT_TRUE(got == pattern(500'000, 3));
  other.get();
  grid.wait_forwarded_to_sites(0, 500'000, 4);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(grid.router(0, i).stats().bytes_to_sites > 0, i == 2) << "router " << i;
  }
}

TEST(Routers, DirectModeNeedsNoRouter) {
  RankOptions base;
  base.mode = RouteMode::Direct;
  base.listen = local(0);
  base.job_id = kJob;
  base.secret = runtime::JobSecret::from_text(kSecret);
  base.timeout = 5s;
  base.max_chunk = 100'000;
  RankOptions oa = base, ob = base, oc = base;
  oa.self = {0, 0};
  ob.self = {1, 0};
  oc.self = {1, 1};
  RankEndpoint a(oa), b(ob), c(oc);
  const std::map<RankAddress, asio::ip::tcp::endpoint> directory{
      {{0, 0}, local(a.port())}, {{1, 0}, local(b.port())}, {{1, 1}, local(c.port())}};
  auto at_b = in_background([&] {
    b.connect(directory);
    std::vector<std::byte> got(300'001);
    b.recv({0, 0}, got);
    EXPECT_TRUE(got == pattern(300'001, 4));
    EXPECT_EQ(b.last_arrivals().size(), 4u) << "cut in pieces of 100000 bytes";
  });
  auto at_c = in_background([&] {
    c.connect(directory);
    std::vector<std::byte> got(10);
    c.recv({0, 0}, got);
    EXPECT_TRUE(got == pattern(10, 5));
  });
  a.connect(directory);
  const auto to_b = pattern(300'001, 4), to_c = pattern(10, 5);
  const RankSend sends[] = {{{1, 0}, to_b}, {{1, 1}, to_c}};
  a.exchange(sends, {});
  at_b.get();
  at_c.get();
}

TEST(Routers, RefuseStrangersAndRanksOfOtherSites) {
  Grid grid(1);
  RankOptions o;
  o.self = {1, 0};  // claims site 1 at a router of site 0
  o.routers = {local(grid.port(0, 0))};
  o.job_id = kJob;
  o.secret = runtime::JobSecret::from_text(kSecret);
  o.timeout = 2s;
  RankEndpoint wrong_site(o);
  wrong_site.connect();
  o.self = {0, 0};
  o.secret = runtime::JobSecret::from_text("a secret that is not the job's");
  RankEndpoint stranger(o);
  EXPECT_THROW(stranger.connect(), runtime::TransportError);
  for (int i = 0; i < 300 && grid.router(0, 0).stats().refused < 2; ++i)
    std::this_thread::sleep_for(10ms);
  EXPECT_EQ(grid.router(0, 0).stats().refused, 2u);
  EXPECT_TRUE(grid.wait_for_log("a rank of site 1 (this router serves site 0)")) << grid.log();
  EXPECT_TRUE(grid.wait_for_log("peer failed authentication (wrong job secret?)")) << grid.log();
  EXPECT_EQ(grid.router(0, 0).stats().ranks, 0u);
}

// `multilane router` as processes: one router per site, a rank at each site; the striped
// messages arrive byte exact and the routers report what they forwarded when stopped.
TEST(RouterCommand, TwoSitesForwardThroughRouterProcesses) {
  const std::vector<std::string> env{std::string("MULTILANE_SECRET=") + kSecret,
                                     "MULTILANE_JOB_ID=4242"};
  const std::string multilane = binary_dir() + "/multilane";
  const std::string at0 = "127.0.0.1:" + std::to_string(multilane::testing::loopback_port());
  const std::string at1 = "127.0.0.1:" + std::to_string(multilane::testing::loopback_port());
  Subprocess router1({multilane, "router", "--site", "1", "--index", "0", "--listen", at1, "--peer",
                      "0=" + at0, "--timeout", "10"},
                     env);
  Subprocess router0({multilane, "router", "--site", "0", "--index", "0", "--listen", at0, "--peer",
                      "1=" + at1, "--timeout", "10"},
                     env);
  auto wait_for_output = [](const Subprocess& p, const std::string& text) {
    for (int i = 0; i < 1000 && p.output_so_far().find(text) == std::string::npos; ++i) {
      std::this_thread::sleep_for(10ms);
    }
    return p.output_so_far().find(text) != std::string::npos;
  };
  ASSERT_TRUE(wait_for_output(router1, "listening on " + at1)) << router1.output_so_far();
  ASSERT_TRUE(wait_for_output(router0, "listening on " + at0)) << router0.output_so_far();
  const std::vector<std::string> rank{multilane, "router", "--rank",    "0",
                                      "--size",  "300001", "--count",   "3",
                                      "--chunk", "64KiB",  "--timeout", "10"};
  auto with = [](std::vector<std::string> args, std::initializer_list<std::string> more) {
    args.insert(args.end(), more);
    return args;
  };
  Subprocess receiver(with(rank, {"--site", "1", "--routers", at1, "--receive-from", "0:0"}), env);
  Subprocess sender(with(rank, {"--site", "0", "--routers", at0, "--send-to", "1:0"}), env);
  const Finished sent = sender.wait();
  const Finished received = receiver.wait();
  EXPECT_EQ(sent.status, 0) << sent.output;
  EXPECT_THAT(sent.output, HasSubstr("site 0 rank 0 sent 3 x 293 KiB to site 1 rank 0 in "));
  EXPECT_EQ(received.status, 0) << received.output;
  EXPECT_THAT(
      received.output,
      HasSubstr("site 1 rank 0 received 3 x 293 KiB from site 0 rank 0: every byte as sent"));
  router0.signal(SIGTERM);
  router1.signal(SIGTERM);
  const Finished stopped0 = router0.wait(10s);
  EXPECT_EQ(stopped0.status, 0) << stopped0.output;
  EXPECT_THAT(stopped0.output, MatchesRegex("(.|\n)*multilane router: [0-9]+ chunks forwarded, "
                                            "879 KiB to other sites, 1 B to ranks(.|\n)*"));
  EXPECT_EQ(router1.wait(10s).status, 0);
}

}  // namespace
}  // namespace multilane::wan
