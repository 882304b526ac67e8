// runtime/launch/launch_store_server.cpp — RendezvousServer (see rendezvous.hpp).
//
// One thread runs an asio io_context that accepts connections (the one accept loop,
// tcp/authenticated_acceptor.hpp) and serves authenticated ones asynchronously. Each new
// connection is authenticated on a worker thread with a private io_context; a stranger that
// never speaks therefore holds only that thread, for at most the handshake timeout. The
// authenticated socket then moves (by its descriptor) onto the serving io_context.
//
// Shutting down must not wait for handshakes to time out: the handshakes run on the worker
// pool (worker_threads.hpp), which shuts down their sockets and so ends their reads at once.
#include <fmt/format.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <map>
#include <set>
#include <thread>

#include "multilane/errors.hpp"
#include "runtime/launch/launch_store_protocol.hpp"
#include "runtime/launch/rendezvous.hpp"
#include "runtime/tcp/authenticated_acceptor.hpp"
#include "runtime/tcp/io_wait.hpp"
#include "runtime/tcp/transport_error.hpp"

namespace multilane::runtime {

namespace {

// The identity the server sends in the handshake (clients send their rank).
constexpr std::uint64_t kServerIdentity = ~std::uint64_t{0};

std::string endpoint_text(const asio::ip::tcp::endpoint& endpoint) {
  return host_port_text(endpoint.address().to_string(), endpoint.port());
}

// A descriptor owned by a handler on its way to the serving thread (closed if never adopted).
class OwnedFd {
 public:
  explicit OwnedFd(int fd) : fd_(fd) {}
  OwnedFd(OwnedFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  OwnedFd& operator=(OwnedFd&&) = delete;
  ~OwnedFd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

class Connection;

}  // namespace

struct RendezvousServer::Impl {
  Impl(const std::string& bind_address, std::uint64_t job_id, const JobSecret& secret,
       RendezvousServerOptions options);
  ~Impl();

  void log(const std::string& line);
  // io thread only:
  AcceptedHandshake handshake_steps(const std::string& peer);
  void adopt(OwnedFd fd, asio::ip::tcp::socket::protocol_type protocol, std::uint64_t identity,
             const std::string& peer);
  void handle(const std::shared_ptr<Connection>& connection, StoreRequestKind kind,
              std::string_view key, std::string_view value);
  void put(const std::shared_ptr<Connection>& connection, std::string_view key,
           std::string_view value);
  void drop(const std::shared_ptr<Connection>& connection, const std::string& reason);
  void close_all();

  asio::io_context io;
  std::unique_ptr<AuthenticatedAcceptor> acceptor;  // made once the address is bound
  std::string address;
  std::uint64_t job_id;
  JobSecret secret;
  RendezvousServerOptions options;
  std::mutex log_mutex;

  // Touched by the io thread only.
  bool closing = false;
  std::map<std::string, std::string, std::less<>> values;
  std::uint64_t stored_bytes = 0;
  std::map<std::string, std::vector<std::weak_ptr<Connection>>, std::less<>> waiting;
  std::set<std::shared_ptr<Connection>> connections;

  std::mutex handshake_mutex;
  bool stopping = false;  // guarded by handshake_mutex
  WorkerThreads handshakes;

  std::thread thread;
};

namespace {

// One authenticated client on the serving io_context. Requests are answered in order; while
// a get waits for its key a read stays posted, so a client that gives up (closes) is noticed.
class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(RendezvousServer::Impl& server, asio::ip::tcp::socket socket, std::string name)
      : server_(server), socket_(std::move(socket)), name_(std::move(name)) {}

  const std::string& name() const { return name_; }
  bool is_waiting() const { return waiting_ && !closed_; }

  void read_request() {
    read_pending_ = true;
    asio::async_read(socket_, asio::buffer(header_bytes_),
                     [self = shared_from_this()](const asio::error_code& error, std::size_t) {
                       self->on_header(error);
                     });
  }

  // Starts the answer to the request in progress (or to the get that waited).
  void answer(StoreStatus status, std::string_view body) {
    waiting_ = false;
    response_ = encode_store_response(status, body);
    asio::async_write(socket_, asio::buffer(response_),
                      [self = shared_from_this()](const asio::error_code& error, std::size_t) {
                        self->on_written(error);
                      });
  }

  void wait_for_key() {
    waiting_ = true;
    read_request();  // only to notice the client closing; a request now breaks the protocol
  }

  void close() {
    closed_ = true;
    asio::error_code ignored;
    socket_.close(ignored);
  }

 private:
  // "" when the peer simply went away (nothing worth logging).
  static std::string failure(const asio::error_code& error, std::string_view doing) {
    if (is_peer_gone(error)) return {};
    return fmt::format("{} failed: {}", doing, error.message());
  }

  void on_header(const asio::error_code& error) {
    read_pending_ = false;
    if (closed_) return;
    if (error) return server_.drop(shared_from_this(), failure(error, "reading a request"));
    if (waiting_) {
      return server_.drop(shared_from_this(),
                          "sent a request while its get was still waiting (protocol error)");
    }
    header_ = decode_store_request(header_bytes_);
    if (auto problem = store_request_problem(header_); !problem.empty()) {
      return server_.drop(shared_from_this(), problem);
    }
    body_.resize(std::size_t{header_.key_length} + header_.value_length);
    asio::async_read(socket_, asio::buffer(body_),
                     [self = shared_from_this()](const asio::error_code& error, std::size_t) {
                       self->on_body(error);
                     });
  }

  void on_body(const asio::error_code& error) {
    if (closed_) return;
    if (error) return server_.drop(shared_from_this(), failure(error, "reading a request"));
    const std::string_view body(body_);
    server_.handle(shared_from_this(), static_cast<StoreRequestKind>(header_.kind),
                   body.substr(0, header_.key_length), body.substr(header_.key_length));
  }

  void on_written(const asio::error_code& error) {
    if (closed_) return;
    if (error) return server_.drop(shared_from_this(), failure(error, "sending an answer"));
    if (!read_pending_) read_request();
  }

  RendezvousServer::Impl& server_;
  asio::ip::tcp::socket socket_;
  std::string name_;
  StoreRequestBytes header_bytes_{};
  StoreRequestHeader header_;
  std::string body_;
  std::string response_;
  bool read_pending_ = false;
  bool waiting_ = false;
  bool closed_ = false;
};

}  // namespace

RendezvousServer::Impl::Impl(const std::string& bind_address, std::uint64_t job_id_,
                             const JobSecret& secret_, RendezvousServerOptions options_)
    : job_id(job_id_), secret(secret_), options(std::move(options_)) {
  const auto endpoint = resolve_rendezvous_address(bind_address).front();
  asio::ip::tcp::acceptor listening(io);
  asio::error_code error;
  listening.open(endpoint.protocol(), error);
  if (!error) listening.set_option(asio::socket_base::reuse_address(true), error);
  if (!error) listening.bind(endpoint, error);
  if (!error) listening.listen(asio::socket_base::max_listen_connections, error);
  if (error) {
    throw TransportError(ErrorKind::resource, fmt::format("cannot serve the rendezvous at {}: {}",
                                                          bind_address, error.message()));
  }
  address = endpoint_text(listening.local_endpoint());
  acceptor = std::make_unique<AuthenticatedAcceptor>(
      std::move(listening), handshakes,
      AuthenticatedAcceptor::Handlers{
          .handshake = [this](const std::string& peer) { return handshake_steps(peer); },
          .dropped =
              [this](const std::string& peer, const std::string& why) {
                log(fmt::format("dropped a connection from {}: {}", peer, why));
              },
          .abandoned = {},
          .accept_failed = [this](const std::string& why) { log(why); },
          .max_pending = options.max_handshakes});
  acceptor->start();
  thread = std::thread([this] { io.run(); });
}

RendezvousServer::Impl::~Impl() {
  {
    std::lock_guard lock(handshake_mutex);
    stopping = true;
  }
  handshakes.stop();  // shuts the handshakes' sockets, joins
  asio::post(io, [this] { close_all(); });
  thread.join();
}

void RendezvousServer::Impl::log(const std::string& line) {
  std::lock_guard lock(log_mutex);
  try {
    if (options.log) {
      options.log(line);
    } else {
      std::fprintf(stderr, "multilane rendezvous %s: %s\n", address.c_str(), line.c_str());
    }
  } catch (...) {
    // A failing log sink must not take the store down.
  }
}

// The steps of one accepted connection's handshake (authenticated_acceptor.hpp).
AcceptedHandshake RendezvousServer::Impl::handshake_steps(const std::string& peer) {
  return {.config =
              [this] {
                return HandshakeConfig{.job_id = job_id,
                                       .secret = secret,
                                       .timeout = options.handshake_timeout,
                                       .identity = kServerIdentity};
              },
          .passed =
              [this, peer](asio::io_context&, asio::ip::tcp::socket connection,
                           const PeerHello& hello) {
                const auto protocol = connection.local_endpoint().protocol();
                OwnedFd authenticated(connection.release());
                std::lock_guard lock(handshake_mutex);
                if (stopping) return;
                asio::post(
                    io, [this, fd = std::move(authenticated), protocol, identity = hello.identity,
                         peer]() mutable { adopt(std::move(fd), protocol, identity, peer); });
              },
          .refused =
              [this, peer](const std::exception& e) {
                bool quiet = false;
                {
                  std::lock_guard lock(handshake_mutex);
                  quiet = stopping;
                }
                if (!quiet) log(fmt::format("dropped a connection from {}: {}", peer, e.what()));
              }};
}

void RendezvousServer::Impl::adopt(OwnedFd fd, asio::ip::tcp::socket::protocol_type protocol,
                                   std::uint64_t identity, const std::string& peer) {
  if (closing) return;
  asio::ip::tcp::socket socket(io);
  asio::error_code error;
  socket.assign(protocol, fd.release(), error);
  if (error) return log(fmt::format("dropped rank {} ({}): {}", identity, peer, error.message()));
  auto connection = std::make_shared<Connection>(*this, std::move(socket),
                                                 fmt::format("rank {} ({})", identity, peer));
  connections.insert(connection);
  connection->read_request();
}

void RendezvousServer::Impl::handle(const std::shared_ptr<Connection>& connection,
                                    StoreRequestKind kind, std::string_view key,
                                    std::string_view value) {
  if (kind == StoreRequestKind::Put) return put(connection, key, value);
  if (const auto it = values.find(key); it != values.end()) {
    return connection->answer(StoreStatus::Ok, it->second);
  }
  waiting[std::string(key)].push_back(connection);
  connection->wait_for_key();
}

void RendezvousServer::Impl::put(const std::shared_ptr<Connection>& connection,
                                 std::string_view key, std::string_view value) {
  const auto it = values.find(key);
  const std::uint64_t replaced = it == values.end() ? 0 : key.size() + it->second.size();
  const std::uint64_t after = stored_bytes - replaced + key.size() + value.size();
  if (after > kMaxStoreBytes) {
    log(fmt::format("refused {}'s put of key '{}': the store would hold {} bytes, the limit is {}",
                    connection->name(), key, after, kMaxStoreBytes));
    return connection->answer(
        StoreStatus::Refused,
        fmt::format("the store is full (the limit is {} bytes)", kMaxStoreBytes));
  }
  stored_bytes = after;
  const std::string& stored =
      values.insert_or_assign(std::string(key), std::string(value)).first->second;
  connection->answer(StoreStatus::Ok, {});
  if (const auto w = waiting.find(key); w != waiting.end()) {
    for (const auto& weak : w->second) {
      if (const auto waiter = weak.lock(); waiter && waiter->is_waiting()) {
        waiter->answer(StoreStatus::Ok, stored);
      }
    }
    waiting.erase(w);
  }
}

void RendezvousServer::Impl::drop(const std::shared_ptr<Connection>& connection,
                                  const std::string& reason) {
  if (!reason.empty()) log(fmt::format("dropped {}: {}", connection->name(), reason));
  connection->close();
  connections.erase(connection);
}

void RendezvousServer::Impl::close_all() {
  closing = true;
  acceptor->stop();
  for (const auto& connection : connections) connection->close();
  connections.clear();
  waiting.clear();
}

RendezvousServer::RendezvousServer(const std::string& bind_address, std::uint64_t job_id,
                                   const JobSecret& secret, RendezvousServerOptions options)
    : impl_(std::make_unique<Impl>(bind_address, job_id, secret, std::move(options))) {}

RendezvousServer::~RendezvousServer() = default;

std::string RendezvousServer::address() const {
  return impl_->address;
}

}  // namespace multilane::runtime
