// multilane/shared_buffer.hpp — memory the other ranks of this node copy from and to directly.
//
//   multilane::SharedBuffer send(8 << 20), recv(8 << 20);
//   group.alltoall(send.bytes(), recv.bytes());   // or Communicator::alltoall, any collective
//
// Like MPI_Alloc_mem: collectives take any buffer, but where a call copies straight between two
// ranks' buffers (the shared-memory layer's single copy, docs/shared-memory.md) and the exposed
// buffer lies in a SharedBuffer, the other rank maps that memory once and copies with memcpy
// instead of asking the kernel (process_vm_readv) each time. That saves the system call and the
// page pinning (about 1.5 us per call) and runs at memcpy's bandwidth, 2-3x the kernel copy's on
// the machines of docs/performance.md. Buffers of the other kind work as before, and a rank
// that cannot map the memory falls back to the kernel copy.
//
// The memory is an anonymous memfd, mapped shared, zero-filled and page aligned: nothing appears
// in /dev/shm, and the memory goes with this object and the last rank's mapping of it (other
// ranks keep their mappings until their ShmGroup goes). Movable, not copyable; thread-safe to
// create and destroy. Throws CommunicationError when the system refuses the memory.
#pragma once

#include <cstddef>
#include <span>

namespace multilane {

class SharedBuffer {
 public:
  SharedBuffer() = default;
  explicit SharedBuffer(std::size_t size);  // 0: an empty buffer that holds no memory
  SharedBuffer(SharedBuffer&& other) noexcept;
  SharedBuffer& operator=(SharedBuffer&& other) noexcept;
  SharedBuffer(const SharedBuffer&) = delete;
  SharedBuffer& operator=(const SharedBuffer&) = delete;
  ~SharedBuffer();

  std::span<std::byte> bytes() const { return {data_, size_}; }
  std::byte* data() const { return data_; }
  std::size_t size() const { return size_; }

 private:
  void release() noexcept;

  std::byte* data_ = nullptr;
  std::size_t size_ = 0;    // as asked for
  std::size_t mapped_ = 0;  // rounded up to whole pages
  int fd_ = -1;
};

}  // namespace multilane
