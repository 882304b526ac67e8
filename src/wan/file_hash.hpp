// wan/file_hash.hpp — the end-to-end checksum of `multilane cp`: XXH3-64 (Debian's libxxhash).
//
// Both ends hash the file in order, the sender while reading, the receiver while writing; the
// receiver keeps a file only if the two digests agree. hash_file_prefix() hashes the first
// `length` bytes of an open file (what a resumed copy already has) into a hasher.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace multilane::wan {

class FileHasher {
 public:
  FileHasher();
  ~FileHasher();
  FileHasher(const FileHasher&) = delete;
  FileHasher& operator=(const FileHasher&) = delete;
  void reset();
  void update(std::span<const std::byte> bytes);
  std::uint64_t digest() const;

 private:
  void* state_;  // XXH3_state_t
};

// Reads [0, length) of the open descriptor `fd` into `hasher`; throws std::runtime_error naming
// `name` when it cannot be read.
void hash_file_prefix(int fd, std::uint64_t length, FileHasher& hasher, const std::string& name);

}  // namespace multilane::wan
