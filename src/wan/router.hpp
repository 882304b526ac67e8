// wan/router.hpp — one router process of the aggregate-router method (`multilane router`).
//
// A site has R routers; router i of a site links to router i of every other site (the site
// with the lower number dials) and every rank of its site links to all R routers of the site.
// A router forwards each chunk by its destination alone (route_header.hpp): to the peer
// router of the destination's site, or, for its own site, to the destination rank. It never
// reassembles messages: striping across routers and in-place assembly are the ranks' work
// (routed_endpoint.hpp). All links are authenticated with the job secret (auth_gate.hpp);
// a rank must belong to the router's site, a router must have the same index.
//
// Flow control: a chunk is queued on its outgoing link; while that link's queue holds more
// than `queue_limit` bytes, the link the chunk came from is not read (TCP pushes back). A chunk
// for a rank that has not connected yet waits (its incoming link paused) up to `timeout`, then
// that link is dropped with a message naming the missing rank.
//
// `wan_pacing` paces the links to other sites' routers (SO_MAX_PACING_RATE): a router's external
// NIC slower than the inter-site link, on one machine. `forward_delay` holds every chunk that
// long before forwarding it (tests and demonstrations: chunks via this router then arrive
// after those of the others).
#pragma once

#include <asio.hpp>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "runtime/tcp/auth.hpp"
#include "wan/auth_gate.hpp"
#include "wan/chunk_link.hpp"

namespace multilane::wan {

struct RouterOptions {
  std::uint16_t site = 0;
  std::uint32_t index = 0;
  asio::ip::tcp::endpoint listen;
  std::map<std::uint16_t, asio::ip::tcp::endpoint> peers;  // router `index` of the other sites
  std::uint64_t job_id = 0;
  runtime::JobSecret secret;
  std::chrono::milliseconds timeout{60'000};
  std::uint64_t queue_limit = 64 << 20;
  std::uint64_t wan_pacing = 0;  // bytes/s on links to other sites' routers, 0: unpaced
  int wan_buffer = 0;            // SO_SNDBUF/SO_RCVBUF of those links, 0: the system's
  std::chrono::milliseconds forward_delay{0};
  std::uint64_t max_chunk = std::uint64_t{1} << 32;
};

struct RouterStats {
  std::uint64_t chunks = 0;          // forwarded
  std::uint64_t bytes_to_sites = 0;  // to other sites' routers
  std::uint64_t bytes_to_ranks = 0;  // to ranks of this site
  std::uint64_t ranks = 0;           // connected now
  std::uint64_t peers = 0;           // peer routers connected now
  std::uint64_t refused = 0;
};
std::string stats_text(const RouterStats& stats);

class Router {
 public:
  using Log = std::function<void(const std::string&)>;  // on the loop's thread
  Router(const RouterOptions& options, Log log);
  ~Router();
  std::uint16_t port() const;
  void run();   // until stop()
  void stop();  // any thread
  RouterStats stats() const;

 private:
  struct Held;
  void admit(asio::ip::tcp::socket socket, std::uint64_t identity);
  void dial_peers();
  void add_link(asio::ip::tcp::socket socket, const NodeIdentity& node);
  std::shared_ptr<ChunkLink> destination(const RankAddress& to);
  bool route(const std::shared_ptr<ChunkLink>& from, std::shared_ptr<Held> held);
  void forward(const std::shared_ptr<ChunkLink>& to, std::shared_ptr<Held> held);
  void resume_waiting(const std::shared_ptr<ChunkLink>& link);
  void deliver_parked(const RankAddress& rank);
  void expire_parked();
  void say(std::string line);

  RouterOptions options_;
  Log log_;
  asio::io_context loop_;
  asio::executor_work_guard<asio::io_context::executor_type> work_;
  asio::steady_timer sweeper_;
  std::unique_ptr<AuthGate> gate_;
  std::thread dialer_;
  std::map<std::uint16_t, std::shared_ptr<ChunkLink>> peers_;
  std::map<std::uint32_t, std::shared_ptr<ChunkLink>> ranks_;
  // Links paused because the queue of `key` link is over its limit.
  std::map<ChunkLink*, std::vector<std::shared_ptr<ChunkLink>>> paused_;
  struct Parked {
    std::shared_ptr<ChunkLink> from;
    std::shared_ptr<Held> held;
    std::chrono::steady_clock::time_point since;
  };
  std::map<RankAddress, std::deque<Parked>> parked_;  // for ranks (or sites) not connected yet
  std::atomic<bool> stopping_{false};                 // read by the dialer thread
  std::atomic<std::uint64_t> chunks_{0}, bytes_to_sites_{0}, bytes_to_ranks_{0}, ranks_count_{0},
      peers_count_{0}, refused_{0};
};

}  // namespace multilane::wan
