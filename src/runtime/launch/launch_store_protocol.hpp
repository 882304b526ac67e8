// runtime/launch/launch_store_protocol.hpp — the rendezvous key-value store's messages on the wire.
//
// After the connection handshake (auth.hpp) a client sends requests and the server answers
// each with one response, in order; one request at a time per connection. All integers are
// little-endian.
//
//   request:  u32 kind (1 put, 2 get), u32 key length, u32 value length (0 for get),
//             key bytes, value bytes
//   response: u32 status (0 ok, 1 refused), u32 length, then that many bytes: the value of a
//             get, nothing for a put, the reason when refused
//
// A get of a key nobody has put yet is answered only once some client puts it; the client
// bounds its own wait and closes the connection when it gives up. Sizes are bounded (keys
// 1..kMaxKeyBytes, values up to kMaxValueBytes): a header announcing more is refused and the
// connection closed, so a stranger cannot make the store allocate absurd buffers.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace multilane::runtime {

inline constexpr std::uint32_t kMaxKeyBytes = 1024;
inline constexpr std::uint32_t kMaxValueBytes = 1 << 20;
// What the whole store may hold; a put beyond it is refused (the job goes on).
inline constexpr std::uint64_t kMaxStoreBytes = std::uint64_t{256} << 20;

enum class StoreRequestKind : std::uint32_t { Put = 1, Get = 2 };
enum class StoreStatus : std::uint32_t { Ok = 0, Refused = 1 };

inline constexpr std::size_t kStoreRequestHeaderSize = 12;
inline constexpr std::size_t kStoreResponseHeaderSize = 8;

struct StoreRequestHeader {
  std::uint32_t kind = 0;
  std::uint32_t key_length = 0;
  std::uint32_t value_length = 0;
};

struct StoreResponseHeader {
  std::uint32_t status = 0;
  std::uint32_t length = 0;
};

using StoreRequestBytes = std::array<std::byte, kStoreRequestHeaderSize>;
using StoreResponseBytes = std::array<std::byte, kStoreResponseHeaderSize>;

StoreRequestHeader decode_store_request(std::span<const std::byte, kStoreRequestHeaderSize> bytes);
StoreResponseHeader decode_store_response(
    std::span<const std::byte, kStoreResponseHeaderSize> bytes);

// What is wrong with a request header ("unknown request kind 7", "key length 5000 exceeds the
// limit of 1024 bytes"), or "" when it is acceptable.
std::string store_request_problem(const StoreRequestHeader& header);

// A whole request / response, header and body, ready to be written.
std::string encode_store_request(StoreRequestKind kind, std::string_view key,
                                 std::string_view value);
std::string encode_store_response(StoreStatus status, std::string_view body);

// Throws UsageError when a key or value is out of the limits above (checked by clients before
// anything is sent).
void check_store_key(std::string_view key);
void check_store_value(std::string_view key, std::string_view value);

}  // namespace multilane::runtime
