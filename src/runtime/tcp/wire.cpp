// runtime/tcp/wire.cpp — encoding and validation of frame headers (see wire.hpp).
#include "runtime/tcp/wire.hpp"

#include <fmt/format.h>

#include "runtime/tcp/le_bytes.hpp"

namespace multilane::runtime {

FrameBytes encode_frame_header(const FrameHeader& header) {
  FrameBytes bytes{};
  std::size_t pos = 0;
  put_le<std::uint32_t>(bytes, pos, kFrameMagic);
  put_le<std::uint16_t>(bytes, pos, kProtocolVersion);
  put_le<std::uint16_t>(bytes, pos, header.flags);
  for (std::uint64_t field : {header.job_id, header.sequence, header.message_id, header.offset,
                              header.length, header.total, header.signature}) {
    put_le<std::uint64_t>(bytes, pos, field);
  }
  return bytes;
}

namespace {

// The first thing wrong with a well-framed header, or "" when it is acceptable.
std::string header_problem(const FrameHeader& h, const FrameCheck& check) {
  if (h.job_id != check.job_id) {
    return fmt::format("job id {}, expected {}", h.job_id, check.job_id);
  }
  if ((h.flags & ~kKnownFrameFlags) != 0) {
    return fmt::format("unknown flags 0x{:04x}", h.flags & ~kKnownFrameFlags);
  }
  if (h.total > check.max_message) {
    return fmt::format("message length {} exceeds the limit of {} bytes", h.total,
                       check.max_message);
  }
  if (h.length > h.total) {
    return fmt::format("length {} exceeds message length {}", h.length, h.total);
  }
  // Written as a subtraction so that offset + length cannot wrap around.
  if (h.offset > h.total - h.length) {
    return fmt::format("offset {} + length {} exceeds message length {}", h.offset, h.length,
                       h.total);
  }
  return {};
}

}  // namespace

FrameDecode decode_frame_header(std::span<const std::byte, kFrameHeaderSize> bytes,
                                const FrameCheck& check, std::string_view peer) {
  std::size_t pos = 0;
  const auto magic = get_le<std::uint32_t>(bytes, pos);
  const auto version = get_le<std::uint16_t>(bytes, pos);
  auto fail = [&](const std::string& what) {
    return FrameDecode{std::nullopt, fmt::format("frame from {}: {}", peer, what)};
  };
  if (magic != kFrameMagic) {
    return fail(fmt::format("bad magic 0x{:08x} (expected 0x{:08x})", magic, kFrameMagic));
  }
  if (version != kProtocolVersion) {
    return fail(fmt::format("protocol version {}, expected {}", version, kProtocolVersion));
  }
  FrameHeader h;
  h.flags = get_le<std::uint16_t>(bytes, pos);
  for (std::uint64_t* field :
       {&h.job_id, &h.sequence, &h.message_id, &h.offset, &h.length, &h.total, &h.signature}) {
    *field = get_le<std::uint64_t>(bytes, pos);
  }
  if (auto problem = header_problem(h, check); !problem.empty()) return fail(problem);
  return FrameDecode{h, {}};
}

}  // namespace multilane::runtime
