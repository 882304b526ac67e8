// wan/relay_server.cpp — the relay daemon (see relay_server.hpp).
#include "wan/relay_server.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <variant>

#include "multilane/errors.hpp"
#include "multilane/units.hpp"
#include "runtime/streams/stream_set.hpp"
#include "runtime/tcp/auth.hpp"
#include "runtime/tcp/tcp_connect.hpp"
#include "runtime/tcp/transport_error.hpp"
#include "wan/path_connect.hpp"
#include "wan/progress.hpp"
#include "wan/relay_protocol.hpp"

namespace multilane::wan {

namespace {

std::pair<asio::ip::address, int> parse_network(const std::string& text) {
  const auto slash = text.find('/');
  asio::error_code ec;
  const auto address = asio::ip::make_address(text.substr(0, slash), ec);
  int prefix = address.is_v4() ? 32 : 128;
  bool bad = static_cast<bool>(ec);
  if (!bad && slash != std::string::npos) {
    const std::string_view digits = std::string_view(text).substr(slash + 1);
    const auto [end, parse_error] =
        std::from_chars(digits.data(), digits.data() + digits.size(), prefix);
    bad = parse_error != std::errc{} || end != digits.data() + digits.size() || prefix < 0 ||
          prefix > (address.is_v4() ? 32 : 128);
  }
  if (bad) {
    throw UsageError(fmt::format("--allow: \"{}\" is not a network such as 10.1.0.0/16", text));
  }
  return {address, prefix};
}

// The first `prefix` bits of two addresses of one family agree.
bool same_prefix(const asio::ip::address& a, const asio::ip::address& b, int prefix) {
  if (a.is_v4() != b.is_v4()) return false;
  auto bits = [](const asio::ip::address& x) {
    std::vector<unsigned char> out;
    if (x.is_v4()) {
      const auto v = x.to_v4().to_bytes();
      out.assign(v.begin(), v.end());
    } else {
      const auto v = x.to_v6().to_bytes();
      out.assign(v.begin(), v.end());
    }
    return out;
  };
  const auto x = bits(a), y = bits(b);
  for (int i = 0; i < prefix; ++i) {
    const int byte = i / 8, shift = 7 - i % 8;
    if (((x[byte] >> shift) & 1) != ((y[byte] >> shift) & 1)) return false;
  }
  return true;
}

// Two descriptors on their way from a worker to the loop; closed if never taken.
struct Descriptors {
  int client = -1;
  int target = -1;
  ~Descriptors() {
    if (client >= 0) ::close(client);
    if (target >= 0) ::close(target);
  }
};

std::string outcome_text(const runtime::IoResult& result) {
  switch (result.outcome) {
    case runtime::IoOutcome::Done:
      return "done";
    case runtime::IoOutcome::Timeout:
      return "timed out";
    case runtime::IoOutcome::Closed:
      return "the client closed the connection";
    case runtime::IoOutcome::Failed:
      return result.error.message();
  }
  return "?";
}

}  // namespace

std::string stats_text(const RelayStats& s) {
  return fmt::format(
      "channels {} forwarded ({} active), {} refused, {} unreachable targets; {} to targets, {} "
      "back",
      s.forwarded, s.active, s.refused, s.target_failures, approx_size(s.bytes_to_targets),
      approx_size(s.bytes_to_clients));
}

RelayServer::RelayServer(const RelayServerOptions& options, Log log)
    : options_(options), log_(std::move(log)), work_(asio::make_work_guard(loop_)) {
  options_.gate.relay = true;  // clients learn in the handshake that they go through a relay
  for (const std::string& network : options.allow) allow_.push_back(parse_network(network));
  if (options.forward_to && !allowed(options.forward_to->address())) {
    throw UsageError(fmt::format("--forward: {} is not in the --allow networks",
                                 endpoint_text(*options.forward_to)));
  }
  try {
    gate_ = std::make_unique<AuthGate>(
        loop_, options_.gate,
        [this](asio::io_context& io, asio::ip::tcp::socket client, std::uint64_t identity,
               runtime::Clock::time_point deadline) {
          admit(io, std::move(client), identity, deadline);
        },
        [this](const std::string& peer, const std::string& reason) {
          ++refused_;
          note(RelayEvent::Refused, fmt::format("refused {}: {}", peer, reason));
        });
  } catch (const std::system_error& e) {
    throw runtime::TransportError(
        ErrorKind::resource, fmt::format("cannot listen on {}: {}",
                                         endpoint_text(options.gate.listen), e.code().message()));
  }
}

RelayServer::~RelayServer() {
  gate_->stop();
}

std::uint16_t RelayServer::port() const {
  return gate_->port();
}

void RelayServer::run() {
  gate_->start();
  loop_.run();
}

void RelayServer::stop() {
  asio::post(loop_, [this] {
    stopping_ = true;
    gate_->stop();
    const auto open = channels_;  // closing erases from channels_
    for (auto& [id, channel] : open) channel->close();
    work_.reset();
  });
}

RelayStats RelayServer::stats() const {
  return {forwarded_, active_, refused_, target_failures_, bytes_to_targets_, bytes_to_clients_};
}

bool RelayServer::allowed(const asio::ip::address& address) const {
  if (allow_.empty()) return true;
  for (const auto& [network, prefix] : allow_) {
    if (same_prefix(network, address, prefix)) return true;
  }
  return false;
}

void RelayServer::note(RelayEvent event, std::string text) {
  asio::post(loop_, [this, event, text = std::move(text)] {
    if (log_) log_(event, text);
  });
}

// On a worker thread: the client is authenticated; read its request, reach its target.
void RelayServer::admit(asio::io_context& io, asio::ip::tcp::socket client, std::uint64_t identity,
                        runtime::Clock::time_point deadline) {
  const std::string peer = runtime::peer_name(client);
  const int client_fd = client.native_handle();
  gate_->watch(client_fd);
  auto refuse = [&](const std::string& why, std::atomic<std::uint64_t>& counter) {
    ++counter;  // before the client hears of it: a client that saw the refusal sees it counted
    const std::string reply = encode_relay_reply(why);
    runtime::write_all(io, client, std::as_bytes(std::span(reply)), deadline);
    gate_->unwatch(client_fd);
    note(RelayEvent::Refused, fmt::format("refused {}: {}", peer, why));
  };
  if (options_.forward_to) return forward(io, std::move(client), identity, *options_.forward_to);
  RelayRequestBytes request{};
  const auto got = runtime::read_exact(io, client, request, deadline);
  if (got.outcome != runtime::IoOutcome::Done) {
    gate_->unwatch(client_fd);
    ++refused_;
    return note(RelayEvent::Refused,
                fmt::format("refused {}: no request ({})", peer, outcome_text(got)));
  }
  const auto decoded = decode_relay_request(request);
  if (const auto* problem = std::get_if<std::string>(&decoded)) return refuse(*problem, refused_);
  const auto target = std::get<asio::ip::tcp::endpoint>(decoded);
  if (!allowed(target.address())) {
    return refuse(fmt::format("{} is not in the relay's allowed networks", endpoint_text(target)),
                  refused_);
  }
  asio::ip::tcp::socket target_socket(io);
  try {
    target_socket = reach(io, target, identity);
  } catch (const std::exception& e) {
    return refuse(e.what(), target_failures_);
  }
  const std::string ok = encode_relay_reply("");
  const auto sent = runtime::write_all(io, client, std::as_bytes(std::span(ok)), deadline);
  gate_->unwatch(client_fd);
  if (sent.outcome != runtime::IoOutcome::Done) {
    ++refused_;
    return note(RelayEvent::Refused, fmt::format("refused {}: it left before the answer ({})", peer,
                                                 outcome_text(sent)));
  }
  hand_to_loop(std::move(client), std::move(target_socket),
               fmt::format("{} -> {}", peer, endpoint_text(target)));
}

// On a worker thread, in forwarding mode: the client does not speak the relay's protocol; it
// took the relay for its peer, so the relay reaches the fixed target and splices at once.
void RelayServer::forward(asio::io_context& io, asio::ip::tcp::socket client,
                          std::uint64_t identity, const asio::ip::tcp::endpoint& target) {
  const std::string peer = runtime::peer_name(client);
  asio::ip::tcp::socket target_socket(io);
  try {
    target_socket = reach(io, target, identity);
  } catch (const std::exception& e) {
    gate_->unwatch(client.native_handle());
    ++target_failures_;
    return note(RelayEvent::Refused, fmt::format("disconnected {}: cannot reach {}: {}", peer,
                                                 endpoint_text(target), e.what()));
  }
  gate_->unwatch(client.native_handle());
  hand_to_loop(std::move(client), std::move(target_socket),
               fmt::format("{} -> {}", peer, endpoint_text(target)));
}

// On a worker thread: connects and authenticates to the target as the client (`identity`),
// saying that it is a relay.
asio::ip::tcp::socket RelayServer::reach(asio::io_context& io,
                                         const asio::ip::tcp::endpoint& target,
                                         std::uint64_t identity) {
  const auto deadline = runtime::Clock::now() + options_.connect_timeout;
  asio::ip::tcp::socket socket(io);
  runtime::connect_with_retry(io, socket, target, std::nullopt, deadline, {});
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - runtime::Clock::now());
  runtime::authenticate(io, socket, runtime::Role::Connector,
                        {.job_id = options_.gate.job_id,
                         .secret = options_.gate.secret,
                         .timeout = std::max(left, std::chrono::milliseconds{1}),
                         .identity = identity,
                         .relay = true});
  return socket;
}

// From a worker thread: the loop splices the two from now on.
void RelayServer::hand_to_loop(asio::ip::tcp::socket client, asio::ip::tcp::socket target,
                               std::string route) {
  auto descriptors = std::make_shared<Descriptors>();
  descriptors->client = client.release();
  descriptors->target = target.release();
  asio::post(loop_, [this, descriptors, route = std::move(route)] {
    if (stopping_) return;  // the descriptors close with their holder
    const int c = std::exchange(descriptors->client, -1);
    const int t = std::exchange(descriptors->target, -1);
    open_channel(c, t, route);
  });
}

void RelayServer::open_channel(int client_fd, int target_fd, const std::string& route) {
  const std::uint64_t id = next_channel_++;
  auto channel = std::make_shared<Splice>(
      gate_->hand_over(client_fd), gate_->hand_over(target_fd), options_.buffer_size,
      bytes_to_targets_, bytes_to_clients_, [this, id, route](const SpliceTotals& totals) {
        channels_.erase(id);
        --active_;
        note(RelayEvent::Closed,
             fmt::format("channel {} {} closed{}: {} to the target, {} back", id, route,
                         totals.clean ? "" : " (broken)", approx_size(totals.forward),
                         approx_size(totals.backward)));
      });
  channels_[id] = channel;
  ++forwarded_;
  ++active_;
  note(RelayEvent::Opened, fmt::format("channel {} {} opened", id, route));
  channel->start();
}

}  // namespace multilane::wan
