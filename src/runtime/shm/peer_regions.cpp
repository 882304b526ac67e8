// runtime/shm/peer_regions.cpp — see peer_regions.hpp.
#include "runtime/shm/peer_regions.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <utility>

namespace multilane::runtime::shm {

PeerRegions::PeerRegions(PeerRegions&& other) noexcept {
  *this = std::move(other);
}

PeerRegions& PeerRegions::operator=(PeerRegions&& other) noexcept {
  if (this != &other) {
    unmap_all();
    mappings_ = std::exchange(other.mappings_, {});
  }
  return *this;
}

PeerRegions::~PeerRegions() {
  unmap_all();
}

std::byte* PeerRegions::find(const ExposedBuffer& entry, std::uint64_t offset,
                             std::uint64_t length) {
  if (entry.region_fd < 0) return nullptr;
  const Mapping& m = lookup(entry);
  const std::uint64_t start = entry.region_offset + offset;
  if (m.base == nullptr || start < offset || start > m.size || length > m.size - start) {
    return nullptr;
  }
  return m.base + start;
}

std::size_t PeerRegions::mapped() const {
  return static_cast<std::size_t>(
      std::count_if(mappings_.begin(), mappings_.end(), [](const Mapping& m) { return m.base; }));
}

PeerRegions::Mapping& PeerRegions::lookup(const ExposedBuffer& entry) {
  const auto same_fd = [&](const Mapping& m) {
    return m.pid == entry.pid && m.fd == entry.region_fd;
  };
  auto it = std::find_if(mappings_.begin(), mappings_.end(), same_fd);
  if (it != mappings_.end() && it->inode == entry.region_inode) return *it;
  if (it != mappings_.end()) drop(it);  // that memfd was closed and its number reused
  if (mappings_.size() >= kMaxMappings) drop(mappings_.begin());
  mappings_.push_back(map(entry));
  return mappings_.back();
}

PeerRegions::Mapping PeerRegions::map(const ExposedBuffer& entry) {
  Mapping m{entry.pid, entry.region_fd, entry.region_inode, nullptr, 0};
  const std::string path = fmt::format("/proc/{}/fd/{}", entry.pid, entry.region_fd);
  const int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return m;
  struct stat status {};
  // The inode check keeps a memfd number that now names another file from being mapped.
  if (fstat(fd, &status) == 0 && status.st_ino == entry.region_inode && status.st_size > 0) {
    const auto size = static_cast<std::uint64_t>(status.st_size);
    void* memory = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
    if (memory != MAP_FAILED) {
      m.base = static_cast<std::byte*>(memory);
      m.size = size;
    }
  }
  close(fd);
  return m;
}

void PeerRegions::drop(std::vector<Mapping>::iterator mapping) noexcept {
  if (mapping->base) munmap(mapping->base, mapping->size);
  mappings_.erase(mapping);
}

void PeerRegions::unmap_all() noexcept {
  for (const Mapping& m : mappings_) {
    if (m.base) munmap(m.base, m.size);
  }
  mappings_.clear();
}

}  // namespace multilane::runtime::shm
