// wan/file_hash.cpp — XXH3-64 over files (see file_hash.hpp).
#include "wan/file_hash.hpp"

#include <fmt/format.h>
#include <unistd.h>
#include <xxhash.h>

#include <cerrno>
#include <cstring>
#include <new>
#include <stdexcept>
#include <vector>

namespace multilane::wan {

FileHasher::FileHasher() : state_(XXH3_createState()) {
  if (state_ == nullptr) throw std::bad_alloc();
  reset();
}

FileHasher::~FileHasher() {
  XXH3_freeState(static_cast<XXH3_state_t*>(state_));
}

void FileHasher::reset() {
  XXH3_64bits_reset(static_cast<XXH3_state_t*>(state_));
}

void FileHasher::update(std::span<const std::byte> bytes) {
  XXH3_64bits_update(static_cast<XXH3_state_t*>(state_), bytes.data(), bytes.size());
}

std::uint64_t FileHasher::digest() const {
  return XXH3_64bits_digest(static_cast<const XXH3_state_t*>(state_));
}

void hash_file_prefix(int fd, std::uint64_t length, FileHasher& hasher, const std::string& name) {
  std::vector<std::byte> buffer(std::size_t{1} << 20);
  std::uint64_t done = 0;
  while (done < length) {
    const auto want =
        static_cast<std::size_t>(std::min<std::uint64_t>(buffer.size(), length - done));
    const ssize_t got = ::pread(fd, buffer.data(), want, static_cast<off_t>(done));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      throw std::runtime_error(
          fmt::format("reading {} at offset {} failed: {}", name, done,
                      got == 0 ? "the file is shorter" : std::strerror(errno)));
    }
    hasher.update({buffer.data(), static_cast<std::size_t>(got)});
    done += static_cast<std::uint64_t>(got);
  }
}

}  // namespace multilane::wan
