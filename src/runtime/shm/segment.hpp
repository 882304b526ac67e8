// runtime/shm/segment.hpp — one mapped POSIX shared-memory object (shm_open + mmap).
//
// ShmSegment owns a mapping and unmaps it on destruction. It never removes the name by itself:
// the group decides when (runtime/shm/shm_group.hpp) with unlink_name(). create() allocates the
// object's pages up front (posix_fallocate), so a full /dev/shm is an error here instead of a
// SIGBUS on first touch, and every mapping is pre-faulted (MAP_POPULATE) so that page faults do
// not land inside timed collectives.
#pragma once

#include <cstddef>
#include <optional>

#include "runtime/shm/segment_name.hpp"

namespace multilane::runtime::shm {

class ShmSegment {
 public:
  // Creates the object exclusively (mode 0600) with `bytes` zero bytes and maps it. Throws
  // ShmError naming the segment and the system's reason (it exists already, /dev/shm is full).
  static ShmSegment create(const SegmentName& name, std::size_t bytes);
  // Maps an existing object that already has `bytes` bytes; nullopt while it does not exist
  // or its creator has not sized it yet. Throws ShmError on other failures.
  static std::optional<ShmSegment> open(const SegmentName& name, std::size_t bytes);

  ShmSegment(ShmSegment&& other) noexcept;
  ShmSegment& operator=(ShmSegment&& other) noexcept;
  ShmSegment(const ShmSegment&) = delete;
  ShmSegment& operator=(const ShmSegment&) = delete;
  ~ShmSegment();

  std::byte* data() const { return data_; }
  std::size_t size() const { return size_; }
  const SegmentName& name() const { return name_; }

  // Removes the name from /dev/shm; the mapping stays valid. False if it was gone already.
  bool unlink_name() const;

 private:
  ShmSegment(SegmentName name, std::byte* data, std::size_t size);
  void unmap();

  SegmentName name_;
  std::byte* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace multilane::runtime::shm
