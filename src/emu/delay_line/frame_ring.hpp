// emu/delay_line/frame_ring.hpp — frames held by one WAN direction, oldest first.
//
// One preallocated byte ring of variable-length records (a 16-byte header with the length
// and the delivery time, then the frame), so frames are read from the TAP straight into
// their place and written from it: no allocation and no copy per frame. Delivery times are
// non-decreasing (a FIFO line), so the oldest frame is always the next one due.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

namespace multilane::emu {

class FrameRing {
 public:
  explicit FrameRing(std::size_t capacity_bytes);

  // Room for a frame of up to `max_len` bytes at the tail, or nullptr when the ring is too
  // full. What is written there is kept only by a following commit().
  std::uint8_t* reserve(std::size_t max_len);
  // Keeps the `len` bytes written at the last reserve() (len <= its max_len), due at `due_ns`.
  void commit(std::size_t len, std::int64_t due_ns);

  bool empty() const { return frames_ == 0; }
  std::size_t frames() const { return frames_; }
  std::int64_t front_due_ns() const;            // !empty()
  std::span<const std::uint8_t> front() const;  // !empty()
  void pop();                                   // !empty()

 private:
  struct Header {
    std::uint32_t len;
    std::uint32_t wrap;  // 1: the records continue at offset 0
    std::int64_t due_ns;
  };
  static constexpr std::size_t kHeader = sizeof(Header);
  static std::size_t record_size(std::size_t len) {
    return kHeader + ((len + 7) & ~std::size_t{7});
  }
  Header& header_at(std::size_t offset) const;

  std::size_t capacity_;
  std::unique_ptr<std::uint8_t[]> bytes_;
  std::size_t head_ = 0;  // oldest record
  std::size_t tail_ = 0;  // where the next record goes (unless it wraps)
  std::size_t frames_ = 0;
  std::size_t reserved_at_ = 0;
};

}  // namespace multilane::emu
