// runtime/shm/cross_memory.cpp — see cross_memory.hpp.
#include "runtime/shm/cross_memory.hpp"

#include <sys/prctl.h>
#include <sys/uio.h>

#include <cerrno>
#include <cstring>
#include <string_view>

#include <fmt/format.h>

namespace multilane::runtime::shm {
namespace {

// The kernel may copy less than asked (a partial transfer); go on until done.
template <typename Transfer>
CrossMemoryResult copy_all(std::string_view what, pid_t pid, std::uint64_t address,
                           std::byte* local, std::uint64_t length, Transfer transfer) {
  std::uint64_t done = 0;
  while (done < length) {
    iovec mine{local + done, static_cast<std::size_t>(length - done)};
    iovec theirs{reinterpret_cast<void*>(address + done), static_cast<std::size_t>(length - done)};
    const ssize_t n = transfer(pid, &mine, 1, &theirs, 1, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int error = n == 0 ? 0 : errno;
      return {fmt::format("{} {} bytes of process {} failed after {} bytes: {}", what, length, pid,
                          done, error == 0 ? "no progress" : std::strerror(error)),
              error == ESRCH};
    }
    done += static_cast<std::uint64_t>(n);
  }
  return {};
}

}  // namespace

void allow_cross_memory_access() {
#ifdef PR_SET_PTRACER
  prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);  // EINVAL without Yama: nothing to allow
#endif
}

CrossMemoryResult read_process_memory(pid_t pid, std::uint64_t address, std::byte* into,
                                      std::uint64_t length) {
  return copy_all("reading", pid, address, into, length, process_vm_readv);
}

CrossMemoryResult write_process_memory(pid_t pid, std::uint64_t address, const std::byte* from,
                                       std::uint64_t length) {
  // process_vm_writev reads the local iovec only; the cast is for the shared helper.
  return copy_all("writing", pid, address, const_cast<std::byte*>(from), length, process_vm_writev);
}

}  // namespace multilane::runtime::shm
