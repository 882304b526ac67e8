// tests/fuzz/targets/frame_header.cpp — decode_frame_header() (runtime/tcp/wire.hpp) on any
// 64 bytes: it never fails but with a sentence, and a header it accepts is within the check's
// limits and encodes back to the same header.
//
// Input: the 64 header bytes; the next 8, if any, are the receiver's job id (else the
// header's own, so that the job check passes and the checks behind it are reached); the next
// 8, if any, its largest message.
#include <algorithm>
#include <cstring>

#include "fuzz/fuzz_check.hpp"
#include "runtime/tcp/wire.hpp"

using namespace multilane::runtime;

namespace {

std::uint64_t read_u64(const std::uint8_t* at) {
  std::uint64_t value = 0;
  std::memcpy(&value, at, sizeof value);
  return value;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < kFrameHeaderSize) return 0;
  FrameBytes bytes;
  std::memcpy(bytes.data(), data, kFrameHeaderSize);
  FrameCheck check{.job_id = read_u64(data + 8)};
  if (size >= kFrameHeaderSize + 8) check.job_id = read_u64(data + kFrameHeaderSize);
  if (size >= kFrameHeaderSize + 16) check.max_message = read_u64(data + kFrameHeaderSize + 8);
  const FrameDecode decoded = decode_frame_header(bytes, check, "fuzz:1");
  if (!decoded.header) {
    FUZZ_CHECK(decoded.error.rfind("frame from fuzz:1: ", 0) == 0,
               "a refused header is explained in a sentence naming the peer");
    return 0;
  }
  const FrameHeader& h = *decoded.header;
  FUZZ_CHECK(decoded.error.empty(), "an accepted header carries no error");
  FUZZ_CHECK(h.job_id == check.job_id, "an accepted header is of the receiver's job");
  FUZZ_CHECK(h.total <= check.max_message, "an accepted message is within the limit");
  FUZZ_CHECK(h.offset <= h.total && h.length <= h.total - h.offset,
             "an accepted chunk lies inside its message");
  FUZZ_CHECK((h.flags & ~kKnownFrameFlags) == 0, "an accepted header has known flags only");
  const FrameBytes again = encode_frame_header(h);
  const FrameDecode round = decode_frame_header(again, check, "fuzz:1");
  FUZZ_CHECK(round.header && *round.header == h, "an accepted header encodes back to itself");
  return 0;
}
