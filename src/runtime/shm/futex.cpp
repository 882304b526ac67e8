#include "runtime/shm/futex.hpp"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>
#include <ctime>

namespace multilane::runtime::shm {

void futex_wait(std::uint32_t* word, std::uint32_t expected, std::chrono::nanoseconds timeout) {
  if (timeout.count() <= 0) return;
  timespec relative{};
  relative.tv_sec = static_cast<time_t>(timeout.count() / 1'000'000'000);
  relative.tv_nsec = static_cast<long>(timeout.count() % 1'000'000'000);
  // EAGAIN (value changed), ETIMEDOUT and EINTR all mean "look again"; nothing to report.
  syscall(SYS_futex, word, FUTEX_WAIT, expected, &relative, nullptr, 0);
}

void futex_wake_all(std::uint32_t* word) {
  syscall(SYS_futex, word, FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

}  // namespace multilane::runtime::shm
