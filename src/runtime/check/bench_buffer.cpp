// runtime/check/bench_buffer.cpp — see bench_buffer.hpp.
#include "runtime/check/bench_buffer.hpp"

#include <cstdint>

namespace multilane::runtime {

BenchBuffer::BenchBuffer(std::size_t size, BenchMemory memory, long page_offset) {
  if (memory == BenchMemory::Shared) {
    shared_ = SharedBuffer(size);
    bytes_ = shared_.bytes();
  } else if (page_offset >= 0) {
    constexpr std::uintptr_t kPage = 4096;
    heap_.resize(size + 2 * kPage);
    const auto base = reinterpret_cast<std::uintptr_t>(heap_.data());
    const std::size_t skip = (kPage - base % kPage) % kPage + static_cast<std::size_t>(page_offset);
    bytes_ = std::span(heap_).subspan(skip, size);
  } else {
    heap_.resize(size);
    bytes_ = heap_;
  }
}

}  // namespace multilane::runtime
