// runtime/tcp/le_bytes.hpp — fixed-width little-endian integers in byte buffers.
//
// Wire formats (frame header, handshake) are defined little-endian so that hosts of any byte
// order interoperate; these helpers write and read one unsigned integer at a position and
// advance it. They never read or write outside the span (callers size buffers exactly).
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

namespace multilane::runtime {

// On a little-endian host a copy is the conversion; GCC does not merge the byte loop into one
// load or store, and a frame header's 64 bytes then cost hundreds of instructions each way.
template <typename T>
void put_le(std::span<std::byte> out, std::size_t& pos, T value) {
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(out.data() + pos, &value, sizeof(T));
  } else {
    for (std::size_t i = 0; i < sizeof(T); ++i) {
      out[pos + i] = static_cast<std::byte>((value >> (8 * i)) & 0xff);
    }
  }
  pos += sizeof(T);
}

template <typename T>
T get_le(std::span<const std::byte> in, std::size_t& pos) {
  T value = 0;
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(&value, in.data() + pos, sizeof(T));
  } else {
    for (std::size_t i = 0; i < sizeof(T); ++i) {
      value |= static_cast<T>(static_cast<T>(in[pos + i]) << (8 * i));
    }
  }
  pos += sizeof(T);
  return value;
}

}  // namespace multilane::runtime
