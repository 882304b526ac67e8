// examples/example_util.hpp — the few lines every example shares: reading the message size
// from the command line and a byte pattern to check what arrived.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

namespace example {

// argv[1]: bytes (default `fallback`); argv[2]: algorithm (default "auto").
inline std::size_t size_argument(int argc, char** argv, std::size_t fallback) {
  return argc > 1 ? std::strtoull(argv[1], nullptr, 10) : fallback;
}
inline std::string algorithm_argument(int argc, char** argv) {
  return argc > 2 ? argv[2] : "auto";
}

// Byte `i` of rank `rank`'s data: different for every rank and position.
inline std::byte value(int rank, std::size_t i) {
  return static_cast<std::byte>((i * 7 + static_cast<std::size_t>(rank) * 31 + (i >> 8)) & 0xff);
}

inline std::vector<std::byte> data_of(int rank, std::size_t size) {
  std::vector<std::byte> data(size);
  for (std::size_t i = 0; i < size; ++i) data[i] = value(rank, i);
  return data;
}

// Runs an example's body; a multilane error becomes a message and exit status 1.
inline int guarded(int (*body)(int, char**), int argc, char** argv) {
  try {
    return body(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", argv[0], e.what());
    return 1;
  }
}

// Prints one line and returns the exit status: 0 when `ok`.
inline int report(const char* what, int rank, bool ok) {
  std::printf("%s: rank %d %s\n", what, rank, ok ? "ok" : "WRONG DATA");
  return ok ? 0 : 1;
}

}  // namespace example
