// tests/fuzz/targets/store_protocol.cpp — the rendezvous store's headers
// (runtime/launch/launch_store_protocol.hpp) on any bytes: a request header the store accepts
// asks for no more than its limits, and a request the client encodes decodes back to its
// kind and lengths.
//
// Input: 12 bytes of request header, 8 of response header, then a key and a value split at
// the first zero byte (the client's side: it refuses keys and values out of the limits).
#include <algorithm>
#include <string_view>

#include "fuzz/fuzz_check.hpp"
#include "multilane/errors.hpp"
#include "runtime/launch/launch_store_protocol.hpp"

using namespace multilane::runtime;

namespace {

void check_request_header(const std::byte* bytes) {
  const StoreRequestHeader header =
      decode_store_request(std::span<const std::byte, kStoreRequestHeaderSize>(bytes, 12));
  const std::string problem = store_request_problem(header);
  if (!problem.empty()) return;
  FUZZ_CHECK(header.key_length >= 1 && header.key_length <= kMaxKeyBytes,
             "an accepted request's key is within the limit");
  FUZZ_CHECK(header.value_length <= kMaxValueBytes, "an accepted request's value is within it");
  const bool get = header.kind == static_cast<std::uint32_t>(StoreRequestKind::Get);
  FUZZ_CHECK(get || header.kind == static_cast<std::uint32_t>(StoreRequestKind::Put),
             "an accepted request is a put or a get");
  FUZZ_CHECK(!get || header.value_length == 0, "an accepted get carries no value");
}

void check_client_request(std::string_view rest) {
  const std::size_t split = std::min(rest.find('\0'), rest.size());
  const std::string_view key = rest.substr(0, split);
  const std::string_view value = split < rest.size() ? rest.substr(split + 1) : "";
  try {
    multilane::runtime::check_store_key(key);
    multilane::runtime::check_store_value(key, value);
  } catch (const multilane::UsageError&) {
    return;  // the client refuses it before sending anything
  }
  const std::string wire = encode_store_request(StoreRequestKind::Put, key, value);
  FUZZ_CHECK(wire.size() == kStoreRequestHeaderSize + key.size() + value.size(),
             "a request is its header, key and value");
  const StoreRequestHeader header =
      decode_store_request(std::span<const std::byte, kStoreRequestHeaderSize>(
          reinterpret_cast<const std::byte*>(wire.data()), kStoreRequestHeaderSize));
  FUZZ_CHECK(store_request_problem(header).empty(), "what a client sends, the store accepts");
  FUZZ_CHECK(header.key_length == key.size() && header.value_length == value.size(),
             "a request's header gives its key's and value's lengths");
  FUZZ_CHECK(wire.substr(kStoreRequestHeaderSize, key.size()) == key, "the key follows");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto* bytes = reinterpret_cast<const std::byte*>(data);
  if (size >= kStoreRequestHeaderSize) check_request_header(bytes);
  if (size >= kStoreRequestHeaderSize + kStoreResponseHeaderSize) {
    const StoreResponseHeader response =
        decode_store_response(std::span<const std::byte, kStoreResponseHeaderSize>(
            bytes + kStoreRequestHeaderSize, kStoreResponseHeaderSize));
    const std::string encoded =
        encode_store_response(response.status == 0 ? StoreStatus::Ok : StoreStatus::Refused, "");
    FUZZ_CHECK(encoded.size() == kStoreResponseHeaderSize, "an empty response is its header");
    const std::size_t header_bytes = kStoreRequestHeaderSize + kStoreResponseHeaderSize;
    check_client_request(
        std::string_view(reinterpret_cast<const char*>(data) + header_bytes, size - header_bytes));
  }
  return 0;
}
