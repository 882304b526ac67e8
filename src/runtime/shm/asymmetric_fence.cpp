#include "runtime/shm/asymmetric_fence.hpp"

#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace multilane::runtime::shm {
namespace {

long membarrier(int command) {
  return syscall(__NR_membarrier, command, 0U, 0);
}

bool register_once() {
  const long commands = membarrier(MEMBARRIER_CMD_QUERY);
  if (commands < 0 || (commands & MEMBARRIER_CMD_GLOBAL_EXPEDITED) == 0 ||
      (commands & MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED) == 0) {
    return false;
  }
  return membarrier(MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED) == 0;
}

}  // namespace

bool register_for_asymmetric_fence() {
  static const bool registered = register_once();
  return registered;
}

bool asymmetric_fence_heavy() {
  return membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED) == 0;
}

}  // namespace multilane::runtime::shm
