// runtime/transport/engine.cpp — the engine's lifecycle: progress thread, listeners, accepted
// connections, the watchdog, and the call-signature check (see engine.hpp).
#include "runtime/transport/engine.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "multilane/errors.hpp"
#include "runtime/tcp/authenticated_acceptor.hpp"
#include "runtime/tcp/stream_identity.hpp"
#include "runtime/tcp/transport_error.hpp"
#include "runtime/transport/call_space.hpp"
#include "runtime/transport/engine_context.hpp"
#include "runtime/transport/receive_side.hpp"
#include "runtime/transport/reused_nodes.hpp"
#include "runtime/transport/send_side.hpp"

namespace multilane::runtime {

void EngineContext::log(const std::string& message) const {
  fmt::print(stderr, "multilane: rank {}: {}\n", config.rank, message);
}

namespace {

// Frames of calls this rank has not begun yet: the first signature seen per sequence number.
struct EarlySignature {
  int peer = 0;
  std::uint64_t signature = 0;
  void reset() { *this = {}; }
};

// A call running here: its signature, and who hears of a peer's frame that disagrees.
struct RunningCall {
  std::uint64_t signature = 0;
  std::function<void(const Outcome&)> on_mismatch;
  std::shared_ptr<void> owner;
  void reset() {
    on_mismatch = nullptr;
    owner.reset();
  }
};

Failure mismatch(int peer, std::uint64_t sequence) {
  return {ErrorKind::mismatch,
          fmt::format("rank {} runs a different call as call {} (its collective, algorithm, root, "
                      "size or segment differ from this rank's)",
                      peer, call_label(sequence))};
}

Failure engine_stopped() {
  return {ErrorKind::internal, "the engine stopped before the operation completed"};
}

}  // namespace

struct Engine::State {
  explicit State(EngineConfig config)
      : context(std::move(config)), receive(context), send(context, receive), watchdog(context.io) {
    const auto key_of = [](std::size_t i) { return std::uint64_t{i}; };
    call_nodes.prefill(calls, key_of, [](RunningCall&) {});
    early_signature_nodes.prefill(early_signatures, key_of, [](EarlySignature&) {});
  }

  // Members in construction order; the io_context (in context) outlives everything using it.
  EngineContext context;
  ReceiveSide receive;
  SendSide send;
  // The listeners run on a thread of their own, so that peers are accepted and their
  // handshakes begin while nobody drives the engine (a rank busy between calls).
  asio::io_context listen_io;
  asio::executor_work_guard<asio::io_context::executor_type> keep_listening{
      asio::make_work_guard(listen_io)};
  std::vector<std::unique_ptr<AuthenticatedAcceptor>> acceptors;  // one per lane
  std::map<std::uint64_t, RunningCall> calls;
  std::map<std::uint64_t, EarlySignature> early_signatures;
  ReusedNodes<decltype(calls)> call_nodes;
  ReusedNodes<decltype(early_signatures)> early_signature_nodes;
  // Per call space (call_space.hpp): the last call that ended here, and the last that ran
  // without the engine (note_local_call(), from any thread).
  std::array<std::uint64_t, kCallSpaces> highest_ended{};
  std::array<std::atomic<std::uint64_t>, kCallSpaces> highest_local{};
  std::set<std::uint64_t> reserved;  // reserve_call()'s, not begun or ended yet
  std::atomic<bool> shared = false;  // set_shared()
  asio::steady_timer watchdog;
  // The io_context never runs out of work, so that run_one() waits instead of returning.
  asio::executor_work_guard<asio::io_context::executor_type> keep_running{
      asio::make_work_guard(context.io)};
  std::mutex driver;            // held by the thread that runs the io_context
  bool blocking_drive = false;  // the driver is a blocking call (driving thread only)
  std::mutex demand_mutex;
  std::condition_variable demand_changed;
  // Changed under demand_mutex (for the condition variables); read without it by
  // background_pending(), on every blocking call.
  std::atomic<int> background = 0;  // background operations not completed yet, and own work
  int own_work = 0;                 // of those, the engine's own (kept tails)
  std::condition_variable own_work_settled;
  std::atomic<bool> stopping = false;
  std::thread thread;
  std::thread listen_thread;

  void drive_background();
  void background_began();
  void background_ended();
  bool background_pending();
  void own_work_began();
  void own_work_done();
  void wait_for_own_work();

  void listen();
  void bind_in_range(asio::ip::tcp::acceptor& acceptor, const asio::ip::address& address,
                     std::size_t lane, const std::string& text) const;
  AcceptedHandshake handshake_steps(const std::string& peer, int lane);
  bool check_signature(int peer, std::uint64_t sequence, std::uint64_t signature);
  void arm_watchdog();
};

Engine::Engine(EngineConfig config) {
  if (config.size < 1 || config.rank < 0 || config.rank >= config.size) {
    throw UsageError(
        fmt::format("rank {} is out of range for a job of {} ranks", config.rank, config.size));
  }
  if (config.lane_addresses.empty()) config.lane_addresses.push_back("127.0.0.1");
  state_ = std::make_unique<State>(std::move(config));
  State& s = *state_;
  s.context.check_signature = [&s](int peer, std::uint64_t sequence, std::uint64_t signature) {
    return s.check_signature(peer, sequence, signature);
  };
  s.context.own_work_began = [&s] { s.own_work_began(); };
  s.context.own_work_ended = [&s] { s.own_work_done(); };
  s.listen();
  s.arm_watchdog();
  s.thread = std::thread([&s] { s.drive_background(); });
  s.listen_thread = std::thread([&s] { s.listen_io.run(); });
}

Engine::~Engine() {
  State& s = *state_;
  s.wait_for_own_work();
  s.listen_io.stop();
  if (s.listen_thread.joinable()) s.listen_thread.join();
  s.context.handshakes.stop();
  {
    std::lock_guard lock(s.demand_mutex);
    s.stopping = true;
  }
  s.demand_changed.notify_one();
  s.context.io.stop();
  if (s.thread.joinable()) s.thread.join();
}

// Wakes the progress thread, which drives until the work has ended.
void Engine::State::background_began() {
  {
    std::lock_guard lock(demand_mutex);
    ++background;
  }
  demand_changed.notify_one();
}

void Engine::State::background_ended() {
  std::lock_guard lock(demand_mutex);
  --background;
}

void Engine::State::own_work_began() {
  {
    std::lock_guard lock(demand_mutex);
    ++own_work;
  }
  background_began();
}

void Engine::State::own_work_done() {
  {
    std::lock_guard lock(demand_mutex);
    --own_work;
  }
  own_work_settled.notify_all();
  background_ended();
}

// A split send's caller may have its message back while a copy of the unacknowledged end is
// kept (the kept tail); the rank may then exit at once. The engine lets the progress thread
// finish that work first, so a stream that stalls now still has its share sent again: the tail
// settles when TCP acknowledged it, or ends with an error when its streams fail or make no
// progress for the timeout. The wait is bounded by the timeout and a little more.
void Engine::State::wait_for_own_work() {
  const auto patience = context.config.timeout + std::chrono::seconds(1);
  std::unique_lock lock(demand_mutex);
  own_work_settled.wait_for(lock, patience, [this] { return own_work == 0; });
}

bool Engine::State::background_pending() {
  return !stopping && background > 0;
}

// The progress thread: sleeps until background operations are in flight, then drives until
// none is left (a blocking caller that drives meanwhile holds `driver`, and runs theirs too).
void Engine::State::drive_background() {
  for (;;) {
    {
      std::unique_lock lock(demand_mutex);
      demand_changed.wait(lock, [this] { return stopping || background > 0; });
      if (stopping) return;
    }
    std::lock_guard drive(driver);
    context.polled_readers.stop_polling();  // this thread sleeps in the reactor
    while (background_pending()) context.io.run_one_for(std::chrono::milliseconds(100));
  }
}

void Engine::start_background(Operation operation, Completion done) {
  State& s = *state_;
  s.background_began();
  asio::post(s.context.io, [&s, operation = std::move(operation), done = std::move(done)] {
    operation([&s, done](const Outcome& outcome) {
      s.background_ended();  // over before anyone learns it is: a caller may then drive at once
      done(outcome);
    });
  });
}

std::unique_lock<std::mutex> Engine::try_to_drive() {
  State& s = *state_;
  std::unique_lock drive(s.driver, std::try_to_lock);
  if (drive.owns_lock() && s.background_pending()) drive.unlock();
  return drive;
}

void Engine::set_blocking_drive(bool on) {
  state_->blocking_drive = on;
}

void Engine::set_shared(bool shared) {
  state_->shared.store(shared, std::memory_order_relaxed);
}

bool Engine::blocking_call_drives_alone() const {
  return state_->blocking_drive && !state_->shared.load(std::memory_order_relaxed) &&
         !state_->background_pending();
}

Outcome Engine::drive_until_finished(BlockingOutcome& outcome) {
  State& s = *state_;
  // Poll before sleeping: waking a thread that sleeps in epoll_wait costs tens of microseconds
  // on a virtual machine, longer than a small message's round trip. The incoming streams'
  // empty sockets are read directly meanwhile (polled_readers.hpp). Each empty poll yields the
  // core, so that a rank oversubscribing it lets the others run. Polling stays on after the
  // call, for the next one: whoever drives without polling stops it first.
  PolledReaders& polled = s.context.polled_readers;
  polled.start_polling();
  auto last_event = Clock::now();
  while (!outcome.finished) {
    // The listed sockets first: when a read finishes the call, it costs no epoll_wait().
    const bool read = polled.poll();
    if (outcome.finished) break;
    if (s.context.io.poll_one() > 0 || read) {
      last_event = Clock::now();
      continue;
    }
    if (Clock::now() - last_event < kPollBeforeSleeping) {
      std::this_thread::yield();
      continue;
    }
    polled.stop_polling();
    if (const auto& host = s.context.config.while_waiting) {
      host();
      if (s.context.io.stopped()) return engine_stopped();
      s.context.io.run_one_for(kWhileWaitingEvery);
    } else if (s.context.io.run_one() == 0) {
      return engine_stopped();
    }
    polled.start_polling();
    last_event = Clock::now();
  }
  return outcome.outcome;
}

const EngineConfig& Engine::config() const {
  return state_->context.config;
}

std::vector<std::string> Engine::listening_addresses() const {
  std::vector<std::string> addresses;
  for (const auto& acceptor : state_->acceptors) {
    addresses.push_back(endpoint_text(acceptor->local_endpoint()));
  }
  return addresses;
}

void Engine::set_peer_addresses(int peer, std::vector<std::string> addresses) {
  state_->send.set_peer_addresses(peer, std::move(addresses));
}

void Engine::post(std::function<void()> work) {
  asio::post(state_->context.io, std::move(work));
}

void Engine::send(SendRequest request, Completion done) {
  state_->send.send(std::move(request), std::move(done));
}

void Engine::recv(RecvRequest request, Completion done) {
  state_->receive.recv(std::move(request), std::move(done));
}

Outcome Engine::begin_call(std::uint64_t sequence, std::uint64_t signature,
                           std::function<void(const Outcome&)> on_mismatch,
                           std::shared_ptr<void> owner) {
  State& s = *state_;
  s.reserved.erase(sequence);
  s.call_nodes.at(s.calls, sequence) = {signature, std::move(on_mismatch), std::move(owner)};
  auto early = s.early_signatures.find(sequence);
  if (early == s.early_signatures.end()) return {};
  const EarlySignature seen = early->second;
  s.early_signature_nodes.erase(s.early_signatures, early);
  if (seen.signature == signature) return std::nullopt;
  return mismatch(seen.peer, sequence);
}

void Engine::end_call(std::uint64_t sequence) {
  State& s = *state_;
  if (auto call = s.calls.find(sequence); call != s.calls.end()) {
    s.call_nodes.erase(s.calls, call);
  }
  s.receive.abandon_call(sequence);
  s.send.abandon_call(sequence);
  s.reserved.erase(sequence);
  std::uint64_t& highest = s.highest_ended[space_of(sequence)];
  highest = std::max(highest, sequence);
}

void Engine::reserve_call(std::uint64_t sequence) {
  state_->reserved.insert(sequence);
}

void Engine::note_local_call(std::uint64_t sequence) {
  std::atomic<std::uint64_t>& highest = state_->highest_local[space_of(sequence)];
  std::uint64_t seen = highest.load(std::memory_order_relaxed);
  while (seen < sequence && !highest.compare_exchange_weak(seen, sequence)) {
  }
}

EngineSendCounters Engine::send_counters() const {
  return state_->send.counters();
}

bool Engine::State::check_signature(int peer, std::uint64_t sequence, std::uint64_t signature) {
  if (call_number(sequence) == 0) return signature == 0;
  if (auto call = calls.find(sequence); call != calls.end()) {
    if (call->second.signature == signature) return true;
    auto on_mismatch = call->second.on_mismatch;
    on_mismatch(mismatch(peer, sequence));
    return false;
  }
  const std::uint32_t space = space_of(sequence);
  if (sequence <=
          std::max(highest_ended[space], highest_local[space].load(std::memory_order_acquire)) &&
      !reserved.contains(sequence)) {
    context.log(
        fmt::format("rank {} sent a message of call {}, which had already ended here "
                    "(ranks called different collectives?)",
                    peer, call_label(sequence)));
    return false;
  }
  if (!early_signatures.contains(sequence)) {
    early_signature_nodes.at(early_signatures, sequence) = {peer, signature};
  }
  return true;
}

// Binds to the first free port of the configured range (any port when there is none).
void Engine::State::bind_in_range(asio::ip::tcp::acceptor& acceptor,
                                  const asio::ip::address& address, std::size_t lane,
                                  const std::string& text) const {
  const std::uint16_t low = context.config.listen_port_low;
  const std::uint16_t high = context.config.listen_port_high;
  asio::error_code error;
  if (low == 0) {
    acceptor.bind(asio::ip::tcp::endpoint(address, 0), error);
    if (error) {
      throw TransportError(
          ErrorKind::resource,
          fmt::format("cannot listen on lane {} address {}: {}", lane, text, error.message()));
    }
    return;
  }
  for (unsigned port = low; port <= high; ++port) {
    acceptor.bind(asio::ip::tcp::endpoint(address, static_cast<std::uint16_t>(port)), error);
    if (!error) return;
    if (error != asio::error::address_in_use) break;
  }
  throw TransportError(
      ErrorKind::resource,
      fmt::format("cannot listen on lane {} address {}: no free port in {}-{} (MULTILANE_PORTS){}",
                  lane, text, low, high,
                  error && error != asio::error::address_in_use ? ": " + error.message() : ""));
}

void Engine::State::listen() {
  for (std::size_t lane = 0; lane < context.config.lane_addresses.size(); ++lane) {
    const std::string& text = context.config.lane_addresses[lane];
    asio::error_code error;
    const auto address = asio::ip::make_address(text, error);
    if (error) {
      throw UsageError(fmt::format("lane {} address '{}' is not an IP address", lane, text));
    }
    asio::ip::tcp::acceptor listening(listen_io);
    listening.open(asio::ip::tcp::endpoint(address, 0).protocol());
    apply_buffer_sizes(listening, context.config.lan.socket);  // accepted sockets inherit them
    bind_in_range(listening, address, lane, text);
    listening.listen();
    // No bound on the handshakes under way: every rank may connect each of its streams at once.
    acceptors.push_back(std::make_unique<AuthenticatedAcceptor>(
        std::move(listening), context.handshakes,
        AuthenticatedAcceptor::Handlers{
            .handshake =
                [this, lane = static_cast<int>(lane)](const std::string& peer) {
                  receive.handshake_started();
                  return handshake_steps(peer, lane);
                },
            .dropped = {},
            .abandoned = [this] { asio::post(context.io, [this] { receive.handshake_ended(); }); },
            .accept_failed = [this](const std::string& why) { context.log(why); },
            .max_pending = 0}));
    acceptors.back()->start();
  }
}

// The steps of the handshake of a connection accepted on `lane` (authenticated_acceptor.hpp).
AcceptedHandshake Engine::State::handshake_steps(const std::string& peer, int lane) {
  return {
      .config =
          [this, lane] {
            return context.handshake(pack_identity({context.config.rank, lane, 0}));
          },
      .passed =
          [this, lane](asio::io_context&, asio::ip::tcp::socket socket, const PeerHello& hello) {
            const StreamIdentity id = unpack_identity(hello.identity);
            if (id.rank < 0 || id.rank >= context.config.size || id.lane != lane) {
              throw TransportError(
                  ErrorKind::protocol,
                  fmt::format("peer claims to be rank {} on lane {}", id.rank, id.lane));
            }
            const auto protocol = socket.local_endpoint().protocol();
            const int adopted = socket.release();
            asio::post(context.io, [this, protocol, adopted, id] {
              auto connection = std::make_shared<Connection>(context.io);
              connection->socket.assign(protocol, adopted);
              connection->socket.set_option(asio::ip::tcp::no_delay(true));
              receive.adopt(connection, id.rank, id.lane, id.stream, /*opened_by_peer=*/true);
              send.peer_opened_connection(id.rank, id.lane, id.stream, connection);
              receive.handshake_ended();
            });
          },
      .refused =
          [this, peer](const std::exception& e) {
            // A peer that closes between two messages of the handshake is a process that
            // exited during it (a rank whose last call ended while it still connected another
            // lane, for instance), not a stranger turned away: nothing to report.
            if (dynamic_cast<const HandshakeAbandoned*>(&e) == nullptr) {
              context.log(fmt::format("rejected a connection from {}: {}", peer, e.what()));
            }
            asio::post(context.io, [this] { receive.handshake_ended(); });
          }};
}

void Engine::State::arm_watchdog() {
  const auto period = std::clamp<std::chrono::milliseconds>(
      context.config.timeout / 4, std::chrono::milliseconds{10}, std::chrono::milliseconds{1000});
  watchdog.expires_after(period);
  watchdog.async_wait([this](const asio::error_code& error) {
    if (error) return;
    const auto now = Clock::now();
    receive.check_timeouts(now);
    send.check_timeouts(now);
    arm_watchdog();
  });
}

}  // namespace multilane::runtime
