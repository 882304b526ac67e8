// wan/file_protocol.hpp — the messages of `multilane cp` / `multilane serve`.
//
// One copy is one conversation over a path of N streams (a runtime StreamSet); the file's
// blocks travel as plain messages, split over the streams and written in place. In order:
//
//   client -> server   Request  file name, destination path, size, block size, --force
//   server -> client   Offer    refusal text, or how many bytes of an earlier attempt it holds
//                               (the partial file) and the XXH3-64 of those bytes
//   client -> server   Start    the offset the blocks start at: the offer's length if the
//                               client's own prefix has the same hash, else 0
//   client -> server   blocks   block-sized messages (the last one shorter), in file order
//   server -> client   Ack      one per block once written: bytes held so far, or an error
//                               (full disk, ...) after which the server ends the conversation
//   client -> server   Finish   XXH3-64 of the whole file
//   server -> client   Verdict  empty when the hashes agreed and the file was put in place,
//                               else why not
//
// The client keeps at most kCopyWindow blocks unacknowledged. Control messages are encoded
// little-endian after a u32 magic "1MLC" and a u16 kind, strings as u32 length + bytes, and are
// at most kControlLimit bytes; decoding returns std::nullopt for anything malformed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace multilane::wan {

inline constexpr std::size_t kControlLimit = 64 * 1024;
inline constexpr int kCopyWindow = 4;

struct CopyRequest {
  bool force = false;
  std::uint64_t size = 0;
  std::uint64_t block_size = 0;
  std::string path;  // where, relative to the served directory; "" or ending in '/': use name
  std::string name;  // the source file's name
  friend bool operator==(const CopyRequest&, const CopyRequest&) = default;
};

struct CopyOffer {
  std::string refusal;  // non-empty: the copy is refused, why
  std::uint64_t have = 0;
  std::uint64_t prefix_hash = 0;
  friend bool operator==(const CopyOffer&, const CopyOffer&) = default;
};

struct CopyStart {
  std::uint64_t offset = 0;
  friend bool operator==(const CopyStart&, const CopyStart&) = default;
};

struct CopyAck {
  std::uint64_t held = 0;  // bytes of the file the server holds after this block
  std::string error;       // non-empty: writing failed, the conversation ends
  friend bool operator==(const CopyAck&, const CopyAck&) = default;
};

struct CopyFinish {
  std::uint64_t hash = 0;
  friend bool operator==(const CopyFinish&, const CopyFinish&) = default;
};

struct CopyVerdict {
  std::string error;  // empty: the file is in place
  friend bool operator==(const CopyVerdict&, const CopyVerdict&) = default;
};

std::vector<std::byte> encode(const CopyRequest& m);
std::vector<std::byte> encode(const CopyOffer& m);
std::vector<std::byte> encode(const CopyStart& m);
std::vector<std::byte> encode(const CopyAck& m);
std::vector<std::byte> encode(const CopyFinish& m);
std::vector<std::byte> encode(const CopyVerdict& m);

std::optional<CopyRequest> decode_request(std::span<const std::byte> bytes);
std::optional<CopyOffer> decode_offer(std::span<const std::byte> bytes);
std::optional<CopyStart> decode_start(std::span<const std::byte> bytes);
std::optional<CopyAck> decode_ack(std::span<const std::byte> bytes);
std::optional<CopyFinish> decode_finish(std::span<const std::byte> bytes);
std::optional<CopyVerdict> decode_verdict(std::span<const std::byte> bytes);

}  // namespace multilane::wan
