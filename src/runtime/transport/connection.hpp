// runtime/transport/connection.hpp — one TCP connection of the engine, shared by the rank's
// reader of it (IncomingStream) and its writer (a SendSide stream) once both directions use it.
//
// One socket object serves both, so the connection is registered with the event loop once and
// each of its events is handled once. Whoever closes it (the reader when the peer went away or
// sent what it must not, the writer when a send failed) says why, and the other side's error
// names that reason instead of the bare "operation aborted" that its cancelled operation gets.
// Used on the engine's driving thread only.
#pragma once

#include <asio.hpp>

#include "runtime/tcp/transport_error.hpp"

namespace multilane::runtime {

struct Connection {
  explicit Connection(asio::io_context& io) : socket(io) {}
  // Shuts the connection down and closes it, once; `reason` is kept for the other side.
  void close(const Failure& reason) {
    if (!closed_because) closed_because = reason;
    asio::error_code ignored;
    socket.shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
    socket.close(ignored);
  }

  asio::ip::tcp::socket socket;
  Outcome closed_because;  // nullopt while open
};

}  // namespace multilane::runtime
