// wan/relay_server.hpp — `multilane relay`: forwards authenticated channels of one job.
//
// A relay runs on a host both networks reach (MPWide's Forwarder). A client connects,
// completes the job's handshake with the relay (auth_gate.hpp) and names a target
// (relay_protocol.hpp); the relay checks the target against its allow list, connects to it and
// authenticates to it with the same job secret, passing on the client's identity, answers, and
// from then on forwards bytes both ways (splice.hpp). Both handshakes say that the relay is one
// (runtime/tcp/auth.hpp), so that neither end adapts its streams in use to what its hop
// to the relay shows (runtime::StreamOptions::relayed). So the relay is never an open proxy: a
// client without the job's secret gets nothing forwarded, and the target must be a member of
// the job too (anything else fails the handshake and the client is told why).
//
// Counters are kept for the whole run (stats(), any thread); events (refusals, channels opened
// and closed) go to the `log` callback, on the loop's thread.
#pragma once

#include <asio.hpp>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "wan/auth_gate.hpp"
#include "wan/splice.hpp"

namespace multilane::wan {

struct RelayServerOptions {
  GateOptions gate;  // where to listen, job, secret (its `relay` is set by the server)
  std::chrono::milliseconds connect_timeout{10'000};  // reaching and authenticating a target
  std::vector<std::string> allow;        // networks targets must be in ("10.1.0.0/16"); empty: any
  std::size_t buffer_size = 256 * 1024;  // per direction of a channel
  // Forward every authenticated connection here instead of to the target its client names (no
  // request, no answer): the relay then stands in for the target, as MPWide's Forwarder does,
  // for programs that do not know they go through a relay (the MPWide drop-in's paths). A
  // client whose target cannot be reached is disconnected.
  std::optional<asio::ip::tcp::endpoint> forward_to;
};

struct RelayStats {
  std::uint64_t forwarded = 0;        // channels opened
  std::uint64_t active = 0;           // of which still open
  std::uint64_t refused = 0;          // connections refused (handshake, request, allow list)
  std::uint64_t target_failures = 0;  // authenticated clients whose target was unreachable
  std::uint64_t bytes_to_targets = 0;
  std::uint64_t bytes_to_clients = 0;
};
// "channels 3 forwarded (1 active), 2 refused, 0 unreachable targets; 1.5 GiB to targets,
// 12 KiB back"
std::string stats_text(const RelayStats& stats);

enum class RelayEvent { Refused, Opened, Closed };

class RelayServer {
 public:
  using Log = std::function<void(RelayEvent, const std::string&)>;
  // Throws UsageError for a malformed allow list, TransportError when it cannot listen.
  RelayServer(const RelayServerOptions& options, Log log);
  ~RelayServer();
  std::uint16_t port() const;
  void run();   // serves until stop()
  void stop();  // from any thread
  RelayStats stats() const;

 private:
  void admit(asio::io_context& io, asio::ip::tcp::socket client, std::uint64_t identity,
             runtime::Clock::time_point deadline);
  void forward(asio::io_context& io, asio::ip::tcp::socket client, std::uint64_t identity,
               const asio::ip::tcp::endpoint& target);
  asio::ip::tcp::socket reach(asio::io_context& io, const asio::ip::tcp::endpoint& target,
                              std::uint64_t identity);
  void hand_to_loop(asio::ip::tcp::socket client, asio::ip::tcp::socket target, std::string route);
  void open_channel(int client_fd, int target_fd, const std::string& route);
  bool allowed(const asio::ip::address& address) const;
  void note(RelayEvent event, std::string text);

  RelayServerOptions options_;
  Log log_;
  asio::io_context loop_;
  asio::executor_work_guard<asio::io_context::executor_type> work_;
  std::vector<std::pair<asio::ip::address, int>> allow_;  // network address, prefix length
  std::unique_ptr<AuthGate> gate_;
  std::map<std::uint64_t, std::shared_ptr<Splice>> channels_;
  std::uint64_t next_channel_ = 1;
  bool stopping_ = false;  // on the loop
  std::atomic<std::uint64_t> forwarded_{0}, active_{0}, refused_{0}, target_failures_{0},
      bytes_to_targets_{0}, bytes_to_clients_{0};
};

}  // namespace multilane::wan
