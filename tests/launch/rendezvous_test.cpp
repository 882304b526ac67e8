// Tests of the rendezvous key-value store (runtime/launch/rendezvous.hpp) over 127.0.0.1: puts and
// gets across threads, waiting gets, timeout and unreachable texts, and strangers (wrong
// secret, garbage, absurd sizes) dropped with a logged reason while the store goes on.
#include "runtime/launch/rendezvous.hpp"

#include <gtest/gtest.h>

#include <condition_variable>
#include <future>
#include <thread>

#include "multilane/errors.hpp"
#include "runtime/launch/launch_store_protocol.hpp"
#include "runtime/stalled_connections.hpp"
#include "runtime/tcp/io_wait.hpp"
#include "runtime/tcp/le_bytes.hpp"
#include "runtime/tcp/transport_error.hpp"
#include "support/loopback_port.hpp"

namespace multilane::runtime {
namespace {

using namespace std::chrono_literals;

constexpr std::uint64_t kJob = 77;
const JobSecret kSecret = JobSecret::from_text("rendezvous test secret");

// Log lines of a server, collected from its threads.
class LogLines {
 public:
  RendezvousLog sink() {
    return [this](const std::string& line) {
      std::lock_guard lock(mutex_);
      lines_.push_back(line);
      added_.notify_all();
    };
  }
  // The first line containing `part`, waiting for it up to 10 s ("" if none came).
  std::string wait_for(const std::string& part) {
    std::unique_lock lock(mutex_);
    std::string found;
    added_.wait_for(lock, 10s, [&] {
      for (const auto& line : lines_) {
        if (line.find(part) != std::string::npos) found = line;
      }
      return !found.empty();
    });
    return found;
  }

 private:
  std::mutex mutex_;
  std::condition_variable added_;
  std::vector<std::string> lines_;
};

struct TestServer {
  LogLines log;
  RendezvousServer server{
      "127.0.0.1:0", kJob, kSecret, {.handshake_timeout = 30s, .log = log.sink()}};
  std::string address() const { return server.address(); }
};

RendezvousClient client_of(const std::string& address, int rank,
                           std::chrono::milliseconds timeout = 10s) {
  return RendezvousClient(address, kJob, kSecret, timeout, rank);
}

// A plain TCP connection to the store, for speaking out of turn.
struct RawConnection {
  asio::io_context io;
  asio::ip::tcp::socket socket{io};
  explicit RawConnection(const std::string& address) {
    const HostPort where = parse_host_port(address);
    socket.connect({asio::ip::make_address(where.host), where.port});
  }
  void send(std::span<const std::byte> bytes) {
    asio::write(socket, asio::buffer(bytes.data(), bytes.size()));
  }
  // True when the server closed the connection (a read ends with eof) within 10 s.
  bool closed_by_server() {
    std::array<std::byte, 64> sink{};
    for (;;) {
      const IoResult r = read_exact(io, socket, sink, Clock::now() + 10s);
      if (r.outcome == IoOutcome::Closed) return true;
      if (r.outcome != IoOutcome::Done) return false;
    }
  }
};

TEST(Rendezvous, RanksExchangeAddressesAcrossThreads) {
  TestServer store;
  constexpr int kRanks = 6;
  std::vector<std::future<std::vector<std::string>>> ranks;
  for (int r = 0; r < kRanks; ++r) {
    ranks.push_back(std::async(std::launch::async, [&, r] {
      RendezvousClient client = client_of(store.address(), r);
      client.put(lanes_key(r), "addresses of rank " + std::to_string(r));
      std::vector<std::string> seen;
      for (int peer = 0; peer < kRanks; ++peer) seen.push_back(client.get(lanes_key(peer)));
      return seen;
    }));
  }
  for (auto& rank : ranks) {
    const auto seen = rank.get();
    for (int peer = 0; peer < kRanks; ++peer) {
      EXPECT_EQ(seen[peer], "addresses of rank " + std::to_string(peer));
    }
  }
}

TEST(Rendezvous, GetWaitsUntilTheKeyIsPut) {
  TestServer store;
  RendezvousClient reader = client_of(store.address(), 1);
  std::atomic<bool> put_started = false;
  auto value = std::async(std::launch::async, [&] {
    std::string v = reader.get("late/key");
    EXPECT_TRUE(put_started.load());  // the answer cannot come before the put
    return v;
  });
  std::this_thread::sleep_for(100ms);  // let the get reach the server and wait there
  RendezvousClient writer = client_of(store.address(), 2);
  put_started = true;
  writer.put("late/key", std::string("\0binary\xff", 8));
  EXPECT_EQ(value.get(), std::string("\0binary\xff", 8));
}

TEST(Rendezvous, OneClientServesConcurrentGets) {
  TestServer store;
  RendezvousClient shared = client_of(store.address(), 0);
  std::vector<std::future<std::string>> gets;
  for (int i = 0; i < 8; ++i) {
    gets.push_back(
        std::async(std::launch::async, [&, i] { return shared.get("k" + std::to_string(i)); }));
  }
  RendezvousClient writer = client_of(store.address(), 1);
  for (int i = 7; i >= 0; --i) writer.put("k" + std::to_string(i), "v" + std::to_string(i));
  for (int i = 0; i < 8; ++i) EXPECT_EQ(gets[i].get(), "v" + std::to_string(i));
  shared.put("k0", "replaced");
  EXPECT_EQ(writer.get("k0"), "replaced");
}

TEST(Rendezvous, GetTimeoutNamesTheKeyAndTheMissingRank) {
  TestServer store;
  RendezvousClient client = client_of(store.address(), 0, 200ms);
  try {
    client.get(lanes_key(3));
    FAIL() << "get returned";
  } catch (const TransportError& e) {
    EXPECT_EQ(std::string(e.what()),
              "timed out after 0.2 s waiting for key 'lanes/3' at the rendezvous " +
                  store.address() + " (rank 3 has not published its addresses: did it start?)");
  }
  try {
    client.get("other");
    FAIL() << "get returned";
  } catch (const TransportError& e) {
    EXPECT_EQ(std::string(e.what()),
              "timed out after 0.2 s waiting for key 'other' at the "
              "rendezvous " +
                  store.address() + " (no rank has put it yet)");
  }
  client.put("after", "timeouts");  // the client reconnects after giving up on a get
  EXPECT_EQ(client.get("after"), "timeouts");
}

TEST(Rendezvous, UnreachableStoreIsNamedAfterRetrying) {
  const std::string address = "127.0.0.1:" + std::to_string(multilane::testing::loopback_port());
  try {
    client_of(address, 0, 300ms);
    FAIL() << "connected";
  } catch (const TransportError& e) {
    EXPECT_EQ(std::string(e.what()),
              "cannot reach the rendezvous " + address +
                  " within 0.3 s: Connection refused (is it served? multilane launch serves it, "
                  "or rank 0 with MULTILANE_RENDEZVOUS_SERVER=rank0)");
  }
}

TEST(Rendezvous, ClientWaitsForAServerThatStartsLater) {
  const std::string address = "127.0.0.1:" + std::to_string(multilane::testing::loopback_port());
  auto client = std::async(std::launch::async, [&] {
    RendezvousClient c = client_of(address, 1);
    return c.get("hello");
  });
  std::this_thread::sleep_for(200ms);
  RendezvousServer server(address, kJob, kSecret, {.log = [](const std::string&) {}});
  client_of(server.address(), 0).put("hello", "world");
  EXPECT_EQ(client.get(), "world");
}

TEST(Rendezvous, WrongSecretIsDroppedAndTheStoreGoesOn) {
  TestServer store;
  EXPECT_THROW(RendezvousClient(store.address(), kJob, JobSecret::from_text("wrong"), 5s, 4),
               TransportError);
  EXPECT_NE(store.log.wait_for("peer failed authentication (wrong job secret?)"), "");
  EXPECT_THROW(RendezvousClient(store.address(), kJob + 1, kSecret, 5s, 4), TransportError);
  EXPECT_NE(store.log.wait_for("peer is in job 78, expected job 77"), "");
  RendezvousClient good = client_of(store.address(), 0);
  good.put("still", "serving");
  EXPECT_EQ(good.get("still"), "serving");
}

TEST(Rendezvous, GarbageIsDroppedAndTheStoreGoesOn) {
  TestServer store;
  RawConnection stranger(store.address());
  std::vector<std::byte> garbage(200);
  for (std::size_t i = 0; i < garbage.size(); ++i) garbage[i] = std::byte((i * 37 + 11) & 0xff);
  stranger.send(garbage);
  EXPECT_TRUE(stranger.closed_by_server());
  const std::string line = store.log.wait_for("not a multilane peer");
  EXPECT_EQ(line.rfind("dropped a connection from 127.0.0.1:", 0), 0u) << line;
  RendezvousClient good = client_of(store.address(), 0);
  good.put("k", "v");
  EXPECT_EQ(good.get("k"), "v");
}

// An authenticated connection that then breaks the protocol.
struct AuthenticatedRaw : RawConnection {
  explicit AuthenticatedRaw(const std::string& address, std::uint64_t rank)
      : RawConnection(address) {
    authenticate(io, socket, Role::Connector, {kJob, kSecret, 10s, rank});
  }
  void send_request_header(std::uint32_t kind, std::uint32_t key_length,
                           std::uint32_t value_length) {
    StoreRequestBytes bytes{};
    std::size_t pos = 0;
    put_le<std::uint32_t>(bytes, pos, kind);
    put_le<std::uint32_t>(bytes, pos, key_length);
    put_le<std::uint32_t>(bytes, pos, value_length);
    send(bytes);
  }
};

TEST(Rendezvous, AbsurdSizesAreDroppedWithAReason) {
  TestServer store;
  {
    AuthenticatedRaw rank9(store.address(), 9);
    rank9.send_request_header(1, 0xffffffffu, 0);
    EXPECT_TRUE(rank9.closed_by_server());
    EXPECT_NE(store.log.wait_for("dropped rank 9 (127.0.0.1:"), "");
    EXPECT_NE(store.log.wait_for("key length 4294967295 exceeds the limit of 1024 bytes"), "");
  }
  {
    AuthenticatedRaw rank8(store.address(), 8);
    rank8.send_request_header(1, 3, kMaxValueBytes + 1);
    EXPECT_TRUE(rank8.closed_by_server());
    EXPECT_NE(store.log.wait_for("value length 1048577 exceeds the limit of 1048576 bytes"), "");
  }
  {
    AuthenticatedRaw rank7(store.address(), 7);
    rank7.send_request_header(42, 3, 0);
    EXPECT_TRUE(rank7.closed_by_server());
    EXPECT_NE(store.log.wait_for("dropped rank 7 (127.0.0.1:"), "");
    EXPECT_NE(store.log.wait_for("unknown request kind 42"), "");
  }
  RendezvousClient good = client_of(store.address(), 0);
  good.put("k", "v");
  EXPECT_EQ(good.get("k"), "v");
}

TEST(Rendezvous, ClientRefusesKeysAndValuesBeyondTheLimits) {
  TestServer store;
  RendezvousClient client = client_of(store.address(), 0);
  EXPECT_THROW(client.put("", "v"), UsageError);
  EXPECT_THROW(client.get(std::string(kMaxKeyBytes + 1, 'k')), UsageError);
  EXPECT_THROW(client.put("k", std::string(kMaxValueBytes + 1, 'v')), UsageError);
  client.put("k", std::string(kMaxValueBytes, 'v'));
  EXPECT_EQ(client.get("k").size(), kMaxValueBytes);
}

void stop_with_stalled_handshakes(testing::Stall stall);

// Handshakes that stall (silent, or stopped after their Hello) hold up neither other clients nor
// the server's stop.
TEST(Rendezvous, StoppingEndsPendingHandshakesAndGets) {
  for (const testing::Stall stall : {testing::Stall::before_hello, testing::Stall::after_hello}) {
    SCOPED_TRACE(stall == testing::Stall::before_hello ? "silent" : "after its Hello");
    stop_with_stalled_handshakes(stall);
  }
}

void stop_with_stalled_handshakes(testing::Stall stall) {
  auto store = std::make_unique<TestServer>();
  const auto port = parse_host_port(store->address()).port;
  testing::StalledConnections stalled(port, 2, stall, kJob);
  RendezvousClient client = client_of(store->address(), 0);
  client.put("k", "v");  // served meanwhile
  EXPECT_EQ(client.get("k"), "v");
  stalled.expect_all_open();
  auto pending = std::async(std::launch::async, [&] { return client.get("never"); });
  std::this_thread::sleep_for(100ms);
  // The handshake timeout is 30 s: stopping must not wait for it.
  stalled.expect_closed_by([&] { store.reset(); });
  try {
    pending.get();
    FAIL() << "get returned";
  } catch (const TransportError& e) {
    EXPECT_NE(std::string(e.what()).find("closed the connection while we were waiting for key "
                                         "'never'"),
              std::string::npos)
        << e.what();
  }
}

TEST(Rendezvous, JoinServesTheStoreOnRankZero) {
  const std::string address = "127.0.0.1:" + std::to_string(multilane::testing::loopback_port());
  const auto env_of = [&](int rank) {
    return JobEnvironment::from_variables({{"MULTILANE_RANK", std::to_string(rank)},
                                           {"MULTILANE_SIZE", "3"},
                                           {"MULTILANE_RENDEZVOUS", address},
                                           {"MULTILANE_RENDEZVOUS_SERVER", "rank0"},
                                           {"MULTILANE_SECRET", "join test secret 0123"},
                                           {"MULTILANE_TIMEOUT", "10"}});
  };
  auto rank0 = join_rendezvous(env_of(0));
  std::vector<std::future<std::string>> others;
  for (int r = 1; r < 3; ++r) {
    others.push_back(std::async(std::launch::async, [&, r] {
      auto rendezvous = join_rendezvous(env_of(r));
      rendezvous->put(lanes_key(r), "r" + std::to_string(r));
      return rendezvous->get(lanes_key(0));
    }));
  }
  rank0->put(lanes_key(0), "r0");
  EXPECT_EQ(rank0->get(lanes_key(1)), "r1");
  EXPECT_EQ(rank0->get(lanes_key(2)), "r2");
  for (auto& other : others) EXPECT_EQ(other.get(), "r0");
  EXPECT_EQ(rank0->address(), address);
}

TEST(Rendezvous, LoneProcessGetsAnInProcessStore) {
  JobEnvironment env;
  env.timeout = 100ms;
  auto store = join_rendezvous(env);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->address(), "in-process");
  store->put(lanes_key(0), "here");
  EXPECT_EQ(store->get(lanes_key(0)), "here");
  try {
    store->get(lanes_key(1));
    FAIL() << "get returned";
  } catch (const TransportError& e) {
    EXPECT_EQ(std::string(e.what()),
              "timed out after 0.1 s waiting for key 'lanes/1' at the in-process rendezvous "
              "(rank 1 has not published its addresses: did it start?)");
  }
}

TEST(Rendezvous, ServerThatCannotBindSaysWhere) {
  TestServer store;
  try {
    RendezvousServer second(store.address(), kJob, kSecret);
    FAIL() << "bound twice";
  } catch (const TransportError& e) {
    EXPECT_EQ(std::string(e.what()),
              "cannot serve the rendezvous at " + store.address() + ": Address already in use");
  }
}

}  // namespace
}  // namespace multilane::runtime
