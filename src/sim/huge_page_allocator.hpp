// sim/huge_page_allocator.hpp — std::vector storage on transparent huge pages for the
// simulator's big flat arrays.
//
// On a million ranks the simulator's arrays (per op, per transfer, per resource, per flow) span
// hundreds of megabytes and are accessed at random: with 4 KiB pages nearly every access
// misses the TLB as well as the cache, and first touching the memory costs one page fault per
// 4 KiB. Blocks of kHugeThreshold bytes or more are therefore mapped 2 MiB-aligned and marked
// MADV_HUGEPAGE, which Linux honours in its default "madvise" mode of transparent huge pages
// (where the kernel has none to give, the memory simply stays on small pages). Smaller blocks
// come from the ordinary heap. The memory is zero-filled by the kernel and only becomes
// resident when touched.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <new>
#include <vector>

namespace multilane::sim {

inline constexpr std::size_t kHugePage = std::size_t{2} << 20;
inline constexpr std::size_t kHugeThreshold = std::size_t{4} << 20;

// Maps `bytes` (a multiple of kHugePage) at a kHugePage-aligned address.
inline void* map_huge(std::size_t bytes) {
  void* raw =
      mmap(nullptr, bytes + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  const auto start = reinterpret_cast<std::uintptr_t>(raw);
  const std::uintptr_t aligned = (start + kHugePage - 1) & ~(kHugePage - 1);
  // Give back the unaligned head and the tail beyond the block.
  if (aligned > start) munmap(raw, aligned - start);
  const std::size_t tail = (start + bytes + kHugePage) - (aligned + bytes);
  if (tail > 0) munmap(reinterpret_cast<void*>(aligned + bytes), tail);
#ifdef MADV_HUGEPAGE
  madvise(reinterpret_cast<void*>(aligned), bytes, MADV_HUGEPAGE);  // a hint: failure is harmless
#endif
  return reinterpret_cast<void*>(aligned);
}

template <class T>
struct HugePageAllocator {
  using value_type = T;
  HugePageAllocator() = default;
  template <class U>
  HugePageAllocator(const HugePageAllocator<U>&) {}

  static std::size_t mapped_bytes(std::size_t n) {
    return (n * sizeof(T) + kHugePage - 1) & ~(kHugePage - 1);
  }
  T* allocate(std::size_t n) {
    if (n > static_cast<std::size_t>(-1) / sizeof(T) / 2) throw std::bad_array_new_length();
    if (n * sizeof(T) < kHugeThreshold) return static_cast<T*>(::operator new(n * sizeof(T)));
    return static_cast<T*>(map_huge(mapped_bytes(n)));
  }
  void deallocate(T* p, std::size_t n) {
    if (n * sizeof(T) < kHugeThreshold) {
      ::operator delete(p);
    } else {
      munmap(p, mapped_bytes(n));
    }
  }
  template <class U>
  bool operator==(const HugePageAllocator<U>&) const {
    return true;
  }
};

template <class T>
using BigVector = std::vector<T, HugePageAllocator<T>>;

}  // namespace multilane::sim
