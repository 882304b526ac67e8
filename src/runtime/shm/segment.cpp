#include "runtime/shm/segment.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "runtime/shm/shm_error.hpp"

namespace multilane::runtime::shm {
namespace {

[[noreturn]] void fail(const SegmentName& name, const char* call, int error) {
  throw ShmError(ErrorKind::resource, fmt::format("shared-memory segment {}: {} failed: {}",
                                                  name.text(), call, std::strerror(error)));
}

// Closes a file descriptor at scope exit; a mapping does not need the descriptor.
struct FdCloser {
  int fd;
  ~FdCloser() { close(fd); }
};

std::byte* map(const SegmentName& name, int fd, std::size_t bytes) {
  void* address = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
  if (address == MAP_FAILED) fail(name, "mmap", errno);
  return static_cast<std::byte*>(address);
}

}  // namespace

ShmSegment ShmSegment::create(const SegmentName& name, std::size_t bytes) {
  const std::string text = name.text();
  const int fd = shm_open(text.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) fail(name, "shm_open (create)", errno);
  const FdCloser closer{fd};
  // posix_fallocate returns the error instead of setting errno.
  if (const int error = posix_fallocate(fd, 0, static_cast<off_t>(bytes)); error != 0) {
    shm_unlink(text.c_str());
    fail(name, "posix_fallocate", error);
  }
  try {
    return ShmSegment(name, map(name, fd, bytes), bytes);
  } catch (...) {
    shm_unlink(text.c_str());
    throw;
  }
}

std::optional<ShmSegment> ShmSegment::open(const SegmentName& name, std::size_t bytes) {
  const int fd = shm_open(name.text().c_str(), O_RDWR | O_CLOEXEC, 0);
  if (fd < 0) {
    if (errno == ENOENT) return std::nullopt;
    fail(name, "shm_open", errno);
  }
  const FdCloser closer{fd};
  struct stat status {};
  if (fstat(fd, &status) != 0) fail(name, "fstat", errno);
  // Mapping beyond the end of the object would fault with SIGBUS on first touch.
  if (static_cast<std::size_t>(status.st_size) < bytes) return std::nullopt;
  return ShmSegment(name, map(name, fd, bytes), bytes);
}

ShmSegment::ShmSegment(SegmentName name, std::byte* data, std::size_t size)
    : name_(std::move(name)), data_(data), size_(size) {}

ShmSegment::ShmSegment(ShmSegment&& other) noexcept
    : name_(other.name_),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)) {}

ShmSegment& ShmSegment::operator=(ShmSegment&& other) noexcept {
  if (this != &other) {
    unmap();
    name_ = other.name_;
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

ShmSegment::~ShmSegment() {
  unmap();
}

void ShmSegment::unmap() {
  if (data_ != nullptr) munmap(data_, size_);
  data_ = nullptr;
  size_ = 0;
}

bool ShmSegment::unlink_name() const {
  return remove_segment(name_);
}

}  // namespace multilane::runtime::shm
