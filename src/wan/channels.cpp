// wan/channels.cpp — the channels API (include/multilane/channels.hpp) over runtime stream sets.
//
// Every established path is a runtime::StreamSet on one io_context that the Channels object
// owns, so calls involving several paths drive them all from the calling thread (exchange.hpp,
// message_relay.hpp). Paths are set up in parallel, one short-lived thread per path each on a
// private io_context, and their sockets are then moved onto the shared one.
#include <fmt/format.h>

#include <algorithm>
#include <exception>
#include <optional>
#include <system_error>
#include <thread>

#include "multilane/channels.hpp"
#include "multilane/errors.hpp"
#include "runtime/streams/stream_set.hpp"
#include "runtime/tcp/transport_error.hpp"
#include "wan/exchange.hpp"
#include "wan/message_relay.hpp"
#include "wan/path_connect.hpp"
#include "wan/path_options.hpp"

namespace multilane::channels {

namespace {

bool is_listen_host(const std::string& host) {
  return host.empty() || host == "0" || host == "0.0.0.0" || host == "::";
}

// Runs `fn`, turning transport failures into the API's ChannelError.
template <typename Fn>
auto translated(Fn fn) {
  try {
    return fn();
  } catch (const runtime::TransportError& e) {
    throw ChannelError(e.kind(), e.what());
  } catch (const std::system_error& e) {
    throw ChannelError(runtime::kind_of(e.code()), e.what());
  }
}

struct PathState {
  PathSpec spec;
  runtime::StreamOptions options;
  std::uint16_t local_port = 0;
  std::unique_ptr<runtime::StreamListener> listener;  // listening, until established
  std::optional<wan::PathTarget> target;              // connecting
  std::unique_ptr<runtime::StreamSet> set;            // once established
};

// One path being set up on its own thread and io_context.
struct Setup {
  std::unique_ptr<asio::io_context> io = std::make_unique<asio::io_context>();
  std::optional<wan::PathStreams> path;  // destroyed before `io`
  std::exception_ptr error;
};

void set_up(PathState& path, Setup& setup) {
  try {
    setup.path = path.listener ? wan::accept_path(*setup.io, *path.listener, path.options)
                               : wan::connect_path(*setup.io, *path.target, path.options);
  } catch (...) {
    setup.error = std::current_exception();
  }
}

std::string describe(const PathState& path, PathId id) {
  if (path.listener || !path.target)
    return fmt::format("path {} (listening on port {})", id, path.local_port);
  return fmt::format("path {} (to {})", id, wan::endpoint_text(path.target->peer));
}

}  // namespace

struct Channels::Impl {
  Credentials credentials;
  runtime::JobSecret key;
  std::shared_ptr<asio::io_context> io = std::make_shared<asio::io_context>();
  std::vector<PathState> paths;  // destroyed before `io`

  PathState& path(PathId id) {
    if (id < 0 || static_cast<std::size_t>(id) >= paths.size()) {
      throw UsageError(paths.empty() ? fmt::format("path {} does not exist (no paths yet)", id)
                                     : fmt::format("path {} does not exist (paths 0..{})", id,
                                                   paths.size() - 1));
    }
    return paths[static_cast<std::size_t>(id)];
  }
  const PathState& path(PathId id) const { return const_cast<Impl*>(this)->path(id); }

  runtime::StreamSet* set(PathId id) {
    PathState& p = path(id);
    if (!p.set) throw UsageError(fmt::format("path {} is not established: call establish()", id));
    return p.set.get();
  }
};

Channels::Channels(Credentials credentials) : impl_(std::make_unique<Impl>()) {
  if (credentials.secret.size() < kMinSecretLength) {
    throw UsageError(fmt::format("the job secret must have at least {} characters, got {}",
                                 kMinSecretLength, credentials.secret.size()));
  }
  impl_->key = runtime::JobSecret::from_text(credentials.secret);
  impl_->credentials = std::move(credentials);
}

Channels::~Channels() = default;
Channels::Channels(Channels&&) noexcept = default;
Channels& Channels::operator=(Channels&&) noexcept = default;

PathId Channels::add_path(const PathSpec& spec) {
  const PathId id = static_cast<PathId>(impl_->paths.size());
  const std::string what = fmt::format("path {}", id);
  try {
    wan::check_path_options(spec.options);
  } catch (const UsageError& e) {
    throw UsageError(fmt::format("{}: {}", what, e.what()));
  }
  PathState state;
  state.spec = spec;
  state.options = wan::stream_options(spec.options, impl_->credentials, impl_->key);
  if (is_listen_host(spec.host)) {
    if (!spec.relay.empty()) {
      throw UsageError(fmt::format("{}: a relay is only for the connecting end", what));
    }
    const std::string bind =
        spec.bind_address.empty() ? (spec.host == "::" ? "::" : "0.0.0.0") : spec.bind_address;
    const auto endpoint = wan::resolve_endpoint(bind, spec.port, what);
    state.listener = translated(
        [&] { return std::make_unique<runtime::StreamListener>(endpoint, state.options); });
    state.local_port = state.listener->port();
  } else {
    if (spec.port == 0) throw UsageError(fmt::format("{}: the peer's port must be 1..65535", what));
    wan::PathTarget target{wan::resolve_endpoint(spec.host, spec.port, what), std::nullopt};
    if (!spec.relay.empty()) target.relay = wan::resolve_host_port(spec.relay, what + " relay");
    state.target = target;
  }
  impl_->paths.push_back(std::move(state));
  return id;
}

void Channels::establish() {
  std::vector<PathId> pending;
  for (PathId id = 0; id < size(); ++id) {
    if (!impl_->path(id).set) pending.push_back(id);
  }
  std::vector<Setup> setups(pending.size());
  if (pending.size() == 1) {
    set_up(impl_->path(pending[0]), setups[0]);
  } else {
    std::vector<std::thread> threads;
    for (std::size_t i = 0; i < pending.size(); ++i) {
      threads.emplace_back(
          [this, &setups, &pending, i] { set_up(impl_->path(pending[i]), setups[i]); });
    }
    for (auto& t : threads) t.join();
  }
  std::optional<ChannelError> first;
  for (std::size_t i = 0; i < pending.size(); ++i) {
    PathState& p = impl_->path(pending[i]);
    try {
      if (setups[i].error) std::rethrow_exception(setups[i].error);
      std::vector<asio::ip::tcp::socket> sockets;
      for (auto& s : setups[i].path->sockets) {
        sockets.push_back(runtime::rehome(std::move(s), *impl_->io));
      }
      p.options = setups[i].path->options;
      p.set = std::make_unique<runtime::StreamSet>(impl_->io, std::move(sockets), p.options);
      p.listener.reset();  // the port is no longer needed
    } catch (const std::exception& e) {
      if (!first)
        first.emplace(kind_of(e), fmt::format("{}: {}", describe(p, pending[i]), e.what()));
    }
  }
  if (first) throw *first;
}

PathId Channels::open(const PathSpec& spec) {
  const PathId id = add_path(spec);
  establish();
  return id;
}

void Channels::close(PathId path) {
  if (auto* set = impl_->path(path).set.get()) set->close();
}

std::uint16_t Channels::local_port(PathId path) const {
  return impl_->path(path).local_port;
}

int Channels::streams(PathId path) const {
  return impl_->path(path).options.streams;
}

PathCounters Channels::counters(PathId path) const {
  const PathState& p = impl_->path(path);
  if (!p.set) return {};
  const runtime::SendCounters c = p.set->send_counters();
  return {c.messages, c.message_bytes, c.resent_bytes, c.stalls, c.streams_in_use};
}

std::string Channels::peer(PathId path) const {
  const PathState& p = impl_->path(path);
  return p.set ? p.set->peer() : std::string();
}

int Channels::size() const {
  return static_cast<int>(impl_->paths.size());
}

void Channels::send(PathId path, std::span<const std::byte> data) {
  const Outgoing out{path, data};
  psendrecv({&out, 1}, {});
}

void Channels::recv(PathId path, std::span<std::byte> buffer) {
  Incoming in{path, buffer};
  psendrecv({}, {&in, 1});
}

void Channels::sendrecv(PathId path, std::span<const std::byte> data, std::span<std::byte> buffer) {
  cycle(path, data, path, buffer);
}

void Channels::cycle(PathId to, std::span<const std::byte> data, PathId from,
                     std::span<std::byte> buffer) {
  const Outgoing out{to, data};
  Incoming in{from, buffer};
  psendrecv({&out, 1}, {&in, 1});
}

std::uint64_t Channels::dcycle(PathId to, std::span<const std::byte> data, PathId from,
                               std::span<std::byte> limit) {
  const Outgoing out{to, data};
  Incoming in{from, limit, true};
  psendrecv({&out, 1}, {&in, 1});
  return in.received;
}

std::uint64_t Channels::dsendrecv(PathId path, std::span<const std::byte> data,
                                  std::span<std::byte> limit) {
  return dcycle(path, data, path, limit);
}

void Channels::barrier(PathId path) {
  sendrecv(path, {}, {});
}

void Channels::psend(std::span<const Outgoing> parts) {
  psendrecv(parts, {});
}

void Channels::precv(std::span<Incoming> parts) {
  psendrecv({}, parts);
}

void Channels::psendrecv(std::span<const Outgoing> out, std::span<Incoming> in) {
  std::vector<wan::SendOp> sends;
  for (const Outgoing& o : out) sends.push_back({impl_->set(o.path), o.data});
  std::vector<wan::RecvOp> receives;
  for (const Incoming& i : in) {
    receives.push_back({impl_->set(i.path), i.buffer,
                        i.up_to ? runtime::ReceiveSize::UpTo : runtime::ReceiveSize::Exact});
  }
  translated([&] { wan::exchange(*impl_->io, sends, receives); });
  for (std::size_t k = 0; k < in.size(); ++k) in[k].received = receives[k].received;
}

RelayCounters Channels::relay(std::span<const std::pair<PathId, PathId>> pairs,
                              std::uint64_t max_message) {
  std::vector<wan::SetPair> sets;
  for (const auto& [a, b] : pairs) sets.emplace_back(impl_->set(a), impl_->set(b));
  const wan::RelayTotals totals =
      translated([&] { return wan::relay_messages(*impl_->io, sets, max_message); });
  return {totals.messages, totals.bytes};
}

}  // namespace multilane::channels
