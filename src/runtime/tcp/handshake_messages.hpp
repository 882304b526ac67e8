// runtime/tcp/handshake_messages.hpp — the connection handshake's two messages as bytes,
// without a socket: what auth.cpp sends and checks (the protocol is in auth.hpp), and what its
// fuzz target feeds with any bytes (tests/fuzz/targets/handshake.cpp).
//
//   Hello: u32 magic "1MLH", u16 protocol version, u16 role (| kRelayBit), u64 job id,
//          u64 identity, kNonceBytes of nonce                                  (kHelloSize)
//   Proof: crypto_auth (HMAC-SHA512-256) keyed by the job secret over
//          "multilane-auth-v1" || the prover's Hello || the other's Hello       (kProofSize)
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "runtime/tcp/auth.hpp"

namespace multilane::runtime {

inline constexpr std::size_t kNonceBytes = 32;
inline constexpr std::size_t kHelloSize = 4 + 2 + 2 + 8 + 8 + kNonceBytes;
inline constexpr std::size_t kProofSize = 32;      // crypto_auth_BYTES
inline constexpr std::uint16_t kRelayBit = 0x100;  // in the role field: the speaker is a relay

using Hello = std::array<std::byte, kHelloSize>;
using Proof = std::array<unsigned char, kProofSize>;
using Nonce = std::array<std::byte, kNonceBytes>;

// Our Hello, with `nonce` (fresh per connection: randombytes_buf, in auth.cpp).
Hello make_hello(Role role, const HandshakeConfig& config, const Nonce& nonce);
// What is wrong with the peer's Hello for a connection of ours in `own_role` and job `job_id`
// ("peer is in job 5, expected job 7"), or nullopt: bytes that are no Hello are a protocol
// failure; another version or job fails authentication.
Outcome hello_problem(const Hello& hello, Role own_role, std::uint64_t job_id);
// The proof the side that sent `first` owes.
Proof make_proof(const JobSecret& secret, const Hello& first, const Hello& second);
// Whether `got` is `expected`, in constant time.
bool proof_matches(const Proof& got, const Proof& expected);
// What the peer said of itself in its Hello.
PeerHello peer_of(const Hello& hello);

}  // namespace multilane::runtime
