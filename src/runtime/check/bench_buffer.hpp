// runtime/check/bench_buffer.hpp — a benchmark's send or receive buffer: the application's own
// memory, or a SharedBuffer (multilane/shared_buffer.hpp, like MPI_Alloc_mem).
//
// The two kinds show the two ways an application can hand its data to the shared-memory
// layer: ordinary memory, which the other ranks of a node copy through the kernel
// (process_vm_readv), or a SharedBuffer, which they map once and copy with memcpy. Every
// collective and algorithm takes either; only where the bytes come from changes.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "multilane/shared_buffer.hpp"

namespace multilane::runtime {

enum class BenchMemory { Application, Shared };

class BenchBuffer {
 public:
  // `page_offset` >= 0 places application memory that many bytes past a page boundary (to
  // study alignment); -1 leaves it where the allocator puts it. SharedBuffers are always page
  // aligned, so they ignore it.
  BenchBuffer(std::size_t size, BenchMemory memory, long page_offset = -1);

  std::span<std::byte> bytes() const { return bytes_; }

 private:
  std::vector<std::byte> heap_;
  SharedBuffer shared_;
  std::span<std::byte> bytes_;
};

}  // namespace multilane::runtime
