#include "runtime/shm/copy_bytes.hpp"

#include <cstdint>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace multilane::runtime::shm {
namespace {

// Below this, glibc copies with vector loops, which 4K aliasing hardly slows down.
constexpr std::size_t kBackwardFrom = 4096;
constexpr std::uintptr_t kPage = 4096;

// Up to kChunkedCopyLimit: 32 bytes at a time from the start, the last few bytes at once.
void copy_in_chunks(std::byte* destination, const std::byte* source, std::size_t length) {
  constexpr std::size_t kChunk = 32;
  std::size_t done = 0;
  for (; done + kChunk <= length; done += kChunk) {
    std::memcpy(destination + done, source + done, kChunk);
  }
  copy_few_bytes(destination + done, source + done, length - done);
}

#if defined(__x86_64__)
bool slowed_by_aliasing() {
  static const bool slowed = __builtin_cpu_supports("avx2") && __builtin_cpu_is("amd");
  return slowed;
}

// 128 bytes per round, from the end; the first length % 128 bytes last, by memcpy.
__attribute__((target("avx2"))) void copy_backward(std::byte* destination, const std::byte* source,
                                                   std::size_t length) {
  std::size_t end = length;
  for (; end >= 128; end -= 128) {
    const auto* from = reinterpret_cast<const __m256i*>(source + end - 128);
    auto* to = reinterpret_cast<__m256i*>(destination + end - 128);
    const __m256i d = _mm256_loadu_si256(from + 3);
    const __m256i c = _mm256_loadu_si256(from + 2);
    const __m256i b = _mm256_loadu_si256(from + 1);
    const __m256i a = _mm256_loadu_si256(from);
    _mm256_storeu_si256(to + 3, d);
    _mm256_storeu_si256(to + 2, c);
    _mm256_storeu_si256(to + 1, b);
    _mm256_storeu_si256(to, a);
  }
  std::memcpy(destination, source, end);
}
bool has_avx2() {
  static const bool has = __builtin_cpu_supports("avx2");
  return has;
}
#else
bool slowed_by_aliasing() {
  return false;
}
bool has_avx2() {
  return false;
}
void copy_backward(std::byte* destination, const std::byte* source, std::size_t length) {
  std::memcpy(destination, source, length);
}
#endif

}  // namespace

bool aliased_forward(const std::byte* destination, const std::byte* source, std::size_t length) {
  const std::uintptr_t ahead =
      (reinterpret_cast<std::uintptr_t>(destination) - reinterpret_cast<std::uintptr_t>(source)) %
      kPage;
  return length >= kBackwardFrom && ahead != 0 && ahead < kPage / 2;
}

bool cpu_copies_aliased_pairs_backward() {
  return slowed_by_aliasing();
}

bool copies_backward(const std::byte* destination, const std::byte* source, std::size_t length) {
  return cpu_copies_aliased_pairs_backward() && aliased_forward(destination, source, length);
}

void copy_bytes_backward(std::byte* destination, const std::byte* source, std::size_t length) {
  if (has_avx2()) {
    copy_backward(destination, source, length);
  } else {
    std::memcpy(destination, source, length);
  }
}

void copy_many_bytes(std::byte* destination, const std::byte* source, std::size_t length) {
  if (length <= kChunkedCopyLimit) {
    copy_in_chunks(destination, source, length);
  } else if (copies_backward(destination, source, length)) {
    copy_backward(destination, source, length);
  } else {
    std::memcpy(destination, source, length);
  }
}

}  // namespace multilane::runtime::shm
