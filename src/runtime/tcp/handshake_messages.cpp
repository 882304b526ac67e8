// runtime/tcp/handshake_messages.cpp — see handshake_messages.hpp.
#include "runtime/tcp/handshake_messages.hpp"

#include <fmt/format.h>
#include <sodium.h>

#include <cstring>
#include <string_view>

#include "runtime/tcp/le_bytes.hpp"
#include "runtime/tcp/wire.hpp"

namespace multilane::runtime {

static_assert(kProofSize == crypto_auth_BYTES);

namespace {

constexpr std::uint32_t kHelloMagic = 0x484c4d31;  // "1MLH" on the wire
constexpr std::string_view kProofContext = "multilane-auth-v1";
constexpr std::size_t kRoleOffset = 4 + 2;
constexpr std::size_t kIdentityOffset = 4 + 2 + 2 + 8;

}  // namespace

Hello make_hello(Role role, const HandshakeConfig& config, const Nonce& nonce) {
  Hello hello{};
  std::size_t pos = 0;
  put_le<std::uint32_t>(hello, pos, kHelloMagic);
  put_le<std::uint16_t>(hello, pos, kProtocolVersion);
  put_le<std::uint16_t>(hello, pos,
                        static_cast<std::uint16_t>(static_cast<std::uint16_t>(role) |
                                                   (config.relay ? kRelayBit : 0)));
  put_le<std::uint64_t>(hello, pos, config.job_id);
  put_le<std::uint64_t>(hello, pos, config.identity);
  std::memcpy(hello.data() + pos, nonce.data(), kNonceBytes);
  return hello;
}

Outcome hello_problem(const Hello& hello, Role own_role, std::uint64_t job_id) {
  std::size_t pos = 0;
  const auto magic = get_le<std::uint32_t>(hello, pos);
  const auto version = get_le<std::uint16_t>(hello, pos);
  const auto role = get_le<std::uint16_t>(hello, pos);
  const auto peer_job = get_le<std::uint64_t>(hello, pos);
  if (magic != kHelloMagic) {
    return Failure{ErrorKind::protocol,
                   fmt::format("not a multilane peer (bad magic 0x{:08x})", magic)};
  }
  if (version != kProtocolVersion) {
    return Failure{
        ErrorKind::authentication,
        fmt::format("peer speaks protocol version {}, expected {}", version, kProtocolVersion)};
  }
  if ((role & ~kRelayBit) == static_cast<std::uint16_t>(own_role)) {
    return Failure{ErrorKind::protocol, "peer claims our own role"};
  }
  if (peer_job != job_id) {
    return Failure{ErrorKind::authentication,
                   fmt::format("peer is in job {}, expected job {}", peer_job, job_id)};
  }
  return std::nullopt;
}

Proof make_proof(const JobSecret& secret, const Hello& first, const Hello& second) {
  std::array<unsigned char, kProofContext.size() + 2 * kHelloSize> transcript{};
  std::memcpy(transcript.data(), kProofContext.data(), kProofContext.size());
  std::memcpy(transcript.data() + kProofContext.size(), first.data(), kHelloSize);
  std::memcpy(transcript.data() + kProofContext.size() + kHelloSize, second.data(), kHelloSize);
  Proof proof{};
  crypto_auth(proof.data(), transcript.data(), transcript.size(), secret.key.data());
  return proof;
}

bool proof_matches(const Proof& got, const Proof& expected) {
  return sodium_memcmp(got.data(), expected.data(), expected.size()) == 0;
}

PeerHello peer_of(const Hello& hello) {
  std::size_t pos = kRoleOffset;
  const auto role = get_le<std::uint16_t>(hello, pos);
  pos = kIdentityOffset;
  return {get_le<std::uint64_t>(hello, pos), (role & kRelayBit) != 0};
}

}  // namespace multilane::runtime
