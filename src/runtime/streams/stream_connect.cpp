// runtime/streams/stream_connect.cpp — establishing a StreamSet: listener and connector (see
// stream_set.hpp). Each of the K connections is configured (TCP_NODELAY, buffer sizes, pacing:
// tcp_connect.hpp) and authenticated before it joins the set; the whole establishment shares
// one deadline.
#include <fmt/format.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <list>
#include <mutex>
#include <optional>

#include "multilane/errors.hpp"
#include "runtime/streams/stream_set.hpp"
#include "runtime/tcp/accepted_handshake.hpp"
#include "runtime/tcp/io_wait.hpp"
#include "runtime/tcp/tcp_connect.hpp"
#include "runtime/tcp/transport_error.hpp"

namespace multilane::runtime {

namespace {

void check_options(const StreamOptions& options) {
  if (options.streams < 1) {
    throw UsageError(fmt::format("streams must be at least 1, got {}", options.streams));
  }
  if (options.send_buffer < 0 || options.receive_buffer < 0 || options.unsent_limit < 0) {
    throw UsageError("socket buffer sizes must not be negative");
  }
}

SocketTuning socket_tuning(const StreamOptions& options) {
  return {options.send_buffer, options.receive_buffer, options.pacing_rate, options.unsent_limit};
}

HandshakeConfig handshake_config(const StreamOptions& options, Clock::time_point deadline,
                                 std::uint64_t identity = 0) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return {options.job_id, options.secret, std::max(left, std::chrono::milliseconds{1}), identity};
}

// The set of `streams` (on `io`); it goes through a relay when any of their peers is one.
StreamSet set_of(std::unique_ptr<asio::io_context> io, std::vector<AuthenticatedStream> streams,
                 StreamOptions options) {
  std::vector<asio::ip::tcp::socket> sockets;
  for (AuthenticatedStream& s : streams) {
    options.relayed = options.relayed || s.peer_is_relay;
    sockets.push_back(std::move(s.socket));
  }
  return StreamSet(std::move(io), std::move(sockets), options);
}

}  // namespace

void tune_connected_stream(asio::ip::tcp::socket& socket, const StreamOptions& options) {
  apply_connected_options(socket, socket_tuning(options));
}

AuthenticatedStream connect_stream(asio::io_context& io, const asio::ip::tcp::endpoint& endpoint,
                                   Clock::time_point deadline, const StreamOptions& options,
                                   std::uint64_t identity) {
  asio::ip::tcp::socket socket(io);
  connect_with_retry(io, socket, endpoint, std::nullopt, deadline, socket_tuning(options));
  const PeerHello peer =
      authenticate_peer(io, socket, Role::Connector, handshake_config(options, deadline, identity));
  return {std::move(socket), peer.identity, peer.relay};
}

// One accepted connection's handshake, on a worker of the pool (accepted_handshake.hpp).
struct StreamListener::Handshake {
  std::uint64_t call = 0;                     // the accept_streams() call that started it
  std::optional<AuthenticatedStream> passed;  // these three under handshakes_mutex_
  std::optional<TransportError> failed;
  bool done = false;
};

StreamListener::StreamListener(const asio::ip::tcp::endpoint& endpoint,
                               const StreamOptions& options)
    : options_(options) {
  check_options(options);
  asio::ip::tcp::acceptor acceptor(io_);
  acceptor.open(endpoint.protocol());
  acceptor.set_option(asio::socket_base::reuse_address(true));
  apply_buffer_sizes(acceptor, socket_tuning(options));  // accepted sockets inherit them
  acceptor.bind(endpoint);
  acceptor.listen();
  acceptor_ = std::make_unique<AuthenticatedAcceptor>(
      std::move(acceptor), workers_,
      AuthenticatedAcceptor::Handlers{
          .handshake = [this](const std::string&) { return handshake_steps(); },
          // The pool stopped (the call is ending): the connection is closed unheard.
          .abandoned =
              [this] {
                std::lock_guard lock(handshakes_mutex_);
                handshakes_.back().done = true;
              },
          .accept_failed = [this](const std::string& why) { accept_failed_ = why; },
          .may_accept = [this] { return handshakes_under_way() < most_under_way_; }});
  acceptor_->start();
}

StreamListener::~StreamListener() {
  acceptor_->stop();
  stop_handshakes();
}

std::uint16_t StreamListener::port() const {
  return acceptor_->local_endpoint().port();
}

StreamSet StreamListener::accept() {
  const auto deadline = Clock::now() + options_.timeout;
  auto set_io = std::make_unique<asio::io_context>();
  std::vector<Accepted> accepted;
  try {
    accept_streams(*set_io, options_.streams, deadline, {}, accepted);
  } catch (const TransportError& e) {
    if (e.kind() != ErrorKind::timeout) throw;
    throw TransportError(ErrorKind::timeout,
                         fmt::format("{} {} of {} on {}", e.what(), accepted.size() + 1,
                                     options_.streams, endpoint_text(acceptor_->local_endpoint())));
  }
  return set_of(std::move(set_io), std::move(accepted), options_);
}

AcceptedHandshake StreamListener::handshake_steps() {
  Handshake& h = handshakes_.emplace_back();
  h.call = calls_;
  // Each outcome goes into `h` under the mutex and wakes the accepting thread.
  auto finish = [this, &h](std::optional<AuthenticatedStream> passed,
                           std::optional<TransportError> failed) {
    {
      std::lock_guard lock(handshakes_mutex_);
      h.passed = std::move(passed);
      h.failed = std::move(failed);
      h.done = true;
    }
    asio::post(io_, [] {});
  };
  return {.config = [this, deadline = deadline_] { return handshake_config(options_, deadline); },
          .passed =
              [this, finish](asio::io_context&, asio::ip::tcp::socket connection,
                             const PeerHello& peer) {
                tune_connected_stream(connection, options_);
                // Off the worker's context, which ends with the worker.
                finish(AuthenticatedStream{rehome(std::move(connection), io_), peer.identity,
                                           peer.relay},
                       std::nullopt);
              },
          .refused =
              [finish](const std::exception& e) {
                const auto* transport = dynamic_cast<const TransportError*>(&e);
                finish(std::nullopt, transport ? *transport : TransportError(kind_of(e), e.what()));
              }};
}

void StreamListener::collect(std::uint64_t call, asio::io_context& io, int count,
                             const AcceptWatch& watch, std::vector<Accepted>& streams) {
  for (auto it = handshakes_.begin(); it != handshakes_.end();) {
    if (std::lock_guard lock(handshakes_mutex_); !it->done) {
      ++it;
      continue;
    }
    std::optional<TransportError> failure = std::move(it->failed);
    std::optional<Accepted> passed = std::move(it->passed);
    const bool this_call = it->call == call;
    const bool wanted = static_cast<int>(streams.size()) < count;
    // Onto the caller's context (a spare one stays on the listener's).
    if (passed && wanted) passed->socket = rehome(std::move(passed->socket), io);
    it = handshakes_.erase(it);
    if (failure && this_call) watch.refused(*failure);
    if (!passed) continue;
    if (!wanted) {
      spare_.push_back(std::move(*passed));
      continue;
    }
    watch.passed(*passed);
    streams.push_back(std::move(*passed));
  }
}

std::size_t StreamListener::handshakes_under_way() {
  std::lock_guard lock(handshakes_mutex_);
  return static_cast<std::size_t>(std::count_if(handshakes_.begin(), handshakes_.end(),
                                                [](const Handshake& h) { return !h.done; }));
}

// A shut connection's handshake ends at once, where a silent peer's would wait for the deadline.
void StreamListener::stop_handshakes() {
  workers_.join_all();
  handshakes_.clear();
}

TransportError StreamListener::timed_out(Clock::duration waited) const {
  return TransportError(
      ErrorKind::timeout,
      fmt::format("timed out after {} waiting for connection{}",
                  seconds_text(std::chrono::round<std::chrono::milliseconds>(waited)),
                  accept_failed_.empty() ? "" : fmt::format(" ({})", accept_failed_)));
}

void StreamListener::accept_streams(asio::io_context& io, int count, Clock::time_point deadline,
                                    const AcceptWatch& watch, std::vector<Accepted>& streams) {
  const std::uint64_t call = ++calls_;
  const Clock::time_point started = Clock::now();
  while (static_cast<int>(streams.size()) < count && !spare_.empty()) {
    Accepted stream = std::move(spare_.front());
    spare_.pop_front();
    stream.socket = rehome(std::move(stream.socket), io);
    watch.passed(stream);
    streams.push_back(std::move(stream));
  }
  deadline_ = deadline;
  accept_failed_.clear();
  auto any_done = [&] {
    std::lock_guard lock(handshakes_mutex_);
    return std::any_of(handshakes_.begin(), handshakes_.end(),
                       [](const Handshake& h) { return h.done; });
  };
  try {
    while (static_cast<int>(streams.size()) < count) {
      collect(call, io, count, watch, streams);
      const auto needed = static_cast<std::size_t>(count) - streams.size();
      if (needed == 0) break;
      most_under_way_ = std::min<std::size_t>(needed + kSpareHandshakes, kHandshakeThreads);
      acceptor_->resume();
      if (!run_until(io_, deadline, any_done)) throw timed_out(deadline - started);
    }
  } catch (...) {
    most_under_way_ = 0;
    stop_handshakes();
    throw;
  }
  // Connections that come before the next call wait in the backlog (one accept may be pending).
  most_under_way_ = 0;
}

std::vector<AuthenticatedStream> connect_at_once(
    asio::io_context& io, int count,
    const std::function<AuthenticatedStream(int index, asio::io_context& own)>& connect) {
  const auto n = static_cast<std::size_t>(count);
  std::vector<std::unique_ptr<asio::io_context>> contexts(n);  // outlive the sockets below
  std::vector<std::optional<AuthenticatedStream>> results(n);
  std::vector<std::exception_ptr> errors(n);
  std::atomic<int> next{0};
  auto work = [&] {
    for (int i = next++; i < count; i = next++) {
      contexts[i] = std::make_unique<asio::io_context>();
      try {
        results[i] = connect(i, *contexts[i]);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  WorkerThreads helpers;
  for (int t = 1; t < std::min(count, kHandshakeThreads); ++t) helpers.start(work);
  work();
  helpers.join_all();
  for (const auto& error : errors) {
    if (error) std::rethrow_exception(error);
  }
  std::vector<AuthenticatedStream> streams;
  for (auto& r : results) {
    r->socket = rehome(std::move(r->socket), io);
    streams.push_back(std::move(*r));
  }
  return streams;
}

asio::ip::tcp::socket rehome(asio::ip::tcp::socket socket, asio::io_context& io) {
  const auto protocol = socket.local_endpoint().protocol();
  return asio::ip::tcp::socket(io, protocol, socket.release());
}

StreamSet connect_streams(const asio::ip::tcp::endpoint& endpoint, const StreamOptions& options) {
  check_options(options);
  const auto deadline = Clock::now() + options.timeout;
  auto io = std::make_unique<asio::io_context>();
  auto streams = connect_at_once(*io, options.streams, [&](int, asio::io_context& own) {
    return connect_stream(own, endpoint, deadline, options);
  });
  return set_of(std::move(io), std::move(streams), options);
}

}  // namespace multilane::runtime
