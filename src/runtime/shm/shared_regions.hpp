// runtime/shm/shared_regions.hpp — this process's SharedBuffers, found by address.
//
// An Expose (endpoint.cpp) asks whether the buffer it exposes starts inside a SharedBuffer
// (multilane/shared_buffer.hpp); if so it tells the other ranks which one, and they map it
// (peer_regions.hpp) instead of copying through the kernel. SharedBuffer registers itself on
// creation and removes itself on destruction. Thread-safe (one mutex; a handful of entries).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

namespace multilane::runtime::shm {

struct RegionRef {
  int fd = -1;               // the region's memfd in this process
  std::uint64_t inode = 0;   // of that memfd
  std::uint64_t offset = 0;  // of the address asked about, from the region's start
};

void register_region(const std::byte* base, std::uint64_t size, int fd, std::uint64_t inode);
void unregister_region(const std::byte* base);
// The region `address` lies in, if any.
std::optional<RegionRef> find_region(const std::byte* address);

}  // namespace multilane::runtime::shm
