// wan/routed_endpoint.cpp — a rank's end of the aggregate-router network (routed_endpoint.hpp).
#include "wan/routed_endpoint.hpp"

#include <fmt/format.h>

#include <cstring>
#include <future>
#include <optional>
#include <set>
#include <thread>

#include "multilane/errors.hpp"
#include "runtime/streams/stream_set.hpp"
#include "runtime/tcp/io_wait.hpp"
#include "runtime/tcp/stripe.hpp"
#include "runtime/tcp/transport_error.hpp"
#include "wan/chunk_link.hpp"
#include "wan/path_connect.hpp"

namespace multilane::wan {

using runtime::Clock;
using runtime::TransportError;

std::string to_string(RouteMode mode) {
  switch (mode) {
    case RouteMode::Aggregate:
      return "aggregate";
    case RouteMode::Static:
      return "static";
    case RouteMode::Direct:
      return "direct";
  }
  return "?";
}

RouteMode parse_route_mode(std::string_view text) {
  for (RouteMode mode : {RouteMode::Aggregate, RouteMode::Static, RouteMode::Direct}) {
    if (text == to_string(mode)) return mode;
  }
  throw UsageError(fmt::format("mode \"{}\" is none of aggregate, static, direct", text));
}

namespace {

using Key = std::pair<RankAddress, std::uint64_t>;  // source, message id

// A posted receive.
struct Expect {
  std::span<std::byte> buffer;
  std::uint64_t received = 0;
  std::vector<std::uint64_t> arrivals;
  bool complete() const { return received >= buffer.size(); }
};

// Chunks of a message whose receive was not posted when they came.
struct Early {
  std::unique_ptr<std::byte[]> bytes;
  std::uint64_t total = 0;
  std::uint64_t received = 0;
  std::vector<std::uint64_t> arrivals;
  std::set<std::uint64_t> in_flight;  // offsets of chunks being read into `bytes` now
  Expect* redirect = nullptr;         // posted meanwhile: those chunks are copied there
};

struct SendOp {
  std::uint64_t chunks = 0;
  std::uint64_t written = 0;
  bool complete() const { return written >= chunks; }
};

}  // namespace

struct RankEndpoint::Impl {
  RankOptions options;
  asio::io_context io;
  std::unique_ptr<runtime::StreamListener> listener;  // direct mode
  std::vector<std::shared_ptr<ChunkLink>> routers;
  std::map<RankAddress, std::shared_ptr<ChunkLink>> direct;
  std::map<RankAddress, std::uint64_t> next_send, next_recv;
  std::map<Key, Expect*> posted;
  std::map<Key, Early> early;
  std::vector<std::uint64_t> last_arrivals;
  std::uint64_t moved = 0;  // progress: bytes sent and received
  runtime::Outcome failure;

  runtime::StreamOptions stream_options() const {
    runtime::StreamOptions o;
    o.job_id = options.job_id;
    o.secret = options.secret;
    o.timeout = options.timeout;
    return o;
  }

  void fail(runtime::Failure why) {
    if (!failure) failure = std::move(why);
  }

  // --- receiving ---

  std::span<std::byte> place(const RoutedChunk& c) {
    if (c.to != options.self) {
      fail({ErrorKind::protocol,
            fmt::format("a chunk for {} reached {}", to_string(c.to), to_string(options.self))});
      return {};
    }
    const Key key{c.from, c.frame.message_id};
    if (auto it = posted.find(key); it != posted.end()) {
      Expect& e = *it->second;
      if (c.frame.total != e.buffer.size()) {
        fail({ErrorKind::mismatch,
              fmt::format("message {} from {} has {} bytes, the receive buffer {}",
                          c.frame.message_id, to_string(c.from), c.frame.total, e.buffer.size())});
        return {};
      }
      return e.buffer.subspan(c.frame.offset, c.frame.length);
    }
    Early& early_message = early[key];
    if (!early_message.bytes) {
      early_message.bytes = std::make_unique_for_overwrite<std::byte[]>(c.frame.total);
      early_message.total = c.frame.total;
    } else if (early_message.total != c.frame.total) {
      fail({ErrorKind::protocol, fmt::format("chunks of message {} from {} disagree on its length",
                                             c.frame.message_id, to_string(c.from))});
      return {};
    }
    early_message.in_flight.insert(c.frame.offset);
    return {early_message.bytes.get() + c.frame.offset, c.frame.length};
  }

  bool arrived(const RoutedChunk& c) {
    const Key key{c.from, c.frame.message_id};
    moved += c.frame.length;
    if (auto it = early.find(key);
        it != early.end() && it->second.in_flight.erase(c.frame.offset)) {
      Early& e = it->second;
      if (e.redirect) {
        std::memcpy(e.redirect->buffer.data() + c.frame.offset, e.bytes.get() + c.frame.offset,
                    c.frame.length);
        e.redirect->received += c.frame.length;
        e.redirect->arrivals.push_back(c.frame.offset);
        if (e.in_flight.empty()) early.erase(it);
      } else {
        e.received += c.frame.length;
        e.arrivals.push_back(c.frame.offset);
      }
      return true;
    }
    if (auto it = posted.find(key); it != posted.end()) {
      it->second->received += c.frame.length;
      it->second->arrivals.push_back(c.frame.offset);
    }
    return true;
  }

  void post(const RankAddress& from, Expect& expect) {
    const Key key{from, next_recv[from]++};
    if (auto it = early.find(key); it != early.end()) {
      Early& e = it->second;
      if (e.total != expect.buffer.size()) {
        throw TransportError(
            ErrorKind::mismatch,
            fmt::format("message {} from {} has {} bytes, the receive buffer {}", key.second,
                        to_string(from), e.total, expect.buffer.size()));
      }
      if (e.total > 0) std::memcpy(expect.buffer.data(), e.bytes.get(), e.total);
      expect.received = e.received;
      expect.arrivals = e.arrivals;
      if (e.in_flight.empty()) {
        early.erase(it);
      } else {
        e.redirect = &expect;  // chunks being read now are copied over when they arrive
      }
    }
    posted[key] = &expect;
  }

  // --- sending ---

  std::shared_ptr<ChunkLink> link_for(const RankAddress& to, int chunk) {
    switch (options.mode) {
      case RouteMode::Aggregate:
        return routers[static_cast<std::size_t>(chunk) % routers.size()];
      case RouteMode::Static:
        return routers[options.self.rank % routers.size()];
      case RouteMode::Direct:
        break;
    }
    auto it = direct.find(to);
    if (it == direct.end()) throw UsageError(fmt::format("no link to {}", to_string(to)));
    return it->second;
  }

  // One lane: pieces of at most max_chunk (so routers pipeline them); several: stripe.hpp's plan.
  std::vector<runtime::Chunk> cut(std::uint64_t size, int lanes, int first) const {
    if (lanes > 1) {
      return runtime::plan_chunks(size, lanes, {options.threshold, options.max_chunk}, first);
    }
    std::vector<runtime::Chunk> chunks;
    for (std::uint64_t offset = 0; offset < size || chunks.empty(); offset += options.max_chunk) {
      chunks.push_back({0, offset, std::min(options.max_chunk, size - offset)});
    }
    return chunks;
  }

  void start_send(const RankSend& s, SendOp& op) {
    if (s.to == options.self) throw UsageError("a rank cannot send to itself here");
    const std::uint64_t id = next_send[s.to]++;
    const int lanes = options.mode == RouteMode::Aggregate ? static_cast<int>(routers.size()) : 1;
    // Small messages rotate over the routers (chunk index offset by the message id).
    const int first =
        static_cast<int>((id + s.to.rank + options.self.rank) % static_cast<std::uint64_t>(lanes));
    const auto chunks = cut(s.data.size(), lanes, first);
    op.chunks = chunks.size();
    const std::uint16_t flags = chunks.size() > 1 ? runtime::kFrameStriped : 0;
    for (const runtime::Chunk& c : chunks) {
      const RoutedChunk header{
          options.self, s.to, {flags, options.job_id, 0, id, c.offset, c.length, s.data.size(), 0}};
      link_for(s.to, c.stream)
          ->write(header, s.data.subspan(c.offset, c.length),
                  [this, &op, length = c.length](bool ok) {
                    if (!ok) return fail({ErrorKind::peer_gone, "a link closed while sending"});
                    ++op.written;
                    moved += length;
                  });
    }
  }

  // --- links ---

  void add_link(asio::ip::tcp::socket socket, std::optional<RankAddress> peer) {
    ChunkLink::Handlers handlers;
    handlers.place = [this](const RoutedChunk& c) { return place(c); };
    handlers.arrived = [this](const RoutedChunk& c) { return arrived(c); };
    handlers.failed = [this](const runtime::Failure& why) { fail(why); };
    auto link = std::make_shared<ChunkLink>(
        std::move(socket), runtime::FrameCheck{options.job_id, options.max_message},
        std::move(handlers));
    link->start();
    if (peer) {
      direct[*peer] = link;
    } else {
      routers.push_back(link);
    }
  }

  std::vector<std::shared_ptr<ChunkLink>> all_links() const {
    auto links = routers;
    for (const auto& [address, link] : direct) links.push_back(link);
    return links;
  }

  // Closes every link and lets their handlers run: nothing refers to callers' buffers after.
  void close_all() {
    const auto links = all_links();
    for (const auto& link : links) link->close();
    runtime::drain(io, [&] {
      for (const auto& link : links) {
        if (!link->idle()) return false;
      }
      return true;
    });
  }

  void wait(const std::function<bool()>& done) {
    std::uint64_t seen = moved;
    auto deadline = Clock::now() + options.timeout;
    auto finished = [&] { return failure || done(); };
    while (!runtime::run_until(io, deadline, finished)) {
      if (moved == seen) {
        fail({ErrorKind::timeout, fmt::format("timed out after {}: nothing moved",
                                              runtime::seconds_text(options.timeout))});
        break;
      }
      seen = moved;
      deadline = Clock::now() + options.timeout;
    }
    if (failure) {
      close_all();
      throw TransportError(failure->kind,
                           fmt::format("{}: {}", to_string(options.self), failure->text));
    }
  }
};

RankEndpoint::RankEndpoint(const RankOptions& options) : impl_(std::make_unique<Impl>()) {
  impl_->options = options;
  if (options.max_chunk < 1) throw UsageError("the largest chunk must be at least 1 byte");
  if (options.mode != RouteMode::Direct && options.routers.empty()) {
    throw UsageError("the aggregate and static modes need the site's routers");
  }
  if (options.mode == RouteMode::Direct) {
    impl_->listener =
        std::make_unique<runtime::StreamListener>(options.listen, impl_->stream_options());
  }
}

RankEndpoint::~RankEndpoint() {
  if (impl_) impl_->close_all();
}
RankEndpoint::RankEndpoint(RankEndpoint&&) noexcept = default;
RankEndpoint& RankEndpoint::operator=(RankEndpoint&&) noexcept = default;

std::uint16_t RankEndpoint::port() const {
  return impl_->listener ? impl_->listener->port() : 0;
}

void RankEndpoint::connect(const std::map<RankAddress, asio::ip::tcp::endpoint>& directory) {
  Impl& m = *impl_;
  if (!directory.empty()) m.options.directory = directory;
  const auto deadline = Clock::now() + m.options.timeout;
  const std::uint64_t me = pack_node({NodeKind::Rank, m.options.self.site, m.options.self.rank});
  if (m.options.mode != RouteMode::Direct) {
    for (const auto& router : m.options.routers) {
      m.add_link(runtime::connect_stream(m.io, router, deadline, m.stream_options(), me).socket,
                 std::nullopt);
    }
    return;
  }
  // Direct: dial the ranks above this one, accept those below, all at the same time.
  std::vector<std::pair<RankAddress, asio::ip::tcp::endpoint>> dial;
  int expected = 0;
  for (const auto& [address, endpoint] : m.options.directory) {
    if (address == m.options.self) continue;
    if (m.options.self < address) {
      dial.emplace_back(address, endpoint);
    } else {
      ++expected;
    }
  }
  asio::io_context accept_io;
  auto accepted = std::async(std::launch::async, [&] {
    std::vector<std::pair<RankAddress, asio::ip::tcp::socket>> sockets;
    if (expected == 0) return sockets;
    std::vector<runtime::StreamListener::Accepted> streams;
    m.listener->accept_streams(accept_io, expected, deadline, {}, streams);
    for (auto& a : streams) {
      const NodeIdentity node = unpack_node(a.identity);
      sockets.emplace_back(RankAddress{node.site, node.id}, std::move(a.socket));
    }
    return sockets;
  });
  std::vector<runtime::AuthenticatedStream> dialed;
  std::exception_ptr dial_error;
  try {
    dialed = runtime::connect_at_once(
        m.io, static_cast<int>(dial.size()), [&](int i, asio::io_context& own) {
          const auto& [address, endpoint] = dial[static_cast<std::size_t>(i)];
          runtime::StreamOptions o = m.stream_options();
          if (address.site != m.options.self.site) o.pacing_rate = m.options.direct_pacing;
          return runtime::connect_stream(own, endpoint, deadline, o, me);
        });
  } catch (...) {
    dial_error = std::current_exception();
  }
  auto incoming = accepted.get();  // bounded by the deadline
  if (dial_error) std::rethrow_exception(dial_error);
  for (auto& [address, socket] : incoming) {
    if (address.site != m.options.self.site) {
      runtime::StreamOptions o;
      o.pacing_rate = m.options.direct_pacing;
      runtime::tune_connected_stream(socket, o);
    }
    m.add_link(runtime::rehome(std::move(socket), m.io), address);
  }
  for (std::size_t i = 0; i < dialed.size(); ++i) {
    m.add_link(std::move(dialed[i].socket), dial[i].first);
  }
}

void RankEndpoint::send(const RankAddress& to, std::span<const std::byte> data) {
  const RankSend s{to, data};
  exchange({&s, 1}, {});
}

void RankEndpoint::recv(const RankAddress& from, std::span<std::byte> buffer) {
  const RankRecv r{from, buffer};
  exchange({}, {&r, 1});
}

void RankEndpoint::exchange(std::span<const RankSend> sends, std::span<const RankRecv> receives) {
  Impl& m = *impl_;
  if (m.failure) {
    throw TransportError(m.failure->kind,
                         "the endpoint is closed after an error: " + m.failure->text);
  }
  std::vector<Expect> expects(receives.size());
  std::vector<Key> keys;
  for (std::size_t i = 0; i < receives.size(); ++i) {
    expects[i].buffer = receives[i].buffer;
    keys.emplace_back(receives[i].from, m.next_recv[receives[i].from]);
    m.post(receives[i].from, expects[i]);
  }
  std::vector<SendOp> ops(sends.size());
  for (std::size_t i = 0; i < sends.size(); ++i) m.start_send(sends[i], ops[i]);
  try {
    m.wait([&] {
      for (const auto& op : ops) {
        if (!op.complete()) return false;
      }
      for (const auto& e : expects) {
        if (!e.complete()) return false;
      }
      return true;
    });
  } catch (...) {
    for (const Key& key : keys) m.posted.erase(key);
    throw;
  }
  for (const Key& key : keys) m.posted.erase(key);
  if (!expects.empty()) m.last_arrivals = expects.back().arrivals;
}

const std::vector<std::uint64_t>& RankEndpoint::last_arrivals() const {
  return impl_->last_arrivals;
}

}  // namespace multilane::wan
