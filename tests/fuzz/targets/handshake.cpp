// tests/fuzz/targets/handshake.cpp — the connection handshake's checks
// (runtime/tcp/handshake_messages.hpp) on any peer Hello and proof, as a listener of job 7
// whose own Hello has a fixed nonce and whose secret is fixed (so a seed can carry a proof that
// passes, and the fuzzer mutates from there): a Hello is refused in a sentence or taken, a
// proof passes only when it is the one the secret gives, and what passes says who the peer is.
//
// Input: the peer's Hello (56 bytes), then its proof (32 bytes).
#include <cstring>

#include "fuzz/fuzz_check.hpp"
#include "runtime/tcp/handshake_messages.hpp"

using namespace multilane::runtime;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < kHelloSize) return 0;
  static const JobSecret secret = JobSecret::from_text("multilane fuzz secret");
  const HandshakeConfig config{.job_id = 7, .secret = secret, .identity = 1};
  const Hello own = make_hello(Role::Listener, config, Nonce{});
  Hello peer;
  std::memcpy(peer.data(), data, kHelloSize);
  const Outcome problem = hello_problem(peer, Role::Listener, config.job_id);
  if (problem) {
    FUZZ_CHECK(problem->text.find("peer") != std::string::npos, "a refused Hello is explained");
    FUZZ_CHECK(problem->kind == multilane::ErrorKind::protocol ||
                   problem->kind == multilane::ErrorKind::authentication,
               "a refused Hello is a protocol or an authentication failure");
    return 0;
  }
  if (size < kHelloSize + kProofSize) return 0;
  Proof proof;
  std::memcpy(proof.data(), data + kHelloSize, kProofSize);
  const Proof expected = make_proof(secret, peer, own);
  const bool passes = proof_matches(proof, expected);
  FUZZ_CHECK(passes == (std::memcmp(proof.data(), expected.data(), kProofSize) == 0),
             "a proof passes exactly when it is the expected one");
  FUZZ_CHECK(!proof_matches(make_proof(secret, own, peer), expected) ||
                 std::memcmp(own.data(), peer.data(), kHelloSize) == 0,
             "our own proof is never the one the peer owes (no reflection)");
  if (!passes) return 0;
  std::uint64_t identity = 0;  // little-endian at offset 16
  for (int i = 7; i >= 0; --i) identity = identity << 8 | data[16 + i];
  FUZZ_CHECK(peer_of(peer).identity == identity, "a peer that passes is who its Hello says");
  return 0;
}
