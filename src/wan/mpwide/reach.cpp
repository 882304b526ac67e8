// wan/mpwide/reach.cpp — resolving and probing an MPWide end's peer (reach.hpp).
#include "wan/mpwide/reach.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>

#include <fmt/format.h>

#include <cctype>
#include <cstdlib>

#include "multilane/channels.hpp"
#include "multilane/errors.hpp"
#include "wan/path_connect.hpp"

namespace multilane::wan::mpwide {

std::optional<std::string> ipv4_address(const std::string& host) {
  if (!host.empty() && std::isdigit(static_cast<unsigned char>(host[0]))) return host;
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), nullptr, &hints, &found) != 0 || found == nullptr) {
    return std::nullopt;
  }
  char text[INET_ADDRSTRLEN] = {};
  const auto* address = reinterpret_cast<const sockaddr_in*>(found->ai_addr);
  ::inet_ntop(AF_INET, &address->sin_addr, text, sizeof text);
  ::freeaddrinfo(found);
  return std::string(text);
}

bool listens(const asio::ip::tcp::endpoint& peer, std::chrono::milliseconds limit) {
  asio::io_context io;
  asio::ip::tcp::socket socket(io);
  bool accepted = false;
  socket.async_connect(peer, [&](const asio::error_code& error) { accepted = !error; });
  io.run_for(limit);
  asio::error_code ignored;
  socket.close(ignored);
  io.restart();
  io.run();  // the cancelled connect's handler, which refers to this frame
  return accepted;
}

bool listen_only(const std::string& host) {
  return host.empty() || host == "0" || host == "0.0.0.0";
}

// One attempt, as MPWide makes: an end that may listen must not wait long for a peer that is
// not there, and a peer that is there answers a local connect within milliseconds.
constexpr std::chrono::milliseconds kProbeLimit{1000};

std::optional<asio::ip::tcp::endpoint> peer_to_connect(const std::string& host, int port,
                                                       bool may_listen) {
  if (port < 1 || port > 65535) throw UsageError(fmt::format("port {} is not 1..65535", port));
  if (listen_only(host)) return std::nullopt;
  const auto address = ipv4_address(host);
  if (!address) throw UsageError(fmt::format("cannot resolve host \"{}\"", host));
  const auto peer =
      resolve_endpoint(*address, static_cast<std::uint16_t>(port), fmt::format("host {}", host));
  if (listens(peer, kProbeLimit)) return peer;
  if (may_listen) return std::nullopt;
  throw channels::ChannelError(
      ErrorKind::peer_gone,
      fmt::format("nothing listens on {} (start the serving end first)", endpoint_text(peer)));
}

asio::ip::tcp::endpoint listening_endpoint(int port) {
  if (port < 1 || port > 65535) throw UsageError(fmt::format("port {} is not 1..65535", port));
  const char* bind = std::getenv("MULTILANE_BIND");
  const std::string address = bind != nullptr && *bind != '\0' ? bind : "0.0.0.0";
  return resolve_endpoint(address, static_cast<std::uint16_t>(port), "MULTILANE_BIND");
}

}  // namespace multilane::wan::mpwide
