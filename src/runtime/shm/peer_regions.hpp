// runtime/shm/peer_regions.hpp — other ranks' SharedBuffers, mapped into this process.
//
// When an exposed buffer lies in a SharedBuffer (layout.hpp's ExposedBuffer names its memfd),
// the copying rank opens that memfd through /proc/PID/fd/FD (allowed where cross-memory attach
// is), maps it whole and copies with memcpy. Mappings stay until this object goes, so a
// buffer used call after call is mapped once; at most kMaxMappings are kept (the oldest goes
// first), and one whose memfd number now names another file is replaced. A region that cannot
// be mapped is remembered as such, and the caller copies through the kernel instead.
//
// Not thread-safe: one per endpoint.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "runtime/shm/layout.hpp"

namespace multilane::runtime::shm {

class PeerRegions {
 public:
  static constexpr std::size_t kMaxMappings = 64;

  PeerRegions() = default;
  PeerRegions(PeerRegions&& other) noexcept;
  PeerRegions& operator=(PeerRegions&& other) noexcept;
  PeerRegions(const PeerRegions&) = delete;
  PeerRegions& operator=(const PeerRegions&) = delete;
  ~PeerRegions();

  // Where bytes [entry.region_offset + offset, ... + length) of the exposed buffer are mapped
  // in this process, or nullptr when the entry names no SharedBuffer, it cannot be mapped, or
  // the bytes lie outside it.
  std::byte* find(const ExposedBuffer& entry, std::uint64_t offset, std::uint64_t length);

  std::size_t mapped() const;  // regions mapped now

 private:
  struct Mapping {
    std::int32_t pid = 0;
    std::int32_t fd = -1;
    std::uint64_t inode = 0;
    std::byte* base = nullptr;  // nullptr: could not be mapped
    std::uint64_t size = 0;
  };
  Mapping& lookup(const ExposedBuffer& entry);
  static Mapping map(const ExposedBuffer& entry);
  // Unmaps one mapping and forgets it.
  void drop(std::vector<Mapping>::iterator mapping) noexcept;
  void unmap_all() noexcept;

  std::vector<Mapping> mappings_;  // oldest first
};

}  // namespace multilane::runtime::shm
