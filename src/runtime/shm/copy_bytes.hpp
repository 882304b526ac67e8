// runtime/shm/copy_bytes.hpp — memcpy for the shared-memory layer's bulk copies, without the
// slow case of 4 KiB aliasing.
//
// A CPU guesses whether a load depends on an earlier store from the low 12 bits of their
// addresses. A forward copy whose destination lies a little ahead of its source within a page,
// (dst - src) mod 4096 in 1..2047, therefore makes its loads look as if they waited for the
// stores it has just issued ("4K aliasing"). On AMD's Zen CPUs glibc's memcpy (`rep movsb`
// from 2 KiB) then runs at a third to two thirds of its speed (glibc bug 30994, an AMD
// `rep movsb` problem). Copying such a range backward keeps every load behind the stores, at
// full speed. Intel's CPUs do not need it: there glibc's memcpy of an aliased pair is as fast
// as of any other pair and faster than the backward copy, so there copy_bytes is memcpy
// (figures: docs/shared-memory.md, "Copies that avoid 4K aliasing").
//
// Where a user's buffer lies relative to a pipeline buffer is the user's choice (a pipeline
// buffer starts at a page, a large heap block 16 bytes into one), so every copy between user
// memory and shared memory goes through here.
#pragma once

#include <cstddef>
#include <cstring>

namespace multilane::runtime::shm {

// Copies of more than a cache line (below), out of line.
void copy_many_bytes(std::byte* destination, const std::byte* source, std::size_t length);

// Up to this length, copy_many_bytes copies 32 bytes at a time from the start, and the last
// few bytes at once, instead of calling memcpy. glibc's memcpy (2.36, AVX2)
// copies 65 bytes to about 2.1 KiB with vectors that overlap at both ends and switches to
// `rep movsb` above. Out of shared memory and into it, the chunks are faster up to about
// 2.2 KiB and `rep movsb` from about 3 KiB (docs/shared-memory.md). Why the overlapping vectors
// lose here is not established; stores that straddle lines the other rank is about to read are
// a guess.
inline constexpr std::size_t kChunkedCopyLimit = 2304;

// Up to 64 bytes (a cache line, a tiny call's block) as two fixed-size copies that may
// overlap, which compile to a few moves: a call into the C library would cost more than the
// copy itself.
inline void copy_few_bytes(std::byte* destination, const std::byte* source, std::size_t length) {
  const auto two_copies = [&]<std::size_t n>() {
    std::memcpy(destination, source, n);
    std::memcpy(destination + length - n, source + length - n, n);
  };
  if (length > 32) {
    two_copies.template operator()<32>();
  } else if (length > 16) {
    two_copies.template operator()<16>();
  } else if (length >= 8) {
    two_copies.template operator()<8>();
  } else if (length >= 4) {
    two_copies.template operator()<4>();
  } else if (length > 0) {
    destination[0] = source[0];
    destination[length / 2] = source[length / 2];
    destination[length - 1] = source[length - 1];
  }
}

// Copies `length` bytes from `source` to `destination`, which must not overlap (as memcpy).
inline void copy_bytes(std::byte* destination, const std::byte* source, std::size_t length) {
  if (length <= 64) {
    copy_few_bytes(destination, source, length);
  } else {
    copy_many_bytes(destination, source, length);
  }
}

// Whether a forward copy of this pair would be 4K-aliased: at least 4 KiB (below, glibc copies
// with vector loops that aliasing hardly slows), the destination 1..2047 bytes ahead of the
// source within a page.
bool aliased_forward(const std::byte* destination, const std::byte* source, std::size_t length);
// Whether this CPU's forward copy slows down when aliased, and it can copy backward instead
// (AVX2): AMD's, as above.
bool cpu_copies_aliased_pairs_backward();
// Whether copy_bytes copies this pair backward: both of the above.
bool copies_backward(const std::byte* destination, const std::byte* source, std::size_t length);
// The backward copy itself (needs AVX2 where it is not memcpy), for copy_bytes and its tests.
void copy_bytes_backward(std::byte* destination, const std::byte* source, std::size_t length);

}  // namespace multilane::runtime::shm
