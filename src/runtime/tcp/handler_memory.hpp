// runtime/tcp/handler_memory.hpp — memory for the asio operations one object has in flight,
// kept from operation to operation.
//
// asio allocates every asynchronous operation (the operation and its handler) and frees it just
// before the handler runs. It recycles that memory per thread only on a thread that is inside
// the io_context; an operation started outside it (a blocking caller that stops polling and
// hands a socket back to the reactor) would cost a malloc every call. An object that has one or
// two operations in flight at a time gives them this memory instead:
//
//   socket.async_wait(wait_read, asio::bind_allocator(memory_.allocator(), handler));
//
// Each of the kSlots blocks serves one operation of up to kBlockBytes; a larger operation, or
// one more than kSlots in flight, takes the heap as usual. Not thread-safe: the operations are
// started and completed on the thread that drives the object's io_context (one at a time).
#pragma once

#include <array>
#include <cstddef>
#include <new>

namespace multilane::runtime {

class HandlerMemory {
 public:
  static constexpr std::size_t kSlots = 2;
  static constexpr std::size_t kBlockBytes = 256;

  HandlerMemory() = default;
  HandlerMemory(const HandlerMemory&) = delete;
  HandlerMemory& operator=(const HandlerMemory&) = delete;

  void* allocate(std::size_t bytes) {
    if (bytes <= kBlockBytes) {
      for (Block& block : blocks_) {
        if (block.in_use) continue;
        block.in_use = true;
        return block.bytes;
      }
    }
    return ::operator new(bytes);
  }
  void deallocate(void* pointer) {
    for (Block& block : blocks_) {
      if (pointer != block.bytes) continue;
      block.in_use = false;
      return;
    }
    ::operator delete(pointer);
  }

  // An allocator for asio::bind_allocator() that takes its memory from here.
  template <typename T>
  class Allocator {
   public:
    using value_type = T;
    explicit Allocator(HandlerMemory& memory) : memory_(&memory) {}
    template <typename U>
    Allocator(const Allocator<U>& other) : memory_(other.memory_) {}  // NOLINT: rebinding

    T* allocate(std::size_t n) { return static_cast<T*>(memory_->allocate(sizeof(T) * n)); }
    void deallocate(T* pointer, std::size_t) { memory_->deallocate(pointer); }
    template <typename U>
    bool operator==(const Allocator<U>& other) const {
      return memory_ == other.memory_;
    }

   private:
    template <typename>
    friend class Allocator;
    HandlerMemory* memory_;
  };
  Allocator<std::byte> allocator() { return Allocator<std::byte>(*this); }

 private:
  struct Block {
    alignas(std::max_align_t) std::byte bytes[kBlockBytes];
    bool in_use = false;
  };
  std::array<Block, kSlots> blocks_{};
};

}  // namespace multilane::runtime
