// runtime/tcp/authenticated_acceptor.hpp — the one accept loop: a listening socket whose
// connections are each authenticated on the worker pool, for the engine's lanes, the WAN gate
// (relay, serve, routers), the rendezvous server and the stream listener.
//
// start() accepts on the acceptor's event loop, one connection after another. Each accepted
// connection (TCP_NODELAY set, for the handshake's small messages) gets the handshake steps
// `handshake(peer)` gives for it ("host:port") and goes to authenticate_accepted()
// (accepted_handshake.hpp): the handshake runs on a worker of `workers`, so a stranger that never
// speaks holds only that thread. Then, on the loop:
//   - `max_pending` handshakes under way already (0: no bound): the connection is closed at
//     once and `dropped(peer, why)` runs;
//   - the pool is stopping: the connection is closed and `abandoned()` runs instead of the
//     steps;
//   - an accept that fails (out of descriptors, typically): `accept_failed(why)` runs and the
//     loop tries again after kRetryAfter, instead of spinning.
// Each of the three is optional. So is `may_accept()`, asked before each accept: false pauses
// the loop, and the connections that come meanwhile wait in the kernel's backlog until
// resume() (for a listener that takes only the connections its caller asks for, where
// `max_pending` would close the others).
// stop() closes the listening socket (on the loop's thread, or after the loop ended); the
// pool's own stop() ends the handshakes still under way (a bounded stop).
#pragma once

#include <asio.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "runtime/tcp/accepted_handshake.hpp"
#include "runtime/tcp/worker_threads.hpp"

namespace multilane::runtime {

class AuthenticatedAcceptor {
 public:
  struct Handlers {
    std::function<AcceptedHandshake(const std::string& peer)> handshake{};
    std::function<void(const std::string& peer, const std::string& why)> dropped{};
    std::function<void()> abandoned{};
    std::function<void(const std::string& why)> accept_failed{};
    std::function<bool()> may_accept{};
    int max_pending = 0;
  };
  static constexpr std::chrono::milliseconds kRetryAfter{100};

  // `acceptor` is bound and listening.
  AuthenticatedAcceptor(asio::ip::tcp::acceptor acceptor, WorkerThreads& workers,
                        Handlers handlers);
  AuthenticatedAcceptor(const AuthenticatedAcceptor&) = delete;
  AuthenticatedAcceptor& operator=(const AuthenticatedAcceptor&) = delete;

  asio::ip::tcp::endpoint local_endpoint() const { return acceptor_.local_endpoint(); }
  void start();
  // Accepts again after `may_accept()` paused the loop (it is asked again first); on the loop's
  // thread.
  void resume();
  void stop();

 private:
  void accept_next();
  void take(asio::ip::tcp::socket socket);

  asio::ip::tcp::acceptor acceptor_;
  asio::steady_timer retry_;
  WorkerThreads& workers_;
  Handlers handlers_;
  bool stopped_ = false;
  bool paused_ = false;
};

}  // namespace multilane::runtime
