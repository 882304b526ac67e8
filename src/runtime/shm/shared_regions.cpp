// runtime/shm/shared_regions.cpp — see shared_regions.hpp.
#include "runtime/shm/shared_regions.hpp"

#include <algorithm>
#include <mutex>
#include <vector>

namespace multilane::runtime::shm {
namespace {

struct Region {
  std::uintptr_t base;
  std::uint64_t size;
  int fd;
  std::uint64_t inode;
};

struct Registry {
  std::mutex mutex;
  std::vector<Region> regions;
};

// Integers, not pointers: addresses in different objects are compared.
std::uintptr_t address_of(const std::byte* p) {
  return reinterpret_cast<std::uintptr_t>(p);
}

Registry& registry() {
  static Registry* instance = new Registry;  // never destroyed: buffers may outlive statics
  return *instance;
}

}  // namespace

void register_region(const std::byte* base, std::uint64_t size, int fd, std::uint64_t inode) {
  Registry& r = registry();
  const std::lock_guard lock(r.mutex);
  r.regions.push_back({address_of(base), size, fd, inode});
}

void unregister_region(const std::byte* base) {
  Registry& r = registry();
  const std::lock_guard lock(r.mutex);
  std::erase_if(r.regions,
                [base](const Region& region) { return region.base == address_of(base); });
}

std::optional<RegionRef> find_region(const std::byte* address) {
  Registry& r = registry();
  const std::lock_guard lock(r.mutex);
  const std::uintptr_t at = address_of(address);
  for (const Region& region : r.regions) {
    if (at >= region.base && at - region.base < region.size) {
      return RegionRef{region.fd, region.inode, at - region.base};
    }
  }
  return std::nullopt;
}

}  // namespace multilane::runtime::shm
