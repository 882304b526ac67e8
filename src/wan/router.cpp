// wan/router.cpp — the aggregate router (see router.hpp).
#include "wan/router.hpp"

#include <fmt/format.h>

#include "runtime/streams/stream_set.hpp"
#include "runtime/tcp/transport_error.hpp"
#include "wan/path_connect.hpp"
#include "wan/progress.hpp"

namespace multilane::wan {

namespace {
constexpr std::uint32_t kAnyRank = 0xffffffff;  // parking key for a peer router's site
constexpr auto kSweepPeriod = std::chrono::milliseconds{100};
constexpr std::uint64_t kMaxChunk = 64 << 20;
}  // namespace

// A chunk between its arrival and its departure (not zero-filled: it is read over at once).
struct Router::Held {
  RoutedChunk chunk;
  std::unique_ptr<std::byte[]> bytes;
  std::span<std::byte> payload;
};

std::string stats_text(const RouterStats& s) {
  return fmt::format(
      "{} chunks forwarded, {} to other sites, {} to ranks; {} ranks and {} peer "
      "routers connected, {} refused",
      s.chunks, approx_size(s.bytes_to_sites), approx_size(s.bytes_to_ranks), s.ranks, s.peers,
      s.refused);
}

Router::Router(const RouterOptions& options, Log log)
    : options_(options),
      log_(std::move(log)),
      work_(asio::make_work_guard(loop_)),
      sweeper_(loop_) {
  GateOptions gate;
  gate.listen = options.listen;
  gate.job_id = options.job_id;
  gate.secret = options.secret;
  gate.handshake_timeout = options.timeout;
  try {
    gate_ = std::make_unique<AuthGate>(
        loop_, gate,
        [this](asio::io_context&, asio::ip::tcp::socket socket, std::uint64_t identity,
               runtime::Clock::time_point) { admit(std::move(socket), identity); },
        [this](const std::string& peer, const std::string& reason) {
          ++refused_;
          say(fmt::format("refused {}: {}", peer, reason));
        });
  } catch (const std::system_error& e) {
    throw runtime::TransportError(
        ErrorKind::resource,
        fmt::format("cannot listen on {}: {}", endpoint_text(options.listen), e.code().message()));
  }
}

Router::~Router() {
  stopping_ = true;
  gate_->stop();
  if (dialer_.joinable()) dialer_.join();
}

std::uint16_t Router::port() const {
  return gate_->port();
}

RouterStats Router::stats() const {
  return {chunks_, bytes_to_sites_, bytes_to_ranks_, ranks_count_, peers_count_, refused_};
}

void Router::say(std::string line) {
  asio::post(loop_, [this, line = std::move(line)] {
    if (log_) log_(line);
  });
}

void Router::run() {
  gate_->start();
  dialer_ = std::thread([this] { dial_peers(); });
  expire_parked();
  loop_.run();
}

void Router::stop() {
  asio::post(loop_, [this] {
    stopping_ = true;
    gate_->stop();
    sweeper_.cancel();
    for (auto& [site, link] : std::map(peers_)) link->close();
    for (auto& [rank, link] : std::map(ranks_)) link->close();
    for (auto& [key, parked] : parked_) {
      for (auto& p : parked) p.from->close();
    }
    parked_.clear();
    paused_.clear();
    work_.reset();
  });
}

// On a gate worker: who is it, and may it link here?
void Router::admit(asio::ip::tcp::socket socket, std::uint64_t identity) {
  const NodeIdentity node = unpack_node(identity);
  const std::string peer = runtime::peer_name(socket);
  std::string problem;
  if (node.kind == NodeKind::Rank && node.site != options_.site) {
    problem =
        fmt::format("a rank of site {} (this router serves site {})", node.site, options_.site);
  } else if (node.kind == NodeKind::Router &&
             (node.id != options_.index || node.site >= options_.site ||
              !options_.peers.contains(node.site))) {
    problem = fmt::format("router {} of site {} is no peer of router {} of site {}", node.id,
                          node.site, options_.index, options_.site);
  } else if (node.kind != NodeKind::Rank && node.kind != NodeKind::Router) {
    problem = "neither a rank nor a router";
  }
  if (!problem.empty()) {
    ++refused_;
    return say(fmt::format("refused {}: {}", peer, problem));
  }
  auto holder = std::make_shared<asio::ip::tcp::socket>(std::move(socket));
  const int fd = holder->release();
  asio::post(loop_, [this, fd, node] { add_link(gate_->hand_over(fd), node); });
}

// Router i of this site dials router i of every higher-numbered site, retrying until it is up.
void Router::dial_peers() {
  runtime::StreamOptions o;
  o.job_id = options_.job_id;
  o.secret = options_.secret;
  o.timeout = options_.timeout;
  o.pacing_rate = options_.wan_pacing;
  o.send_buffer = o.receive_buffer = options_.wan_buffer;
  const std::uint64_t me = pack_node({NodeKind::Router, options_.site, options_.index});
  for (const auto& [site, endpoint] : options_.peers) {
    if (site <= options_.site) continue;
    const auto deadline = runtime::Clock::now() + options_.timeout;
    while (!stopping_) {
      asio::io_context io;
      try {
        const auto attempt = std::min(deadline, runtime::Clock::now() + std::chrono::seconds(1));
        auto socket = runtime::connect_stream(io, endpoint, attempt, o, me).socket;
        const int fd = socket.release();
        const std::uint16_t peer_site = site;
        asio::post(loop_, [this, fd, peer_site] {
          add_link(gate_->hand_over(fd), {NodeKind::Router, peer_site, options_.index});
        });
        break;
      } catch (const std::exception& e) {
        if (runtime::Clock::now() >= deadline) {
          say(fmt::format("cannot reach router {} of site {} at {}: {}", options_.index, site,
                          endpoint_text(endpoint), e.what()));
          break;
        }
      }
    }
  }
}

void Router::add_link(asio::ip::tcp::socket socket, const NodeIdentity& node) {
  if (stopping_) return;
  if (node.kind == NodeKind::Router) {
    runtime::StreamOptions o;
    o.pacing_rate = options_.wan_pacing;
    runtime::tune_connected_stream(socket, o);
    if (options_.wan_buffer > 0) {
      asio::error_code ignored;
      socket.set_option(asio::socket_base::send_buffer_size(options_.wan_buffer), ignored);
    }
  }
  auto slot = std::make_shared<std::shared_ptr<Held>>();
  auto self_link = std::make_shared<std::weak_ptr<ChunkLink>>();
  ChunkLink::Handlers handlers;
  handlers.place = [slot, self_link, this](const RoutedChunk& chunk) -> std::span<std::byte> {
    if (chunk.frame.length > kMaxChunk) {
      if (auto link = self_link->lock()) link->close();
      say(fmt::format("dropped a link: a chunk of {} bytes is larger than {}", chunk.frame.length,
                      approx_size(kMaxChunk)));
      return {};
    }
    auto held = std::make_shared<Held>();
    held->chunk = chunk;
    held->bytes = std::make_unique_for_overwrite<std::byte[]>(chunk.frame.length);
    held->payload = {held->bytes.get(), chunk.frame.length};
    *slot = held;
    return held->payload;
  };
  handlers.arrived = [slot, self_link, this](const RoutedChunk&) {
    auto link = self_link->lock();
    return link ? route(link, std::move(*slot)) : false;
  };
  const std::string who = node.kind == NodeKind::Rank
                              ? fmt::format("rank {}", node.id)
                              : fmt::format("router {} of site {}", node.id, node.site);
  handlers.failed = [this, self_link, node, who](const runtime::Failure& why) {
    auto link = self_link->lock();
    if (node.kind == NodeKind::Rank && ranks_.contains(node.id) && ranks_[node.id] == link) {
      ranks_.erase(node.id);
      --ranks_count_;
    }
    if (node.kind == NodeKind::Router && peers_.contains(node.site) && peers_[node.site] == link) {
      peers_.erase(node.site);
      --peers_count_;
    }
    if (link) {
      auto waiting = std::move(paused_[link.get()]);
      paused_.erase(link.get());
      for (auto& input : waiting) input->resume();
    }
    if (!stopping_) say(fmt::format("{} left: {}", who, why.text));
  };
  runtime::FrameCheck check{options_.job_id, std::uint64_t{1} << 40};
  auto link = std::make_shared<ChunkLink>(std::move(socket), check, std::move(handlers));
  *self_link = link;
  RankAddress key{node.site, kAnyRank};
  if (node.kind == NodeKind::Rank) {
    if (ranks_.contains(node.id)) {
      link->close();
      return say(fmt::format("refused a second link of rank {}", node.id));
    }
    ranks_[node.id] = link;
    ++ranks_count_;
    key.rank = node.id;
  } else {
    if (peers_.contains(node.site)) {
      link->close();
      return say(fmt::format("refused a second link to site {}", node.site));
    }
    peers_[node.site] = link;
    ++peers_count_;
  }
  say(fmt::format("{} linked from {}", who, link->name()));
  link->start();
  deliver_parked(key);
}

std::shared_ptr<ChunkLink> Router::destination(const RankAddress& to) {
  if (to.site == options_.site) {
    auto it = ranks_.find(to.rank);
    return it == ranks_.end() ? nullptr : it->second;
  }
  auto it = peers_.find(to.site);
  return it == peers_.end() ? nullptr : it->second;
}

// Returns whether `from` may go on reading.
bool Router::route(const std::shared_ptr<ChunkLink>& from, std::shared_ptr<Held> held) {
  const RankAddress to = held->chunk.to;
  if (to.site != options_.site && !options_.peers.contains(to.site)) {
    say(fmt::format("dropped the link from {}: no route to site {}", from->name(), to.site));
    from->close();
    return false;
  }
  auto link = destination(to);
  if (!link) {
    const RankAddress key = to.site == options_.site ? to : RankAddress{to.site, kAnyRank};
    parked_[key].push_back({from, std::move(held), std::chrono::steady_clock::now()});
    return false;
  }
  forward(link, std::move(held));
  if (link->queued_bytes() > options_.queue_limit) {
    paused_[link.get()].push_back(from);
    return false;
  }
  return true;
}

void Router::forward(const std::shared_ptr<ChunkLink>& to, std::shared_ptr<Held> held) {
  const bool to_site = held->chunk.to.site != options_.site;
  auto send = [this, to, held, to_site] {
    to->write(held->chunk, held->payload, [this, to, held, to_site](bool ok) {
      if (!ok) return;
      ++chunks_;
      (to_site ? bytes_to_sites_ : bytes_to_ranks_) += held->payload.size();
      resume_waiting(to);
    });
  };
  if (options_.forward_delay.count() == 0) return send();
  auto timer = std::make_shared<asio::steady_timer>(loop_, options_.forward_delay);
  timer->async_wait([timer, send](const asio::error_code& ec) {
    if (!ec) send();
  });
}

void Router::resume_waiting(const std::shared_ptr<ChunkLink>& link) {
  if (link->queued_bytes() > options_.queue_limit) return;
  auto it = paused_.find(link.get());
  if (it == paused_.end()) return;
  auto waiting = std::move(it->second);
  paused_.erase(it);
  for (auto& input : waiting) input->resume();
}

void Router::deliver_parked(const RankAddress& key) {
  auto it = parked_.find(key);
  if (it == parked_.end()) return;
  auto parked = std::move(it->second);
  parked_.erase(it);
  for (Parked& p : parked) {
    auto link = destination(p.held->chunk.to);
    if (!link) continue;
    forward(link, std::move(p.held));
    p.from->resume();
  }
}

void Router::expire_parked() {
  const auto now = std::chrono::steady_clock::now();
  for (auto it = parked_.begin(); it != parked_.end();) {
    auto& queue = it->second;
    while (!queue.empty() && now - queue.front().since >= options_.timeout) {
      Parked& p = queue.front();
      say(fmt::format("dropped the link from {}: a chunk for {} waited {} s and {} is not linked",
                      p.from->name(), to_string(p.held->chunk.to),
                      std::chrono::duration_cast<std::chrono::seconds>(options_.timeout).count(),
                      it->first.rank == kAnyRank ? "its site's router" : "that rank"));
      p.from->close();
      queue.pop_front();
    }
    it = queue.empty() ? parked_.erase(it) : std::next(it);
  }
  sweeper_.expires_after(kSweepPeriod);
  sweeper_.async_wait([this](const asio::error_code& ec) {
    // A wait that had already completed when stop() cancelled the timer still runs: re-arming
    // then would keep the loop (and whoever joins it) alive forever.
    if (!ec && !stopping_) expire_parked();
  });
}

}  // namespace multilane::wan
