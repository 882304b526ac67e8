// runtime/shm/shared_buffer.cpp — multilane::SharedBuffer (multilane/shared_buffer.hpp).
#include "multilane/shared_buffer.hpp"

#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "multilane/errors.hpp"
#include "runtime/shm/shared_regions.hpp"
#include "support/ceil_div.hpp"

namespace multilane {
namespace {

// Closes `fd` (if open) and throws, naming the call that failed and why.
[[noreturn]] void refused(std::size_t size, const char* call, int fd = -1) {
  const int error = errno;
  if (fd >= 0) close(fd);
  throw CommunicationError(
      ErrorKind::resource,
      fmt::format("shared buffer of {} bytes: {} failed: {}", size, call, std::strerror(error)));
}

std::size_t whole_pages(std::size_t size) {
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  return round_up(size, page);
}

}  // namespace

SharedBuffer::SharedBuffer(std::size_t size) : size_(size), mapped_(whole_pages(size)) {
  if (size == 0) return;
  fd_ = memfd_create("multilane-shared-buffer", MFD_CLOEXEC);
  if (fd_ < 0) refused(size, "memfd_create");
  struct stat status {};
  if (ftruncate(fd_, static_cast<off_t>(mapped_)) != 0 || fstat(fd_, &status) != 0) {
    refused(size, "sizing the memfd", fd_);
  }
  void* memory = mmap(nullptr, mapped_, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
  if (memory == MAP_FAILED) refused(size, "mmap", fd_);
  data_ = static_cast<std::byte*>(memory);
  runtime::shm::register_region(data_, mapped_, fd_, status.st_ino);
}

SharedBuffer::SharedBuffer(SharedBuffer&& other) noexcept {
  *this = std::move(other);
}

SharedBuffer& SharedBuffer::operator=(SharedBuffer&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    mapped_ = std::exchange(other.mapped_, 0);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

SharedBuffer::~SharedBuffer() {
  release();
}

void SharedBuffer::release() noexcept {
  if (data_ == nullptr) return;
  runtime::shm::unregister_region(data_);
  munmap(data_, mapped_);
  close(fd_);
  data_ = nullptr;
  size_ = mapped_ = 0;
  fd_ = -1;
}

}  // namespace multilane
