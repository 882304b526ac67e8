// wan/path_connect.hpp — opening the N authenticated streams of one path.
//
// The connecting end opens N connections, each authenticated with the job secret and tagged
// with one session number, the count N and its index (stream_tag.hpp), either straight to the
// peer or through a relay (relay_protocol.hpp). The listening end accepts N connections and
// checks that they carry one session and the count it expects, so a peer configured with
// another stream count gets a clear error instead of a hang. Both work on a caller's
// io_context (a private one per path while paths are set up in parallel); runtime::rehome() moves
// the sockets onto the context the paths share. Every step is bounded by options.timeout.
#pragma once

#include <asio.hpp>
#include <optional>
#include <string>
#include <vector>

#include "runtime/streams/stream_set.hpp"

namespace multilane::wan {

struct PathTarget {
  asio::ip::tcp::endpoint peer;
  std::optional<asio::ip::tcp::endpoint> relay;  // go through this relay
};

// A path's streams, connected and authenticated, and the options for their set: the caller's,
// with `relayed` set when the path goes through a relay (named by the connecting end, or a
// relay's handshake said so, also in forward mode, where the connecting end names none and
// the listening end is reached by the relay), so that its streams in use do not adapt to what
// the hop to the relay shows (runtime::StreamOptions::relayed).
struct PathStreams {
  std::vector<asio::ip::tcp::socket> sockets;
  runtime::StreamOptions options;
};

PathStreams connect_path(asio::io_context& io, const PathTarget& target,
                         const runtime::StreamOptions& options);
PathStreams accept_path(asio::io_context& io, runtime::StreamListener& listener,
                        const runtime::StreamOptions& options);

// One connection through a relay: authenticated with the relay (as `identity`), which
// connected and authenticated to `target`; throws TransportError with the relay's reason when
// it refused.
asio::ip::tcp::socket connect_through_relay(asio::io_context& io,
                                            const asio::ip::tcp::endpoint& relay,
                                            const asio::ip::tcp::endpoint& target,
                                            runtime::Clock::time_point deadline,
                                            const runtime::StreamOptions& options,
                                            std::uint64_t identity);

// "host" (a name or a numeric address) and a port to an endpoint; throws UsageError naming
// `what` when it does not resolve.
asio::ip::tcp::endpoint resolve_endpoint(const std::string& host, std::uint16_t port,
                                         const std::string& what);
// "host:port" (IPv6 in brackets) to an endpoint, the same way; port 0 only if `any_port`.
asio::ip::tcp::endpoint resolve_host_port(const std::string& text, const std::string& what,
                                          bool any_port = false);
std::string endpoint_text(const asio::ip::tcp::endpoint& endpoint);

}  // namespace multilane::wan
