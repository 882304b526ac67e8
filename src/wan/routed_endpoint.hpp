// wan/routed_endpoint.hpp — a rank's end of the aggregate-router network.
//
// Three ways to reach ranks of other sites, for comparison as in the aggregate-router paper:
//   aggregate (AR)  messages of at least `threshold` bytes are cut into chunks spread over all R
//                   routers of the site (chunk i via router i mod R); smaller ones go whole
//                   through one router, rotating;
//   static (SR)     every message goes whole through this rank's fixed router (rank mod R);
//   direct (AA)     one TCP connection to every other rank, no routers.
// Every chunk carries its message id, offset and total, so the receiver writes it in place and
// counts what arrived, whatever the order across routers; a chunk of a message whose receive is
// not posted yet lands in a buffer of its own and is copied once the receive is posted.
//
// Contract: messages between two ranks are matched in order (the k-th send from A to B fills
// B's k-th receive from A, of exactly that size). Calls block, driving all links from the
// calling thread, and fail with TransportError when nothing moved for `timeout` or a link
// broke (the endpoint is then closed). Links are authenticated with the job secret.
#pragma once

#include <asio.hpp>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/tcp/auth.hpp"
#include "wan/route_header.hpp"

namespace multilane::wan {

enum class RouteMode { Aggregate, Static, Direct };
std::string to_string(RouteMode mode);              // "aggregate", "static", "direct"
RouteMode parse_route_mode(std::string_view text);  // UsageError naming the allowed names

struct RankOptions {
  RankAddress self;
  RouteMode mode = RouteMode::Aggregate;
  std::vector<asio::ip::tcp::endpoint> routers;  // the R routers of this rank's site, in order
  std::map<RankAddress, asio::ip::tcp::endpoint> directory;  // direct: the other ranks
  asio::ip::tcp::endpoint listen;  // direct: where this rank listens (port 0: any)
  std::uint64_t threshold = 32 << 10;
  std::uint64_t max_chunk = 1 << 20;
  std::uint64_t job_id = 0;
  runtime::JobSecret secret;
  std::chrono::milliseconds timeout{60'000};
  std::uint64_t direct_pacing = 0;  // direct: bytes/s of each link to another site (its NIC)
  std::uint64_t max_message = std::uint64_t{1} << 32;
};

struct RankSend {
  RankAddress to;
  std::span<const std::byte> data;
};
struct RankRecv {
  RankAddress from;
  std::span<std::byte> buffer;
};

class RankEndpoint {
 public:
  explicit RankEndpoint(const RankOptions& options);  // direct: listens already
  ~RankEndpoint();
  RankEndpoint(RankEndpoint&&) noexcept;
  RankEndpoint& operator=(RankEndpoint&&) noexcept;
  std::uint16_t port() const;  // direct mode's listening port, else 0
  // Links to the routers, or to every rank of the directory (`directory`, when given, replaces
  // the options' one: ports of listening ranks are known only once they exist).
  void connect(const std::map<RankAddress, asio::ip::tcp::endpoint>& directory = {});

  void send(const RankAddress& to, std::span<const std::byte> data);
  void recv(const RankAddress& from, std::span<std::byte> buffer);
  void exchange(std::span<const RankSend> sends, std::span<const RankRecv> receives);
  // Offsets of the chunks of the last receive, in the order they arrived.
  const std::vector<std::uint64_t>& last_arrivals() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace multilane::wan
