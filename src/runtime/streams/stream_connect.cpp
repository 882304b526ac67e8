// runtime/streams/stream_connect.cpp — establishing a StreamSet: listener and connector (see
// stream_set.hpp). Each of the K connections is configured (TCP_NODELAY, buffer sizes, pacing:
// tcp_connect.hpp) and authenticated before it joins the set; the whole establishment shares
// one deadline.
#include <fmt/format.h>

#include "multilane/errors.hpp"
#include "runtime/streams/stream_set.hpp"
#include "runtime/transport/io_wait.hpp"
#include "runtime/transport/tcp_connect.hpp"
#include "runtime/transport/transport_error.hpp"

namespace multilane::runtime {

namespace {

void check_options(const StreamOptions& options) {
  if (options.streams < 1) {
    throw UsageError(fmt::format("streams must be at least 1, got {}", options.streams));
  }
  if (options.send_buffer < 0 || options.receive_buffer < 0 || options.unsent_limit < 0) {
    throw UsageError("socket buffer sizes must not be negative");
  }
}

SocketTuning socket_tuning(const StreamOptions& options) {
  return {options.send_buffer, options.receive_buffer, options.pacing_rate, options.unsent_limit};
}

HandshakeConfig handshake_config(const StreamOptions& options, Clock::time_point deadline,
                                 std::uint64_t identity = 0) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return {options.job_id, options.secret, std::max(left, std::chrono::milliseconds{1}), identity};
}

}  // namespace

void tune_connected_stream(asio::ip::tcp::socket& socket, const StreamOptions& options) {
  apply_connected_options(socket, socket_tuning(options));
}

AuthenticatedStream connect_stream(asio::io_context& io, const asio::ip::tcp::endpoint& endpoint,
                                   Clock::time_point deadline, const StreamOptions& options,
                                   std::uint64_t identity) {
  asio::ip::tcp::socket socket(io);
  connect_with_retry(io, socket, endpoint, std::nullopt, deadline, socket_tuning(options));
  const PeerHello peer =
      authenticate_peer(io, socket, Role::Connector, handshake_config(options, deadline, identity));
  return {std::move(socket), peer.identity, peer.relay};
}

StreamListener::StreamListener(const asio::ip::tcp::endpoint& endpoint,
                               const StreamOptions& options)
    : acceptor_(io_), options_(options) {
  check_options(options);
  acceptor_.open(endpoint.protocol());
  acceptor_.set_option(asio::socket_base::reuse_address(true));
  apply_buffer_sizes(acceptor_, socket_tuning(options));  // accepted sockets inherit them
  acceptor_.bind(endpoint);
  acceptor_.listen();
}

StreamListener::~StreamListener() = default;

std::uint16_t StreamListener::port() const {
  return acceptor_.local_endpoint().port();
}

StreamSet StreamListener::accept() {
  const auto deadline = Clock::now() + options_.timeout;
  auto set_io = std::make_unique<asio::io_context>();
  std::vector<asio::ip::tcp::socket> sockets;
  StreamOptions options = options_;
  for (int i = 0; i < options_.streams; ++i) {
    try {
      Accepted accepted = accept_stream(*set_io, deadline);
      options.relayed = options.relayed || accepted.peer_is_relay;
      sockets.push_back(std::move(accepted.socket));
    } catch (const TransportError& e) {
      if (std::string_view(e.what()).starts_with("timed out")) {
        throw TransportError(fmt::format("{} {} of {} on {}", e.what(), i + 1, options_.streams,
                                         endpoint_text(acceptor_.local_endpoint())));
      }
      throw;
    }
  }
  return StreamSet(std::move(set_io), std::move(sockets), options);
}

StreamListener::Accepted StreamListener::accept_stream(asio::io_context& io,
                                                       Clock::time_point deadline) {
  bool finished = false;
  asio::error_code error;
  asio::ip::tcp::socket socket(io);
  acceptor_.async_accept(socket, [&](const asio::error_code& ec) {
    error = ec;
    finished = true;
  });
  if (!run_until(io_, deadline, [&] { return finished; })) {
    acceptor_.cancel();
    drain(io_, [&] { return finished; });
    throw TransportError(
        fmt::format("timed out after {} waiting for connection", seconds_text(options_.timeout)));
  }
  if (error) throw TransportError("accepting a connection failed: " + error.message());
  tune_connected_stream(socket, options_);
  const PeerHello peer =
      authenticate_peer(io, socket, Role::Listener, handshake_config(options_, deadline));
  return {std::move(socket), peer.identity, peer.relay};
}

StreamSet connect_streams(const asio::ip::tcp::endpoint& endpoint, const StreamOptions& options) {
  check_options(options);
  const auto deadline = Clock::now() + options.timeout;
  auto io = std::make_unique<asio::io_context>();
  std::vector<asio::ip::tcp::socket> sockets;
  StreamOptions set_options = options;
  for (int i = 0; i < options.streams; ++i) {
    AuthenticatedStream connected = connect_stream(*io, endpoint, deadline, options);
    set_options.relayed = set_options.relayed || connected.peer_is_relay;
    sockets.push_back(std::move(connected.socket));
  }
  return StreamSet(std::move(io), std::move(sockets), set_options);
}

}  // namespace multilane::runtime
