// runtime/tcp/kept_bytes.hpp — a copy of the parts of a message that a sender may have to
// send again after its caller got the message back: the kept tail of a split send (the bytes
// TCP had not acknowledged when the send completed), for the striped sender
// (striped_sender.hpp).
//
// A re-sent piece always lies within one kept range: the pieces are cut from the doubtful
// parts of frames that were kept whole.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <utility>
#include <vector>

#include "runtime/tcp/byte_ranges.hpp"

namespace multilane::runtime {

class KeptBytes {
 public:
  KeptBytes() = default;
  // Copies `ranges` of `message`.
  KeptBytes(std::span<const std::byte> message, const ByteRanges& ranges) : total_(message.size()) {
    for (const ByteRange& r : ranges.ranges()) {
      const auto bytes = message.subspan(r.offset, r.length);
      kept_.emplace_back(r, std::vector<std::byte>(bytes.begin(), bytes.end()));
      bytes_ += r.length;
    }
  }

  std::uint64_t message_size() const { return total_; }
  // The parts of `ranges` that are kept: what a re-send of the tail can send. A doubtful range
  // outside them is left to TCP, which still holds it on the stream that wrote it: a re-send
  // only saves waiting for that stream's retransmission.
  ByteRanges kept_part(const ByteRanges& ranges) const {
    ByteRanges out;
    for (const ByteRange& r : ranges.ranges()) {
      for (const auto& [where, data] : kept_) {
        const std::uint64_t begin = std::max(r.offset, where.offset);
        const std::uint64_t end = std::min(r.end(), where.end());
        if (begin < end) out.add(begin, end - begin);
      }
    }
    return out;
  }
  std::uint64_t bytes() const { return bytes_; }  // kept, in all
  // The kept bytes of `range`, which lies within one kept range.
  std::span<const std::byte> of(const ByteRange& range) const {
    for (const auto& [where, data] : kept_) {
      if (range.offset >= where.offset && range.end() <= where.end()) {
        return std::span(data).subspan(range.offset - where.offset, range.length);
      }
    }
    throw std::logic_error("a re-sent range of a kept tail is not kept");
  }

 private:
  std::uint64_t total_ = 0;
  std::uint64_t bytes_ = 0;
  std::vector<std::pair<ByteRange, std::vector<std::byte>>> kept_;  // disjoint, in order
};

}  // namespace multilane::runtime
