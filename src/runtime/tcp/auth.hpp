// runtime/tcp/auth.hpp — mutual authentication of a fresh TCP connection by a job secret.
//
// Every process of a job knows the job id and a 32-byte job secret; a connection is used only
// once both ends proved they know the secret. Handshake (both sides at once, symmetric but for
// the role byte, so no side waits for the other to speak first):
//   1. send Hello: u32 magic "1MLH", u16 protocol version, u16 role (1 connector, 2 listener;
//      bit 0x100 set when the speaker is a relay that forwards the connection), u64 job id, u64
//      identity (who is speaking: e.g. rank, lane and stream of the connection), 32-byte nonce
//      from randombytes_buf (fresh per connection, so proofs cannot be replayed); read the
//      peer's Hello; check magic, version, job id and that the roles differ.
//   2. send proof = crypto_auth (HMAC-SHA512-256) keyed by the secret over
//      "multilane-auth-v1" || own Hello || peer Hello; read the peer's proof and compare it
//      with sodium_memcmp (constant time) to the one expected from the peer's side.
// The proof covers both nonces, so it is valid only on this connection, the role, so a
// proof cannot be reflected back to its sender, and the identities, so a peer cannot claim
// to be another rank of the job without the secret. The relay bit is covered too: an end
// learns from it that the peer is `multilane relay` (wan/relay_server.hpp), so its streams'
// own round trip and stalls tell of one hop of the path only.
// On any failure the socket is closed and TransportError says why ("handshake with
// 127.0.0.1:4711: peer failed authentication (wrong job secret?)"); HandshakeAbandoned when the
// peer closed the connection between two messages of the handshake, which is how a process that
// exits during one looks, rather than a stranger's or a wrong secret's doing.
#pragma once

#include <array>
#include <asio.hpp>
#include <chrono>
#include <cstdint>
#include <string_view>

#include "runtime/tcp/transport_error.hpp"

namespace multilane::runtime {

class HandshakeAbandoned : public TransportError {
 public:
  using TransportError::TransportError;
};

inline constexpr std::size_t kJobSecretBytes = 32;  // crypto_auth_KEYBYTES

struct JobSecret {
  std::array<unsigned char, kJobSecretBytes> key{};
  static JobSecret random();
  // A key derived from text (e.g. a secret handed to every process by the launcher).
  static JobSecret from_text(std::string_view text);
};

enum class Role : std::uint16_t { Connector = 1, Listener = 2 };

struct HandshakeConfig {
  std::uint64_t job_id = 0;
  JobSecret secret;
  std::chrono::milliseconds timeout{60'000};  // for the whole handshake
  std::uint64_t identity = 0;  // ours, sent in the Hello; its meaning is the caller's
  bool relay = false;          // we are a relay and forward this connection to another end
};

// What an authenticated peer said of itself in its Hello.
struct PeerHello {
  std::uint64_t identity = 0;
  bool relay = false;  // the peer is a relay: the connection goes on beyond it
};

// Runs the handshake on a connected socket; returns what the peer said of itself once the peer
// is authenticated.
PeerHello authenticate_peer(asio::io_context& io, asio::ip::tcp::socket& socket, Role role,
                            const HandshakeConfig& config);
// The same for callers that need only the peer's identity.
std::uint64_t authenticate(asio::io_context& io, asio::ip::tcp::socket& socket, Role role,
                           const HandshakeConfig& config);

}  // namespace multilane::runtime
