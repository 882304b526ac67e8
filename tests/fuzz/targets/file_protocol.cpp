// tests/fuzz/targets/file_protocol.cpp — the control messages of `multilane cp` and
// `multilane serve` (wan/file_protocol.hpp) on any bytes: every decoder returns nothing or a
// message that encodes, within the control limit, into bytes that decode to the same message.
#include "wan/file_protocol.hpp"
#include "fuzz/fuzz_check.hpp"

using namespace multilane::wan;

namespace {

template <typename Decode>
void check(Decode decode, std::span<const std::byte> bytes) {
  const auto message = decode(bytes);
  if (!message) return;
  const std::vector<std::byte> again = encode(*message);
  FUZZ_CHECK(again.size() <= kControlLimit, "an accepted message encodes within the limit");
  const auto round = decode(again);
  FUZZ_CHECK(round && *round == *message, "an accepted message encodes back to itself");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  check(decode_request, bytes);
  check(decode_offer, bytes);
  check(decode_start, bytes);
  check(decode_ack, bytes);
  check(decode_finish, bytes);
  check(decode_verdict, bytes);
  return 0;
}
