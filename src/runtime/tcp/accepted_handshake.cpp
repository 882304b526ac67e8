// runtime/tcp/accepted_handshake.cpp — see accepted_handshake.hpp.
#include "runtime/tcp/accepted_handshake.hpp"

#include <unistd.h>

#include <memory>

#include "runtime/tcp/transport_error.hpp"

namespace multilane::runtime {

bool authenticate_accepted(WorkerThreads& workers, asio::ip::tcp::socket socket,
                           AcceptedHandshake steps) {
  const auto protocol = socket.local_endpoint().protocol();
  const int fd = socket.release();
  workers.watch(fd);
  auto shared = std::make_shared<AcceptedHandshake>(std::move(steps));
  const bool started = workers.start([&workers, fd, protocol, shared] {
    asio::io_context io;
    asio::ip::tcp::socket connection(io);
    asio::error_code error;
    connection.assign(protocol, fd, error);
    if (error) {
      workers.unwatch(fd);
      ::close(fd);
      shared->refused(
          TransportError(kind_of(error), "taking over a connection failed: " + error.message()));
      return;
    }
    try {
      const PeerHello hello = authenticate_peer(io, connection, Role::Listener, shared->config());
      workers.unwatch(fd);  // `passed` owns the socket from here
      shared->passed(io, std::move(connection), hello);
    } catch (const std::exception& e) {
      workers.unwatch(fd);  // before the socket closes and frees the descriptor for reuse
      shared->refused(e);
    }
  });
  if (!started) {
    workers.unwatch(fd);
    ::close(fd);
  }
  return started;
}

}  // namespace multilane::runtime
