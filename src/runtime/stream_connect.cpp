// runtime/stream_connect.cpp — establishing a StreamSet: listener and connector (see
// stream_set.hpp). Each of the K connections is configured (TCP_NODELAY, buffer sizes) and
// authenticated before it joins the set; the whole establishment shares one deadline.
#include <fmt/format.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
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

HandshakeConfig handshake_config(const StreamOptions& options, Clock::time_point deadline,
                                 std::uint64_t identity = 0) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return {options.job_id, options.secret, std::max(left, std::chrono::milliseconds{1}), identity};
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

}  // namespace

void tune_connected_stream(asio::ip::tcp::socket& socket, const StreamOptions& options) {
  socket.set_option(asio::ip::tcp::no_delay(true));
  if (options.pacing_rate == 0) return;
  // The kernel takes a 64-bit rate when given 8 bytes; TCP paces by itself (no fq needed).
  const std::uint64_t rate = options.pacing_rate;
  if (setsockopt(socket.native_handle(), SOL_SOCKET, SO_MAX_PACING_RATE, &rate, sizeof rate) != 0) {
    throw TransportError(
        fmt::format("setting a pacing rate of {} bytes/s failed: {}", rate, std::strerror(errno)));
  }
}

asio::ip::tcp::socket connect_stream(asio::io_context& io, const asio::ip::tcp::endpoint& endpoint,
                                     Clock::time_point deadline, const StreamOptions& options,
                                     std::uint64_t identity) {
  asio::ip::tcp::socket socket(io);
  while (!try_connect(io, socket, endpoint, deadline, options)) {
    const auto pause =
        std::min<Clock::duration>(std::chrono::milliseconds{20}, deadline - Clock::now());
    std::this_thread::sleep_for(pause);
  }
  tune_connected_stream(socket, options);
  authenticate(io, socket, Role::Connector, handshake_config(options, deadline, identity));
  return socket;
}

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
    try {
      sockets.push_back(accept_stream(*set_io, deadline).socket);
    } catch (const TransportError& e) {
      if (std::string_view(e.what()).starts_with("timed out")) {
        throw TransportError(fmt::format("{} {} of {} on {}", e.what(), i + 1, options_.streams,
                                         endpoint_text(acceptor_.local_endpoint())));
      }
      throw;
    }
  }
  return StreamSet(std::move(set_io), std::move(sockets), options_);
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
  const std::uint64_t identity =
      authenticate(io, socket, Role::Listener, handshake_config(options_, deadline));
  return {std::move(socket), identity};
}

StreamSet connect_streams(const asio::ip::tcp::endpoint& endpoint, const StreamOptions& options) {
  check_options(options);
  const auto deadline = Clock::now() + options.timeout;
  auto io = std::make_unique<asio::io_context>();
  std::vector<asio::ip::tcp::socket> sockets;
  for (int i = 0; i < options.streams; ++i) {
    sockets.push_back(connect_stream(*io, endpoint, deadline, options));
  }
  return StreamSet(std::move(io), std::move(sockets), options);
}

}  // namespace multilane::runtime
