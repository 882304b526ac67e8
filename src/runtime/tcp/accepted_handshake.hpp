// runtime/tcp/accepted_handshake.hpp — the one way an accepted connection is authenticated,
// for the engine's listeners, the WAN gate and the rendezvous server.
//
// The handshake (auth.hpp) is blocking and bounded by its timeout, so it runs on a worker of
// the pool (worker_threads.hpp), with a private io_context: a stranger that never speaks holds
// only that thread. Its socket is watched while the handshake runs, so the pool's stop() ends it
// at once. Then, on the worker:
//   passed(io, socket, hello)   the peer is authenticated: the socket (on `io`, which lives
//                               until `passed` returns) and what the peer said of itself;
//   refused(error)              it was not (or `passed` threw): the reason. The socket is
//                               closed after `refused` returns.
// Returns false when the pool is stopping: the connection is closed and neither runs.
#pragma once

#include <asio.hpp>
#include <exception>
#include <functional>

#include "runtime/tcp/auth.hpp"
#include "runtime/tcp/worker_threads.hpp"

namespace multilane::runtime {

struct AcceptedHandshake {
  // The listener's side of the handshake, asked on the worker as it starts (a deadline counts
  // from there).
  std::function<HandshakeConfig()> config;
  std::function<void(asio::io_context& io, asio::ip::tcp::socket socket, const PeerHello& hello)>
      passed;
  std::function<void(const std::exception& error)> refused;
};

bool authenticate_accepted(WorkerThreads& workers, asio::ip::tcp::socket socket,
                           AcceptedHandshake steps);

}  // namespace multilane::runtime
