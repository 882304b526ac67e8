// runtime/tcp/auth.cpp — the connection handshake (see auth.hpp).
#include "runtime/tcp/auth.hpp"

#include <fmt/format.h>
#include <sodium.h>

#include <string>

#include "runtime/tcp/handshake_messages.hpp"
#include "runtime/tcp/io_wait.hpp"
#include "runtime/tcp/transport_error.hpp"

namespace multilane::runtime {

static_assert(kJobSecretBytes == crypto_auth_KEYBYTES);

namespace {

void ensure_sodium() {
  if (sodium_init() < 0)
    throw TransportError(ErrorKind::resource, "libsodium failed to initialise");
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
  [[noreturn]] void fail(ErrorKind kind, std::string_view problem) {
    close();
    throw TransportError(kind, described(problem));
  }

 private:
  void check(const IoResult& result, std::string_view doing, std::string_view what) {
    switch (result.outcome) {
      case IoOutcome::Done:
        return;
      case IoOutcome::Timeout:
        fail(ErrorKind::timeout,
             fmt::format("timed out after {} {} {}", seconds_text(timeout_), doing, what));
      case IoOutcome::Closed: {
        const std::string problem =
            fmt::format("peer closed the connection while we were {} {} ({} bytes done)", doing,
                        what, result.bytes);
        if (result.bytes > 0) fail(ErrorKind::peer_gone, problem);
        close();
        throw HandshakeAbandoned(ErrorKind::peer_gone, described(problem));
      }
      case IoOutcome::Failed:
        fail(kind_of(result.error),
             fmt::format("{} {} failed: {}", doing, what, result.error.message()));
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

PeerHello authenticate_peer(asio::io_context& io, asio::ip::tcp::socket& socket, Role role,
                            const HandshakeConfig& config) {
  ensure_sodium();
  Exchange exchange(io, socket, config);
  Nonce nonce{};
  randombytes_buf(nonce.data(), nonce.size());
  const Hello own = make_hello(role, config, nonce);
  Hello peer{};
  exchange.send(own, "our hello");
  exchange.receive(peer, "the peer's hello");
  if (const Outcome problem = hello_problem(peer, role, config.job_id)) {
    exchange.fail(problem->kind, problem->text);
  }
  Proof own_proof = make_proof(config.secret, own, peer);
  Proof peer_proof{};
  exchange.send(bytes_of(own_proof), "our proof");
  exchange.receive(bytes_of(peer_proof), "the peer's proof");
  const Proof expected = make_proof(config.secret, peer, own);
  if (!proof_matches(peer_proof, expected)) {
    exchange.fail(ErrorKind::authentication, "peer failed authentication (wrong job secret?)");
  }
  return peer_of(peer);
}

std::uint64_t authenticate(asio::io_context& io, asio::ip::tcp::socket& socket, Role role,
                           const HandshakeConfig& config) {
  return authenticate_peer(io, socket, role, config).identity;
}

}  // namespace multilane::runtime
