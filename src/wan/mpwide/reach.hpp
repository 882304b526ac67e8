// wan/mpwide/reach.hpp — where an MPWide end connects to, and whether its peer listens yet.
//
// MPWide resolves host names to IPv4 addresses (its listening ends bind IPv4), and an end
// that may also serve first tries its peer and listens itself when nothing answers. The
// probe is a plain TCP connection, closed at once: a multilane listener counts it as a
// refused stranger and goes on waiting for its peer.
#pragma once

#include <asio.hpp>
#include <chrono>
#include <optional>
#include <string>

namespace multilane::wan::mpwide {

// The IPv4 address of `host` as text; the text itself when it starts with a digit (as
// MPWide); nothing when it does not resolve.
std::optional<std::string> ipv4_address(const std::string& host);

// True when a TCP connection to `peer` is accepted within `limit`.
bool listens(const asio::ip::tcp::endpoint& peer, std::chrono::milliseconds limit);

// "0", "0.0.0.0" and "" mean: only listen (MPWide's server-only ends).
bool listen_only(const std::string& host);

}  // namespace multilane::wan::mpwide

namespace multilane::wan::mpwide {

// The peer to connect to, or nothing when this end listens: `host` is listen-only, or nothing
// listens at host:port yet and `may_listen`. Throws UsageError when the host does not resolve
// and ChannelError when nothing listens and this end may not listen itself.
std::optional<asio::ip::tcp::endpoint> peer_to_connect(const std::string& host, int port,
                                                       bool may_listen);

// The address a listening end binds: MULTILANE_BIND, or every IPv4 address.
asio::ip::tcp::endpoint listening_endpoint(int port);

}  // namespace multilane::wan::mpwide
