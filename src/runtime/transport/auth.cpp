// runtime/transport/auth.cpp — the connection handshake (see auth.hpp).
#include "runtime/transport/auth.hpp"

#include <fmt/format.h>
#include <sodium.h>

#include <cstring>
#include <string>

#include "runtime/transport/io_wait.hpp"
#include "runtime/transport/le_bytes.hpp"
#include "runtime/transport/transport_error.hpp"
#include "runtime/transport/wire.hpp"

namespace multilane::runtime {

static_assert(kJobSecretBytes == crypto_auth_KEYBYTES);

namespace {

constexpr std::uint32_t kHelloMagic = 0x484c4d31;  // "1MLH" on the wire
constexpr std::size_t kNonceBytes = 32;
constexpr std::size_t kHelloSize = 4 + 2 + 2 + 8 + 8 + kNonceBytes;
constexpr std::string_view kProofContext = "multilane-auth-v1";
constexpr std::uint16_t kRelayBit = 0x100;  // in the role field: the speaker is a relay
constexpr std::size_t kRoleOffset = 4 + 2;
constexpr std::size_t kIdentityOffset = 4 + 2 + 2 + 8;

using Hello = std::array<std::byte, kHelloSize>;
using Proof = std::array<unsigned char, crypto_auth_BYTES>;

void ensure_sodium() {
  if (sodium_init() < 0) throw TransportError("libsodium failed to initialise");
}

Hello make_hello(Role role, const HandshakeConfig& config) {
  Hello hello{};
  std::size_t pos = 0;
  put_le<std::uint32_t>(hello, pos, kHelloMagic);
  put_le<std::uint16_t>(hello, pos, kProtocolVersion);
  put_le<std::uint16_t>(hello, pos,
                        static_cast<std::uint16_t>(static_cast<std::uint16_t>(role) |
                                                   (config.relay ? kRelayBit : 0)));
  put_le<std::uint64_t>(hello, pos, config.job_id);
  put_le<std::uint64_t>(hello, pos, config.identity);
  randombytes_buf(hello.data() + pos, kNonceBytes);
  return hello;
}

// What is wrong with the peer's Hello, or "".
std::string hello_problem(const Hello& hello, Role own_role, std::uint64_t job_id) {
  std::size_t pos = 0;
  const auto magic = get_le<std::uint32_t>(hello, pos);
  const auto version = get_le<std::uint16_t>(hello, pos);
  const auto role = get_le<std::uint16_t>(hello, pos);
  const auto peer_job = get_le<std::uint64_t>(hello, pos);
  if (magic != kHelloMagic) return fmt::format("not a multilane peer (bad magic 0x{:08x})", magic);
  if (version != kProtocolVersion) {
    return fmt::format("peer speaks protocol version {}, expected {}", version, kProtocolVersion);
  }
  if ((role & ~kRelayBit) == static_cast<std::uint16_t>(own_role)) {
    return "peer claims our own role";
  }
  if (peer_job != job_id)
    return fmt::format("peer is in job {}, expected job {}", peer_job, job_id);
  return {};
}

// The proof the side that sent `first` owes: crypto_auth over context || first || second.
Proof make_proof(const JobSecret& secret, const Hello& first, const Hello& second) {
  std::array<unsigned char, kProofContext.size() + 2 * kHelloSize> transcript{};
  std::memcpy(transcript.data(), kProofContext.data(), kProofContext.size());
  std::memcpy(transcript.data() + kProofContext.size(), first.data(), kHelloSize);
  std::memcpy(transcript.data() + kProofContext.size() + kHelloSize, second.data(), kHelloSize);
  Proof proof{};
  crypto_auth(proof.data(), transcript.data(), transcript.size(), secret.key.data());
  return proof;
}

// One step of the handshake on the wire; throws with `what` named on failure.
class Exchange {
 public:
  Exchange(asio::io_context& io, asio::ip::tcp::socket& socket, const HandshakeConfig& config)
      : io_(io),
        socket_(socket),
        peer_(peer_name(socket)),
        timeout_(config.timeout),
        deadline_(Clock::now() + config.timeout) {}

  void send(std::span<const std::byte> bytes, std::string_view what) {
    check(write_all(io_, socket_, bytes, deadline_), "sending", what);
  }
  void receive(std::span<std::byte> bytes, std::string_view what) {
    check(read_exact(io_, socket_, bytes, deadline_), "waiting for", what);
  }
  [[noreturn]] void fail(std::string_view problem) {
    close();
    throw TransportError(described(problem));
  }

 private:
  void check(const IoResult& result, std::string_view doing, std::string_view what) {
    switch (result.outcome) {
      case IoOutcome::Done:
        return;
      case IoOutcome::Timeout:
        fail(fmt::format("timed out after {} {} {}", seconds_text(timeout_), doing, what));
      case IoOutcome::Closed: {
        const std::string problem =
            fmt::format("peer closed the connection while we were {} {} ({} bytes done)", doing,
                        what, result.bytes);
        if (result.bytes > 0) fail(problem);
        close();
        throw HandshakeAbandoned(described(problem));
      }
      case IoOutcome::Failed:
        fail(fmt::format("{} {} failed: {}", doing, what, result.error.message()));
    }
  }

  void close() {
    asio::error_code ignored;
    socket_.close(ignored);
  }
  std::string described(std::string_view problem) const {
    return fmt::format("handshake with {}: {}", peer_, problem);
  }

  asio::io_context& io_;
  asio::ip::tcp::socket& socket_;
  std::string peer_;
  std::chrono::milliseconds timeout_;
  Clock::time_point deadline_;
};

template <typename Array>
std::span<std::byte> bytes_of(Array& a) {
  return std::as_writable_bytes(std::span(a));
}

}  // namespace

JobSecret JobSecret::random() {
  ensure_sodium();
  JobSecret secret;
  crypto_auth_keygen(secret.key.data());
  return secret;
}

JobSecret JobSecret::from_text(std::string_view text) {
  ensure_sodium();
  JobSecret secret;
  crypto_generichash(secret.key.data(), secret.key.size(),
                     reinterpret_cast<const unsigned char*>(text.data()), text.size(), nullptr, 0);
  return secret;
}

namespace {
PeerHello peer_of(const Hello& hello) {
  std::size_t pos = kRoleOffset;
  const auto role = get_le<std::uint16_t>(hello, pos);
  pos = kIdentityOffset;
  return {get_le<std::uint64_t>(hello, pos), (role & kRelayBit) != 0};
}
}  // namespace

PeerHello authenticate_peer(asio::io_context& io, asio::ip::tcp::socket& socket, Role role,
                            const HandshakeConfig& config) {
  ensure_sodium();
  Exchange exchange(io, socket, config);
  const Hello own = make_hello(role, config);
  Hello peer{};
  exchange.send(own, "our hello");
  exchange.receive(peer, "the peer's hello");
  if (auto problem = hello_problem(peer, role, config.job_id); !problem.empty()) {
    exchange.fail(problem);
  }
  Proof own_proof = make_proof(config.secret, own, peer);
  Proof peer_proof{};
  exchange.send(bytes_of(own_proof), "our proof");
  exchange.receive(bytes_of(peer_proof), "the peer's proof");
  const Proof expected = make_proof(config.secret, peer, own);
  if (sodium_memcmp(peer_proof.data(), expected.data(), expected.size()) != 0) {
    exchange.fail("peer failed authentication (wrong job secret?)");
  }
  return peer_of(peer);
}

std::uint64_t authenticate(asio::io_context& io, asio::ip::tcp::socket& socket, Role role,
                           const HandshakeConfig& config) {
  return authenticate_peer(io, socket, role, config).identity;
}

}  // namespace multilane::runtime
