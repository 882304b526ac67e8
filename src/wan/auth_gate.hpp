// wan/auth_gate.hpp — accepting connections for a daemon and authenticating each on its own
// short-lived thread.
//
// The daemons (relay, router, serve) run one event loop. The handshake (runtime/tcp/auth.hpp)
// is blocking and bounded by a deadline; running it on the loop would let one silent stranger stall
// everyone for that long. So the gate accepts on the loop and hands each new connection to a
// worker thread with a private io_context, which authenticates it (job secret; a failure is
// reported through `refused`, on the loop) and then runs the daemon's own blocking set-up steps
// (`admitted`, on the worker; e.g. the relay reads the request and connects the target). The
// worker passes results back to the loop with asio::post and hand_over().
//
// Accepting is the runtime's one accept loop (runtime/tcp/authenticated_acceptor.hpp). At most
// `max_pending` workers run at once; further connections are closed at once (and reported
// through `refused`). stop() stops accepting, shuts down the sockets of workers still running
// (their blocking steps then fail at once) and joins every worker: a bounded stop. `admitted`
// watch()es the sockets it blocks on and unwatch()es them before handing them over. Call stop()
// from the loop's thread or after the loop ended, and destroy the gate only once the loop no longer
// runs (workers post to it).
#pragma once

#include <asio.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "runtime/tcp/auth.hpp"
#include "runtime/tcp/authenticated_acceptor.hpp"
#include "runtime/tcp/io_wait.hpp"
#include "runtime/tcp/worker_threads.hpp"

namespace multilane::wan {

struct GateOptions {
  asio::ip::tcp::endpoint listen;
  std::uint64_t job_id = 0;
  runtime::JobSecret secret;
  std::chrono::milliseconds handshake_timeout{10'000};  // the handshake and `admitted`
  int max_pending = 64;
  int send_buffer = 0;     // SO_SNDBUF of accepted connections, 0: the system's default
  int receive_buffer = 0;  // SO_RCVBUF of accepted connections, 0: the system's default
  // The daemon forwards what it admits (the relay): its handshake says so (auth.hpp).
  bool relay = false;
};

class AuthGate {
 public:
  // On the worker thread, after a successful handshake: the connection (on `worker_io`), the
  // peer's identity and the deadline of the set-up.
  using Admitted = std::function<void(asio::io_context& worker_io, asio::ip::tcp::socket socket,
                                      std::uint64_t identity, runtime::Clock::time_point deadline)>;
  // On the loop: a connection was refused; `peer` is "host:port".
  using Refused = std::function<void(const std::string& peer, const std::string& reason)>;

  AuthGate(asio::io_context& loop, const GateOptions& options, Admitted admitted, Refused refused);
  ~AuthGate();
  AuthGate(const AuthGate&) = delete;
  AuthGate& operator=(const AuthGate&) = delete;

  std::uint16_t port() const;
  void start();
  void stop();

  // Workers register the sockets they block on, so that stop() can shut them down.
  void watch(int fd);
  void unwatch(int fd);
  // A connected socket of a worker, moved onto the loop (call on the loop).
  asio::ip::tcp::socket hand_over(int fd);

 private:
  // How a connection from `peer` is authenticated on a worker, then handed to `admitted` there
  // (or `refused`).
  runtime::AcceptedHandshake admission(const std::string& peer);

  asio::io_context& loop_;
  GateOptions options_;
  Admitted admitted_;
  Refused refused_;
  runtime::AuthenticatedAcceptor acceptor_;  // the one accept loop, on `loop_`
  std::mutex mutex_;
  bool stopping_ = false;           // under mutex_
  runtime::WorkerThreads workers_;  // shuts the watched sockets; last: joined before the rest
};

}  // namespace multilane::wan
