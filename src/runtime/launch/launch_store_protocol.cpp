// runtime/launch/launch_store_protocol.cpp — encoding and checks of store messages (see the
// header).
#include "runtime/launch/launch_store_protocol.hpp"

#include <fmt/format.h>

#include <cstring>

#include "multilane/errors.hpp"
#include "runtime/tcp/le_bytes.hpp"

namespace multilane::runtime {

namespace {

std::string encode_header_and_body(std::span<const std::uint32_t> fields,
                                   std::initializer_list<std::string_view> bodies) {
  std::size_t body_size = 0;
  for (const auto body : bodies) body_size += body.size();
  std::string out(fields.size() * 4 + body_size, '\0');
  const auto bytes = std::as_writable_bytes(std::span(out.data(), out.size()));
  std::size_t pos = 0;
  for (const std::uint32_t field : fields) put_le<std::uint32_t>(bytes, pos, field);
  for (const auto body : bodies) {
    if (!body.empty()) std::memcpy(out.data() + pos, body.data(), body.size());
    pos += body.size();
  }
  return out;
}

}  // namespace

StoreRequestHeader decode_store_request(std::span<const std::byte, kStoreRequestHeaderSize> bytes) {
  std::size_t pos = 0;
  StoreRequestHeader header;
  header.kind = get_le<std::uint32_t>(bytes, pos);
  header.key_length = get_le<std::uint32_t>(bytes, pos);
  header.value_length = get_le<std::uint32_t>(bytes, pos);
  return header;
}

StoreResponseHeader decode_store_response(
    std::span<const std::byte, kStoreResponseHeaderSize> bytes) {
  std::size_t pos = 0;
  StoreResponseHeader header;
  header.status = get_le<std::uint32_t>(bytes, pos);
  header.length = get_le<std::uint32_t>(bytes, pos);
  return header;
}

std::string store_request_problem(const StoreRequestHeader& header) {
  const bool put = header.kind == static_cast<std::uint32_t>(StoreRequestKind::Put);
  const bool get = header.kind == static_cast<std::uint32_t>(StoreRequestKind::Get);
  if (!put && !get) return fmt::format("unknown request kind {}", header.kind);
  if (header.key_length == 0) return "empty key";
  if (header.key_length > kMaxKeyBytes) {
    return fmt::format("key length {} exceeds the limit of {} bytes", header.key_length,
                       kMaxKeyBytes);
  }
  if (get && header.value_length != 0) {
    return fmt::format("a get request carries a value of {} bytes", header.value_length);
  }
  if (header.value_length > kMaxValueBytes) {
    return fmt::format("value length {} exceeds the limit of {} bytes", header.value_length,
                       kMaxValueBytes);
  }
  return {};
}

std::string encode_store_request(StoreRequestKind kind, std::string_view key,
                                 std::string_view value) {
  const std::uint32_t fields[] = {static_cast<std::uint32_t>(kind),
                                  static_cast<std::uint32_t>(key.size()),
                                  static_cast<std::uint32_t>(value.size())};
  return encode_header_and_body(fields, {key, value});
}

std::string encode_store_response(StoreStatus status, std::string_view body) {
  const std::uint32_t fields[] = {static_cast<std::uint32_t>(status),
                                  static_cast<std::uint32_t>(body.size())};
  return encode_header_and_body(fields, {body});
}

void check_store_key(std::string_view key) {
  if (key.empty()) throw UsageError("a rendezvous key must not be empty");
  if (key.size() > kMaxKeyBytes) {
    throw UsageError(fmt::format("rendezvous key '{}...' is {} bytes long: the limit is {} bytes",
                                 key.substr(0, 32), key.size(), kMaxKeyBytes));
  }
}

void check_store_value(std::string_view key, std::string_view value) {
  if (value.size() > kMaxValueBytes) {
    throw UsageError(
        fmt::format("the value of rendezvous key '{}' is {} bytes: the limit is {} bytes", key,
                    value.size(), kMaxValueBytes));
  }
}

}  // namespace multilane::runtime
