// wan/path_connect.cpp — connecting and accepting the streams of a path (see path_connect.hpp).
#include "wan/path_connect.hpp"

#include <fmt/format.h>

#include <charconv>

#include "multilane/errors.hpp"
#include "runtime/tcp/transport_error.hpp"
#include "wan/relay_protocol.hpp"
#include "wan/stream_tag.hpp"

namespace multilane::wan {

using runtime::Clock;
using runtime::TransportError;

std::string endpoint_text(const asio::ip::tcp::endpoint& endpoint) {
  if (endpoint.address().is_v6()) {
    return fmt::format("[{}]:{}", endpoint.address().to_string(), endpoint.port());
  }
  return fmt::format("{}:{}", endpoint.address().to_string(), endpoint.port());
}

namespace {

void check_io(const runtime::IoResult& result, const asio::ip::tcp::endpoint& relay,
              std::string_view what, const runtime::StreamOptions& options) {
  switch (result.outcome) {
    case runtime::IoOutcome::Done:
      return;
    case runtime::IoOutcome::Timeout:
      throw TransportError(ErrorKind::timeout,
                           fmt::format("relay {}: timed out after {} {}", endpoint_text(relay),
                                       runtime::seconds_text(options.timeout), what));
    case runtime::IoOutcome::Closed:
      throw TransportError(
          ErrorKind::peer_gone,
          fmt::format("relay {} closed the connection while {}", endpoint_text(relay), what));
    case runtime::IoOutcome::Failed:
      throw TransportError(runtime::kind_of(result.error),
                           fmt::format("relay {}: {} failed: {}", endpoint_text(relay), what,
                                       result.error.message()));
  }
}

}  // namespace

asio::ip::tcp::socket connect_through_relay(asio::io_context& io,
                                            const asio::ip::tcp::endpoint& relay,
                                            const asio::ip::tcp::endpoint& target,
                                            Clock::time_point deadline,
                                            const runtime::StreamOptions& options,
                                            std::uint64_t identity) {
  auto socket = runtime::connect_stream(io, relay, deadline, options, identity).socket;
  const RelayRequestBytes request = encode_relay_request(target);
  check_io(runtime::write_all(io, socket, request, deadline), relay, "sending the request",
           options);
  RelayReplyHeader header{};
  check_io(runtime::read_exact(io, socket, header, deadline), relay,
           fmt::format("waiting for its answer about {}", endpoint_text(target)), options);
  const RelayReplyStart reply = decode_relay_reply(header);
  if (!reply.valid) {
    throw TransportError(ErrorKind::protocol,
                         fmt::format("relay {} sent a malformed answer", endpoint_text(relay)));
  }
  if (reply.connected) return socket;
  std::string text(reply.text_length, '\0');
  check_io(runtime::read_exact(io, socket, std::as_writable_bytes(std::span(text)), deadline),
           relay, "reading its answer", options);
  throw TransportError(ErrorKind::peer_gone,
                       fmt::format("relay {} cannot reach {}: {}", endpoint_text(relay),
                                   endpoint_text(target), text));
}

PathStreams connect_path(asio::io_context& io, const PathTarget& target,
                         const runtime::StreamOptions& options) {
  const auto deadline = Clock::now() + options.timeout;
  const std::uint32_t session = new_session();
  PathStreams path{{}, options};
  path.options.relayed = options.relayed || target.relay.has_value();
  auto connect_one = [&](int i, asio::io_context& own) -> runtime::AuthenticatedStream {
    const std::uint64_t identity = pack_tag(
        {session, static_cast<std::uint16_t>(options.streams), static_cast<std::uint16_t>(i)});
    if (!target.relay)
      return runtime::connect_stream(own, target.peer, deadline, options, identity);
    return {connect_through_relay(own, *target.relay, target.peer, deadline, options, identity), 0,
            false};
  };
  for (auto& stream : runtime::connect_at_once(io, options.streams, connect_one)) {
    path.options.relayed = path.options.relayed || stream.peer_is_relay;
    path.sockets.push_back(std::move(stream.socket));
  }
  return path;
}

namespace {

// Connections that failed the handshake (strangers, other jobs) are refused and counted; the
// wait goes on until the deadline, so that no stranger can break a path being set up.
struct Refusals {
  int count = 0;
  std::string last;
  std::string text() const {
    if (count == 0) return {};
    return fmt::format("; refused {} connection{} that failed the handshake, the last: {}", count,
                       count == 1 ? "" : "s", last);
  }
};

}  // namespace

PathStreams accept_path(asio::io_context& io, runtime::StreamListener& listener,
                        const runtime::StreamOptions& options) {
  const auto deadline = Clock::now() + options.timeout;
  const auto count = static_cast<std::size_t>(options.streams);
  std::vector<bool> seen(count);
  std::optional<StreamTag> first;
  Refusals refusals;
  runtime::StreamListener::AcceptWatch watch;
  // A stream of another path or stream count is an error at once, not a wait for the rest.
  watch.passed = [&](const runtime::StreamListener::Accepted& stream) {
    const StreamTag tag = unpack_tag(stream.identity);
    const std::string peer = runtime::peer_name(stream.socket);
    if (tag.count != count) {
      throw TransportError(
          ErrorKind::mismatch,
          fmt::format(
              "peer {} opened a path of {} streams, this end expects {} (both ends must use the "
              "same number of streams)",
              peer, tag.count, count));
    }
    if (first && tag.session != first->session) {
      throw TransportError(
          ErrorKind::protocol,
          fmt::format(
              "peer {} opened a second path on port {} while the streams of the first were awaited",
              peer, listener.port()));
    }
    if (tag.index >= count || seen[tag.index]) {
      throw TransportError(ErrorKind::protocol,
                           fmt::format("peer {} sent stream {} of {} twice or out of range", peer,
                                       tag.index, count));
    }
    first = tag;
    seen[tag.index] = true;
  };
  watch.refused = [&](const TransportError& e) {
    ++refusals.count;
    refusals.last = e.what();
  };
  std::vector<runtime::StreamListener::Accepted> accepted;
  try {
    listener.accept_streams(io, options.streams, deadline, watch, accepted);
  } catch (const TransportError& e) {
    if (e.kind() != ErrorKind::timeout) throw;
    throw TransportError(ErrorKind::timeout,
                         fmt::format("{} (stream {} of {} on port {}){}", e.what(),
                                     accepted.size() + 1, count, listener.port(), refusals.text()));
  }
  PathStreams path{std::vector<asio::ip::tcp::socket>(), options};
  std::vector<std::optional<asio::ip::tcp::socket>> slots(count);
  for (auto& stream : accepted) {
    path.options.relayed = path.options.relayed || stream.peer_is_relay;
    slots[unpack_tag(stream.identity).index].emplace(std::move(stream.socket));
  }
  for (auto& slot : slots) path.sockets.push_back(std::move(*slot));
  return path;
}

asio::ip::tcp::endpoint resolve_endpoint(const std::string& host, std::uint16_t port,
                                         const std::string& what) {
  asio::error_code error;
  const auto address = asio::ip::make_address(host, error);
  if (!error) return {address, port};
  asio::io_context io;
  asio::ip::tcp::resolver resolver(io);
  const auto results = resolver.resolve(host, std::to_string(port), error);
  if (error || results.empty()) {
    throw UsageError(fmt::format("{}: cannot resolve host \"{}\": {}", what, host,
                                 error ? error.message() : "no address"));
  }
  return results.begin()->endpoint();
}

asio::ip::tcp::endpoint resolve_host_port(const std::string& text, const std::string& what,
                                          bool any_port) {
  std::string host;
  std::string_view port_text;
  if (text.starts_with('[')) {
    const auto close = text.find(']');
    if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      throw UsageError(fmt::format("{}: \"{}\" is not host:port", what, text));
    }
    host = text.substr(1, close - 1);
    port_text = std::string_view(text).substr(close + 2);
  } else {
    const auto colon = text.rfind(':');
    if (colon == std::string::npos || colon == 0) {
      throw UsageError(fmt::format("{}: \"{}\" is not host:port", what, text));
    }
    host = text.substr(0, colon);
    port_text = std::string_view(text).substr(colon + 1);
  }
  unsigned port = 0;
  const auto [end, ec] =
      std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  const unsigned lowest = any_port ? 0 : 1;
  if (ec != std::errc{} || end != port_text.data() + port_text.size() || port < lowest ||
      port > 65535) {
    throw UsageError(
        fmt::format("{}: port \"{}\" of \"{}\" must be {}..65535", what, port_text, text, lowest));
  }

  return resolve_endpoint(host, static_cast<std::uint16_t>(port), what);
}

}  // namespace multilane::wan
