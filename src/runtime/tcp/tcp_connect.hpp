// runtime/tcp/tcp_connect.hpp — opening one tuned TCP connection with a deadline.
//
// Socket buffer sizes must be set before connect/listen (the TCP window scale is fixed by the
// SYN), TCP_NODELAY and pacing after. connect_with_retry() keeps retrying a refused connection
// until the deadline, because the listener of a peer that is starting may not be up yet; any
// other failure, or the deadline, throws TransportError naming the address.
#pragma once

#include <asio.hpp>
#include <cstdint>
#include <optional>
#include <string>

#include "runtime/tcp/io_wait.hpp"

namespace multilane::runtime {

struct SocketTuning {
  int send_buffer = 0;           // SO_SNDBUF in bytes, 0: the system's default
  int receive_buffer = 0;        // SO_RCVBUF in bytes, 0: the system's default
  std::uint64_t pacing_bps = 0;  // SO_MAX_PACING_RATE in bytes/s, 0: no pacing
  int unsent_limit = 0;          // TCP_NOTSENT_LOWAT in bytes, 0: the system's default
};

template <typename Socket>
void apply_buffer_sizes(Socket& socket, const SocketTuning& tuning) {
  if (tuning.send_buffer > 0) {
    socket.set_option(asio::socket_base::send_buffer_size(tuning.send_buffer));
  }
  if (tuning.receive_buffer > 0) {
    socket.set_option(asio::socket_base::receive_buffer_size(tuning.receive_buffer));
  }
}

// The largest SO_SNDBUF and SO_RCVBUF an unprivileged socket gets (net.core.wmem_max and
// rmem_max, the smaller); a larger request is cut to it. 0 when the system does not say.
int largest_socket_buffer();

// `wanted` bytes when the system lets a socket have them (`largest`), else 0: the system's
// autotuning. A request above the limit would be cut to it and fix a window smaller than
// autotuning reaches.
int buffer_within_limit(int wanted, int largest);

// TCP_NODELAY, pacing and the unsent limit, on a connected socket.
void apply_connected_options(asio::ip::tcp::socket& socket, const SocketTuning& tuning);

// Connects `socket` (on `io`, closed on entry) to `remote`, from `local` when given.
void connect_with_retry(asio::io_context& io, asio::ip::tcp::socket& socket,
                        const asio::ip::tcp::endpoint& remote,
                        const std::optional<asio::ip::address>& local, Clock::time_point deadline,
                        const SocketTuning& tuning);

// "host:port" -> endpoint (numeric addresses; "localhost" is 127.0.0.1). Throws UsageError
// naming `what` when the text is not an address.
asio::ip::tcp::endpoint parse_endpoint(const std::string& text, const std::string& what);
std::string endpoint_text(const asio::ip::tcp::endpoint& endpoint);

}  // namespace multilane::runtime
