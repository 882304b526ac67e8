// runtime/stream_connect.cpp — establishing a StreamSet: listener and connector (see
// stream_set.hpp). Each of the K connections is configured (TCP_NODELAY, buffer sizes) and
// authenticated before it joins the set; the whole establishment shares one deadline.
#include <fmt/format.h>

#include <thread>

#include "multilane/errors.hpp"
#include "runtime/io_wait.hpp"
#include "runtime/stream_set.hpp"
#include "runtime/transport_error.hpp"

namespace multilane::runtime {

namespace {

void check_options(const StreamOptions& options) {
  if (options.streams < 1) {
    throw UsageError(fmt::format("streams must be at least 1, got {}", options.streams));
  }
  if (options.send_buffer < 0 || options.receive_buffer < 0) {
    throw UsageError("socket buffer sizes must not be negative");
  }
}

// Buffer sizes go on before connect/listen: the TCP window scale is fixed at the handshake.
template <typename Socket>
void set_buffer_sizes(Socket& socket, const StreamOptions& options) {
  if (options.send_buffer > 0) {
    socket.set_option(asio::socket_base::send_buffer_size(options.send_buffer));
  }
  if (options.receive_buffer > 0) {
    socket.set_option(asio::socket_base::receive_buffer_size(options.receive_buffer));
  }
}

HandshakeConfig handshake_config(const StreamOptions& options, Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return {options.job_id, options.secret, std::max(left, std::chrono::milliseconds{1})};
}

std::string endpoint_text(const asio::ip::tcp::endpoint& endpoint) {
  return fmt::format("{}:{}", endpoint.address().to_string(), endpoint.port());
}

// One connection attempt; false when refused (the listener may not be up yet).
bool try_connect(asio::io_context& io, asio::ip::tcp::socket& socket,
                 const asio::ip::tcp::endpoint& endpoint, Clock::time_point deadline,
                 const StreamOptions& options) {
  socket.open(endpoint.protocol());
  set_buffer_sizes(socket, options);
  bool finished = false;
  asio::error_code error;
  socket.async_connect(endpoint, [&](const asio::error_code& ec) {
    error = ec;
    finished = true;
  });
  if (!run_until(io, deadline, [&] { return finished; })) {
    asio::error_code ignored;
    socket.close(ignored);
    drain(io, [&] { return finished; });
    error = asio::error::timed_out;
  }
  if (!error) return true;
  asio::error_code ignored;
  socket.close(ignored);
  if (error == asio::error::connection_refused && Clock::now() < deadline) return false;
  throw TransportError(fmt::format("connecting to {} failed: {}", endpoint_text(endpoint),
                                   error == asio::error::timed_out
                                       ? "timed out after " + seconds_text(options.timeout)
                                       : error.message()));
}

asio::ip::tcp::socket connect_one(asio::io_context& io, const asio::ip::tcp::endpoint& endpoint,
                                  Clock::time_point deadline, const StreamOptions& options) {
  asio::ip::tcp::socket socket(io);
  while (!try_connect(io, socket, endpoint, deadline, options)) {
    const auto pause =
        std::min<Clock::duration>(std::chrono::milliseconds{20}, deadline - Clock::now());
    std::this_thread::sleep_for(pause);
  }
  socket.set_option(asio::ip::tcp::no_delay(true));
  authenticate(io, socket, Role::Connector, handshake_config(options, deadline));
  return socket;
}

}  // namespace

StreamListener::StreamListener(const asio::ip::tcp::endpoint& endpoint,
                               const StreamOptions& options)
    : acceptor_(io_), options_(options) {
  check_options(options);
  acceptor_.open(endpoint.protocol());
  acceptor_.set_option(asio::socket_base::reuse_address(true));
  set_buffer_sizes(acceptor_, options);  // accepted sockets inherit them
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
  for (int i = 0; i < options_.streams; ++i) {
    bool finished = false;
    asio::error_code error;
    asio::ip::tcp::socket socket(*set_io);
    acceptor_.async_accept(socket, [&](const asio::error_code& ec) {
      error = ec;
      finished = true;
    });
    if (!run_until(io_, deadline, [&] { return finished; })) {
      acceptor_.cancel();
      drain(io_, [&] { return finished; });
      throw TransportError(fmt::format("timed out after {} waiting for connection {} of {} on {}",
                                       seconds_text(options_.timeout), i + 1, options_.streams,
                                       endpoint_text(acceptor_.local_endpoint())));
    }
    if (error) throw TransportError("accepting a connection failed: " + error.message());
    socket.set_option(asio::ip::tcp::no_delay(true));
    authenticate(*set_io, socket, Role::Listener, handshake_config(options_, deadline));
    sockets.push_back(std::move(socket));
  }
  return StreamSet(std::move(set_io), std::move(sockets), options_);
}

StreamSet connect_streams(const asio::ip::tcp::endpoint& endpoint, const StreamOptions& options) {
  check_options(options);
  const auto deadline = Clock::now() + options.timeout;
  auto io = std::make_unique<asio::io_context>();
  std::vector<asio::ip::tcp::socket> sockets;
  for (int i = 0; i < options.streams; ++i) {
    sockets.push_back(connect_one(*io, endpoint, deadline, options));
  }
  return StreamSet(std::move(io), std::move(sockets), options);
}

}  // namespace multilane::runtime
