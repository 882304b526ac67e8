// runtime/launch/rendezvous.hpp — the small key-value store through which the ranks of a job meet.
//
// Before ranks can connect to each other they must learn each other's listening addresses.
// Every rank puts its own (key `lanes/<rank>`, see lanes_key()) and gets the others'. The
// store is served by the launcher (`multilane launch`) or, when the job was started by another
// launcher (mpirun, ssh), by rank 0 itself (MULTILANE_RENDEZVOUS_SERVER=rank0, job_env.hpp).
//
// Contract:
//   - TCP; every connection first runs the job-secret handshake (auth.hpp). A stranger (wrong
//     secret, other job, garbage bytes) or a client breaking the protocol (absurd sizes,
//     launch_store_protocol.hpp) is dropped with a logged reason; the store goes on serving.
//   - put() stores a value (a later put of the same key replaces it); get() returns it, waiting
//     until some rank put it, at most the client's timeout. A timeout names what was awaited:
//     "timed out after 60 s waiting for key 'lanes/3' at the rendezvous 127.0.0.1:41234
//     (rank 3 has not published its addresses: did it start?)".
//   - A client retries connecting until its timeout (the server may start a little later),
//     then says it cannot reach the rendezvous, naming the address.
//   - Errors are TransportError (runtime failures) or UsageError (a key or value out of the
//     protocol's limits).
// The store lives as long as its server: rank 0 (or the launcher) must outlive the exchange.
#pragma once

#include <asio.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/launch/job_env.hpp"
#include "runtime/tcp/auth.hpp"

namespace multilane::runtime {

// The endpoints the rendezvous address "host:port" names (the host resolved, the port numeric),
// for the client and the server alike; a host that does not resolve is a usage TransportError
// naming it.
std::vector<asio::ip::tcp::endpoint> resolve_rendezvous_address(const std::string& address);

// The key under which the runtime publishes the listening addresses of a rank's lanes.
std::string lanes_key(int rank);

// Where the server's log lines go (one line, no newline); called from the server's threads,
// one call at a time. The default writes "multilane rendezvous <address>: <line>" to stderr.
using RendezvousLog = std::function<void(const std::string& line)>;

struct RendezvousServerOptions {
  // A connection must finish the handshake within this time (strangers cannot hold it longer).
  std::chrono::milliseconds handshake_timeout{10'000};
  // At most this many connections authenticate at the same time; more are dropped.
  int max_handshakes = 64;
  RendezvousLog log;  // empty: stderr
};

class RendezvousServer {  // runs its own thread; thread-safe
 public:
  // Listens on `bind_address` ("host:port", port 0 = any free port).
  RendezvousServer(const std::string& bind_address, std::uint64_t job_id, const JobSecret& secret,
                   RendezvousServerOptions options = {});
  RendezvousServer(const RendezvousServer&) = delete;
  RendezvousServer& operator=(const RendezvousServer&) = delete;
  ~RendezvousServer();  // stops and joins, bounded time

  std::string address() const;  // "host:port" actually bound

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

class RendezvousClient {  // thread-safe: several threads may call get() at once
 public:
  // Connects (retrying until `timeout`) and authenticates with identity `rank`.
  RendezvousClient(const std::string& address, std::uint64_t job_id, const JobSecret& secret,
                   std::chrono::milliseconds timeout, int rank);
  RendezvousClient(const RendezvousClient&) = delete;
  RendezvousClient& operator=(const RendezvousClient&) = delete;
  ~RendezvousClient();

  void put(std::string_view key, std::string_view value);
  std::string get(std::string_view key);  // waits until some rank put it, at most the timeout
  const std::string& address() const { return address_; }

  struct Connection;

 private:
  std::unique_ptr<Connection> take_connection();
  void give_back(std::unique_ptr<Connection> connection);
  std::string request(const std::string& what, const std::string& timeout_text,
                      const std::string& bytes);

  std::string address_;
  std::uint64_t job_id_;
  JobSecret secret_;
  std::chrono::milliseconds timeout_;
  int rank_;
  std::mutex mutex_;
  std::unique_ptr<Connection> idle_;  // one connection kept between calls
};

// What a rank uses: the store of its job, wherever it is served.
class Rendezvous {
 public:
  virtual ~Rendezvous() = default;
  virtual void put(std::string_view key, std::string_view value) = 0;
  virtual std::string get(std::string_view key) = 0;  // waits, at most the job's timeout
  // "host:port" of the store, or "in-process" for a lone process's store.
  virtual std::string address() const = 0;
};

// Connects to env.rendezvous; when env.serve_rendezvous, first starts the server there (rank 0).
// A lone process without a rendezvous address gets an in-process store (never nullptr).
std::unique_ptr<Rendezvous> join_rendezvous(const JobEnvironment& env);

// The in-process store on its own (a lone process, tests): same waits and messages.
std::unique_ptr<Rendezvous> make_in_process_rendezvous(std::chrono::milliseconds timeout);

}  // namespace multilane::runtime
