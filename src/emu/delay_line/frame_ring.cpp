#include "emu/delay_line/frame_ring.hpp"

#include <cassert>
#include <cstring>

namespace multilane::emu {

FrameRing::FrameRing(std::size_t capacity_bytes)
    : capacity_((capacity_bytes + 7) & ~std::size_t{7}),
      bytes_(new std::uint8_t[capacity_]) {}  // not zeroed: pages are touched only when used

FrameRing::Header& FrameRing::header_at(std::size_t offset) const {
  return *reinterpret_cast<Header*>(bytes_.get() + offset);
}

std::uint8_t* FrameRing::reserve(std::size_t max_len) {
  const std::size_t need = record_size(max_len);
  if (frames_ == 0) head_ = tail_ = 0;
  if (tail_ >= head_ || frames_ == 0) {
    if (capacity_ - tail_ >= need) {
      reserved_at_ = tail_;
    } else if (head_ > need) {  // wrap: the records continue at the start
      reserved_at_ = 0;
    } else {
      return nullptr;
    }
  } else if (head_ - tail_ > need) {  // strict: tail_ == head_ would read as empty
    reserved_at_ = tail_;
  } else {
    return nullptr;
  }
  return bytes_.get() + reserved_at_ + kHeader;
}

void FrameRing::commit(std::size_t len, std::int64_t due_ns) {
  if (reserved_at_ != tail_ && capacity_ - tail_ >= kHeader) {
    header_at(tail_) = {0, 1, 0};  // the reader jumps to 0 from here
  }
  header_at(reserved_at_) = {static_cast<std::uint32_t>(len), 0, due_ns};
  tail_ = reserved_at_ + record_size(len);
  ++frames_;
}

std::int64_t FrameRing::front_due_ns() const {
  return header_at(head_).due_ns;
}

std::span<const std::uint8_t> FrameRing::front() const {
  return {bytes_.get() + head_ + kHeader, header_at(head_).len};
}

void FrameRing::pop() {
  assert(frames_ > 0);
  head_ += record_size(header_at(head_).len);
  --frames_;
  if (frames_ == 0) {
    head_ = tail_ = 0;
  } else if (capacity_ - head_ < kHeader || header_at(head_).wrap) {
    head_ = 0;
  }
}

}  // namespace multilane::emu
